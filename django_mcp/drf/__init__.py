"""
Django REST framework and MCP, a library, not an app, so nothing goes in ``INSTALLED_APPS``:

- DRF views as tools (docs/tools.md, "DRF views as tools")::

    from django_mcp.drf import register_view

    register_view(BookViewSet, actions=["list", "retrieve"])   # in an app's mcp.py

- DRF credentials for MCP requests (:class:`DRFAuthentication`): the API's tokens call tools.
"""

from .authentication import DRFAuthentication
from .views import McpUserAuthentication, ViewTool, register_view, view_tools


__all__ = ["DRFAuthentication", "McpUserAuthentication", "ViewTool", "register_view", "view_tools"]
