from django.urls import path

from moderation import views

app_name = "console"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
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
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/issue", views.token_issue, name="token-issue"),
    path("tokens/revoke", views.token_revoke, name="token-revoke"),
    path("retention/", views.retention, name="retention"),
    path("retention/run", views.retention_run, name="retention-run"),
    path("audit/", views.audit, name="audit"),
]
