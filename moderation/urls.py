from django.urls import path, re_path

from moderation.access import login
from moderation.console import (
    audit,
    dashboard,
    deliveries,
    entries,
    erasure,
    operations,
    posting,
    retention,
    tokens,
)

app_name = "console"

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", login.LogoutView.as_view(), name="logout"),
    path("login/code/", login.login_code, name="login-code"),
    path("2fa/", login.enrol, name="two-factor"),
    path("posting/", posting.posting, name="posting"),
    path("posting/pause", posting.posting_page_pause, name="posting-pause"),
    path("posting/resume", posting.posting_page_resume, name="posting-resume"),
    path("posting/limits", posting.posting_page_limits, name="posting-limits"),
    path("entries/", entries.entries, name="entries"),
    path("entries/<int:entry_id>/", entries.entry_thread, name="entry"),
    path("entries/<int:entry_id>/hide", entries.entry_page_hide, name="entry-hide"),
    path("entries/<int:entry_id>/unhide", entries.entry_page_unhide, name="entry-unhide"),
    path("entries/<int:entry_id>/delete", entries.entry_page_delete, name="entry-delete"),
    path("operations/", operations.operations, name="operations"),
    path("deliveries/", deliveries.deliveries, name="deliveries"),
    path("deliveries/endpoints/add", deliveries.deliveries_page_endpoint_add, name="endpoint-add"),
    path(
        "deliveries/endpoints/disable", deliveries.deliveries_page_endpoint_disable,
        name="endpoint-disable",
    ),
    path(
        "deliveries/endpoints/enable", deliveries.deliveries_page_endpoint_enable,
        name="endpoint-enable",
    ),
    path(
        "deliveries/endpoints/rotate", deliveries.deliveries_page_endpoint_rotate,
        name="endpoint-rotate",
    ),
    path(
        "deliveries/endpoints/test", deliveries.deliveries_page_endpoint_send_test,
        name="endpoint-test",
    ),
    re_path(
        r"^deliveries/(?P<delivery_id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/"
        r"(?P<action>reconcile|resend|cancel|mark-succeeded|mark-failed)$",
        deliveries.deliveries_page_delivery_action,
        name="delivery-action",
    ),
    path("tokens/", tokens.tokens, name="tokens"),
    path("tokens/issue", tokens.tokens_page_issue, name="token-issue"),
    path("tokens/revoke", tokens.tokens_page_revoke, name="token-revoke"),
    path("tokens/erase", erasure.erase, name="erase"),
    path("erasures/<int:erasure_id>/", erasure.erasure_progress, name="erasure"),
    path("retention/", retention.retention_page, name="retention"),
    path("retention/run", retention.retention_page_run, name="retention-run"),
    path("retention/policy", retention.retention_page_policy, name="retention-policy"),
    path("retention/holds", retention.retention_page_hold_add, name="hold-add"),
    path(
        "retention/holds/<int:hold_id>/release", retention.retention_page_hold_release,
        name="hold-release",
    ),
    path("audit/", audit.audit, name="audit"),
    path("audit/unlock", audit.audit_page_login_unlock, name="login-unlock"),
]
