"""The test site's URLs without django_mcp.server_card's: no ``/mcp/server-card``, all else as ``tests.urls``."""

from tests.urls import urlpatterns as all_urlpatterns


def includes_the_card(pattern: object) -> bool:
    return getattr(getattr(pattern, "urlconf_name", None), "__name__", None) == "django_mcp.server_card.urls"


urlpatterns = [pattern for pattern in all_urlpatterns if not includes_the_card(pattern)]
