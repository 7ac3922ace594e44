from django.urls import path, re_path

from moderation import delivery_views, login_views, retention_views, views

app_name = "console"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("login/code/", login_views.login_code, name="login-code"),
    path("2fa/", login_views.enrol, name="two-factor"),
    path("posting/", views.posting, name="posting"),
    path("posting/pause", views.posting_pause, name="posting-pause"),
    path("posting/resume", views.posting_resume, name="posting-resume"),
    path("posting/limits", views.posting_limits, name="posting-limits"),
    path("entries/", views.entries, name="entries"),
    path("entries/<int:entry_id>/", views.entry_thread, name="entry"),
    path("entries/<int:entry_id>/hide", views.entry_hide, name="entry-hide"),
    path("entries/<int:entry_id>/unhide", views.entry_unhide, name="entry-unhide"),
    path("entries/<int:entry_id>/delete", views.entry_delete, name="entry-delete"),
    path("operations/", views.operations, name="operations"),
    path("deliveries/", delivery_views.deliveries, name="deliveries"),
    path("deliveries/endpoints/add", delivery_views.endpoint_add, name="endpoint-add"),
    path("deliveries/endpoints/disable", delivery_views.endpoint_disable, name="endpoint-disable"),
    path("deliveries/endpoints/enable", delivery_views.endpoint_enable, name="endpoint-enable"),
    path("deliveries/endpoints/rotate", delivery_views.endpoint_rotate, name="endpoint-rotate"),
    path("deliveries/endpoints/test", delivery_views.endpoint_send_test, name="endpoint-test"),
    re_path(
        r"^deliveries/(?P<delivery_id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/"
        r"(?P<action>reconcile|resend|cancel|mark-succeeded|mark-failed)$",
        delivery_views.delivery_action,
        name="delivery-action",
    ),
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/issue", views.token_issue, name="token-issue"),
    path("tokens/revoke", views.token_revoke, name="token-revoke"),
    path("tokens/erase", views.erase, name="erase"),
    path("erasures/<int:erasure_id>/", views.erasure, name="erasure"),
    path("retention/", retention_views.retention_page, name="retention"),
    path("retention/run", retention_views.retention_run, name="retention-run"),
    path("retention/policy", retention_views.retention_policy, name="retention-policy"),
    path("retention/holds", retention_views.hold_add, name="hold-add"),
    path(
        "retention/holds/<int:hold_id>/release", retention_views.hold_release,
        name="hold-release",
    ),
    path("audit/", views.audit, name="audit"),
    path("audit/unlock", views.login_unlock, name="login-unlock"),
]
