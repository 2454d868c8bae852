"""
What saving and deleting a query tool tell: every worker reads the query tools again, connected
clients get ``notifications/tools/list_changed``, and the tool admin's row of the tool (where
staff restrict and rate-limit it) follows the query tool's name.
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from ..snapshots import snapshots
from ..tool_admin.models import McpTool
from ..tool_admin.signals import send_tools_changed
from .models import McpQueryTool


def _announce() -> None:
    # This worker reads the query tools again at once (a test's transaction may never commit);
    # every worker, and every listening client, learns of it once the change is committed.
    snapshots.forget()
    transaction.on_commit(send_tools_changed)


def _orphan(site: str, name: str) -> None:
    McpTool.objects.filter(site=site, name=name, source=McpTool.ADMIN).update(orphaned=True)


def _saved(sender: Any, instance: McpQueryTool, raw: bool = False, **kwargs: Any) -> None:
    if raw:
        return  # loaddata: the fixture brings its McpTool rows along
    # The McpTool row is where staff restrict and rate-limit the tool, as for tools in code.
    tool, created = McpTool.objects.get_or_create(site=instance.site, name=instance.name,
                                                  defaults={"source": McpTool.ADMIN})
    if not created and tool.orphaned and tool.source == McpTool.ADMIN:
        McpTool.objects.filter(pk=tool.pk).update(orphaned=False)
    before = getattr(instance, "_saved_as", None)
    if before is not None and before != (instance.site, instance.name):
        _orphan(*before)
    instance._saved_as = (instance.site, instance.name)
    _announce()


def _deleted(sender: Any, instance: McpQueryTool, **kwargs: Any) -> None:
    # Kept, marked orphaned, so its settings and call log stay (as for tools removed from code).
    _orphan(instance.site, instance.name)
    _announce()


def connect() -> None:
    """Connect the receivers (``apps.ready``)."""
    models.signals.post_save.connect(_saved, sender=McpQueryTool, dispatch_uid="django_mcp_query_tool_saved")
    models.signals.post_delete.connect(_deleted, sender=McpQueryTool, dispatch_uid="django_mcp_query_tool_deleted")
