"""
Django admin actions as tools (docs/admin_actions.md): a library, not an app, so nothing goes in
``INSTALLED_APPS``::

    from django_mcp.admin_actions import McpActionsMixin, register_admin_actions

    class VolumeAdmin(McpActionsMixin, admin.ModelAdmin):
        mcp_actions = ["mark_out_of_print"]

    register_admin_actions(Volume)           # in an app's mcp.py
"""

from .actions import AdminActionTool, CollectedMessages, McpActionsMixin, admin_action_tools, register_admin_actions


__all__ = ["AdminActionTool", "CollectedMessages", "McpActionsMixin", "admin_action_tools", "register_admin_actions"]
