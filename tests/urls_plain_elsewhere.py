"""A URLconf with the plain view under a prefix (tests/test_checks.py: system check django_mcp.W012)."""

from django.urls import include, path

from django_mcp.views import McpView


api = [path("mcp", McpView.as_view())]
urlpatterns = [
    path("api/v2/", include(api)),
    path("other/mcp", McpView.as_view(site=object())),  # another site's: wherever it likes
]
