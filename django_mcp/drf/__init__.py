"""
DRF views as tools (docs/tools.md, "DRF views as tools"): a library, not an app, so nothing goes
in ``INSTALLED_APPS``::

    from django_mcp.drf import register_view

    register_view(BookViewSet, actions=["list", "retrieve"])   # in an app's mcp.py
"""

from .views import McpUserAuthentication, ViewTool, register_view, view_tools


__all__ = ["McpUserAuthentication", "ViewTool", "register_view", "view_tools"]
