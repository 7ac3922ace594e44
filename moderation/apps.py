from django.apps import AppConfig


class ModerationConfig(AppConfig):
    name = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from maintenance import forecast
        from moderation.access.devices import device_cookie_due_on_login
        from moderation.access.sessions import session_stamp_login
        from moderation.actions import audit_purge

        user_logged_in.connect(session_stamp_login, dispatch_uid="settle-session-login")
        user_logged_in.connect(device_cookie_due_on_login, dispatch_uid="settle-device-cookie")
        forecast.purge_register(job="purge-audit-events", purge=audit_purge)
