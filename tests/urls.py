from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(template_name="django_mcp/oauth/login.html")),
    path("", include("django_mcp.oauth.urls")),
]
