from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from django_mcp.views import McpView
from example_project.library.api import BookViewSet


router = DefaultRouter()
router.register("books", BookViewSet)


urlpatterns = [
    path("admin/", admin.site.urls),
    # The REST API that mcp.py also publishes as tools.
    path("api/", include(router.urls)),
    # The login the OAuth consent flow sends users to (LOGIN_URL); a real project uses its own.
    path("accounts/login/", LoginView.as_view(template_name="django_mcp/oauth/login.html"), name="login"),
    # OAuth metadata at the root, DOT's endpoints under oauth/ (django_mcp.oauth.urls).
    path("", include("django_mcp.oauth.urls")),
    # The MCP Server Card (SEP-2127 draft) at /mcp/server-card, for clients that discover servers.
    path("", include("django_mcp.server_card.urls")),
    # The MCP endpoint as a plain view, for WSGI servers (example_project/wsgi.py,
    # DEMO_SERVER=gunicorn scripts/demo). Under daphne, django_mcp.asgi answers /mcp before Django.
    path("mcp", McpView.as_view()),
]
