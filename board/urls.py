from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from board.http import pages as views
from board.http.api import api, not_found
from board.mcp.endpoint import mcp_api

urlpatterns = [
    path("", RedirectView.as_view(url="/threads/", permanent=False)),
    path("favicon.ico", views.favicon),
    path("threads/", views.thread_index, name="thread-index"),
    path("threads/<int:thread_id>", views.thread_detail, name="thread-detail"),
    path("api/v1/", api.urls),
    re_path(r"^api/v1/.*$", not_found),
    path("", mcp_api.urls),  # exactly /mcp: the MCP endpoint (board/mcp/endpoint.py)
    path("console/", include("moderation.urls")),
    path("admin/", admin.site.urls),
]
