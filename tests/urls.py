from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from django_mcp.views import McpView


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(template_name="django_mcp/oauth/login.html")),
    path("", include("django_mcp.oauth.urls")),
    path("", include("django_mcp.server_card.urls")),
    # The plain view: served when Django's own handlers run the project (tests/wsgi.py,
    # tests/django_asgi.py); under tests.asgi the Channels endpoint answers /mcp before Django.
    path("mcp", McpView.as_view()),
]
