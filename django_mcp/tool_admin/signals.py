"""
Telling every worker and every connected client when what a user may call changes: a tool row
saved or deleted in the admin, its permissions or groups edited, or a user's or group's
permissions or memberships changed (MCP spec 2025-11-25, server/tools, "List Changed
Notification"). Sent once the transaction commits, so nobody re-lists before the change is
visible.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save

from ..conf import mcp_settings


logger = logging.getLogger("django_mcp.tools")

_M2M_ACTIONS = {"post_add", "post_remove", "post_clear"}


async def announce_tools_changed() -> None:
    """Every worker reads the tool rows again; every listening client re-lists its tools."""
    from ..notifications import anotify_list_changed
    from ..snapshots import announce_rows_changed

    await announce_rows_changed()
    await anotify_list_changed("tools")


def send_tools_changed() -> None:
    """Announce a change of the tool rows now, from sync code; a layer that is down is logged."""
    try:
        async_to_sync(announce_tools_changed)()
    except Exception:
        # A channel layer that is down must not undo the staff member's edit; workers read the
        # rows again within TOOL_POLICY_CACHE_SECONDS, clients at their next tools/list.
        logger.exception("Could not announce notifications/tools/list_changed")


def tools_changed(**kwargs: Any) -> None:
    """A receiver: announce after the commit (once per transaction is enough)."""
    if kwargs.get("action", "post_add") not in _M2M_ACTIONS or not mcp_settings.TOOL_ADMIN:
        return
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        # Many signals in one save (the row, then each m2m field): one announcement per transaction.
        if not any(isinstance(callback, _Announcement) for _, callback, *_ in connection.run_on_commit):
            transaction.on_commit(_Announcement())
    else:
        send_tools_changed()


class _Announcement:
    """The on-commit callback, recognisable so a transaction queues only one."""

    def __call__(self) -> None:
        send_tools_changed()


def sync_after_migrate(sender: Any, **kwargs: Any) -> None:
    """Rows for the default site's tools right after ``migrate`` (start-up for most deployments)."""
    if sender.label != "django_mcp_tool_admin" or not mcp_settings.TOOL_ADMIN:
        return
    from django.db import DatabaseError

    from ..sites import get_default_site
    from .policies import sync_tool_rows

    try:
        sync_tool_rows(get_default_site())
    except DatabaseError:
        logger.warning("Could not make the tool rows after migrate", exc_info=True)


def connect() -> None:
    """Connect the receivers (``apps.ready``)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from .models import McpTool

    post_save.connect(tools_changed, sender=McpTool, dispatch_uid="django_mcp_tool_saved")
    post_delete.connect(tools_changed, sender=McpTool, dispatch_uid="django_mcp_tool_deleted")
    for through, uid in ((McpTool.permissions.through, "tool_permissions"), (McpTool.groups.through, "tool_groups"),
                         (Group.permissions.through, "group_permissions"),
                         (get_user_model().groups.through, "user_groups"),
                         (get_user_model().user_permissions.through, "user_permissions")):
        m2m_changed.connect(tools_changed, sender=through, dispatch_uid=f"django_mcp_{uid}")
    post_migrate.connect(sync_after_migrate, dispatch_uid="django_mcp_sync_tools")
