"""
The Server Card at ``<streamable-http-url>/server-card``, the location SEP-2127's draft reserves
for it (experimental-ext-server-card ``docs/discovery.md``, "Hosted Server Card Location"): with
``DJANGO_MCP["MCP_PATH"]`` at its default, ``/mcp/server-card``. Include it at the root::

    path("", include("django_mcp.server_card.urls")),

The path is read from the setting when the URLconf is loaded. ``django_mcp.asgi.application``
answers only ``/mcp`` itself, so this longer path reaches Django's URL routing; so it does beside
:class:`~django_mcp.views.McpView`. A second site at another endpoint routes the view itself:
``path("staff/mcp/server-card", ServerCardView.as_view(site=staff_site, endpoint="staff/mcp"))``.
"""

from django.urls import path

from ..conf import mcp_settings
from .card import CARD_SUFFIX
from .views import ServerCardView


urlpatterns = [
    path(f"{mcp_settings.MCP_PATH.strip('/')}/{CARD_SUFFIX}", ServerCardView.as_view(), name="mcp-server-card"),
]
