"""
What tools look like to clients that show views and to those that do not (ext-apps
specification, "Resource Discovery", "Visibility", "Graceful Degradation").

Every client sees a tool's ``_meta.ui`` — ``resourceUri`` (and the flat ``ui/resourceUri`` older
hosts read) and ``visibility`` — as the official SDK's ``registerAppTool`` publishes it: metadata
a client without views ignores, and hosts that show views without declaring the extension (VS
Code and ChatGPT, as reported) need. Tools only a view should call (``visibility=["app"]``) are
listed and callable only for clients that declared the extension, whose host keeps them from the
model: with no host in between, nothing else would. Results are the same for every client: a
tool's ``content`` is its complete answer, the view only presents it.
"""

from __future__ import annotations

from typing import Any

from ..hooks import Hook
from .constants import LEGACY_RESOURCE_URI_KEY
from .negotiation import may_use_app_only_tools
from .tool_views import view_uri


def visibility_of(tool: Any) -> list[str] | None:
    """The tool's ``visibility`` option (None: the default, model and app)."""
    value = getattr(tool, "visibility", None)
    return list(value) if value is not None else None


class ViewHook(Hook):
    """Adds view metadata to tools; hides app-only tools from clients that did not declare the extension."""

    kinds = {"tool"}

    async def allows(self, site: Any, primitive: Any, ctx: Any) -> bool:
        visibility = visibility_of(primitive)
        return visibility is None or "model" in visibility or may_use_app_only_tools(ctx.request)

    async def definition(self, site: Any, primitive: Any, definition: dict[str, Any], ctx: Any) -> dict[str, Any]:
        uri, visibility = view_uri(site, primitive), visibility_of(primitive)
        if uri is None and visibility is None:
            return definition
        ui: dict[str, Any] = {}
        if uri is not None:
            ui["resourceUri"] = uri
        if visibility is not None:
            ui["visibility"] = visibility
        meta = {**(definition.get("_meta") or {}), "ui": ui}
        if uri is not None:
            meta[LEGACY_RESOURCE_URI_KEY] = uri
        return {**definition, "_meta": meta}
