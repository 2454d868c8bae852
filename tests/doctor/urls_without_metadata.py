"""The test site's URLs with django_mcp.oauth's endpoints but none of its ``/.well-known/`` documents."""

from django.contrib.auth.views import LoginView
from django.urls import include, path

from django_mcp.oauth.urls import app_name
from django_mcp.oauth.urls import urlpatterns as oauth_urlpatterns


endpoints = [pattern for pattern in oauth_urlpatterns if not str(pattern.pattern).startswith(".well-known")]

urlpatterns = [
    path("accounts/login/", LoginView.as_view(template_name="django_mcp/oauth/login.html")),
    path("", include((endpoints, app_name))),
]
