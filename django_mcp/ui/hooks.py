"""
What tools look like to a client that shows views and to one that does not (ext-apps
specification, "Resource Discovery", "Visibility", "Graceful Degradation").

A client that declared the extension sees a tool's ``_meta.ui`` — ``resourceUri`` (and the flat
``ui/resourceUri`` older hosts read) and ``visibility`` — and every tool, including those only a
view should call (``visibility=["app"]``): its host keeps those from the model. A client that did
not declare it gets no view metadata and no app-only tools, listed or called: with no host in
between, nothing else would keep them from the model. Results are the same for both: a tool's
``content`` is its complete answer, the view only presents it.
"""

from __future__ import annotations

from typing import Any

from ..hooks import Hook
from .constants import LEGACY_RESOURCE_URI_KEY
from .negotiation import shows_views
from .tool_views import view_uri


def visibility_of(tool: Any) -> list[str] | None:
    """The tool's ``visibility`` option (None: the default, model and app)."""
    value = getattr(tool, "visibility", None)
    return list(value) if value is not None else None


class ViewHook(Hook):
    """Adds view metadata for clients that show views; hides app-only tools from the others."""

    kinds = {"tool"}

    async def allows(self, site: Any, primitive: Any, ctx: Any) -> bool:
        visibility = visibility_of(primitive)
        return visibility is None or "model" in visibility or shows_views(ctx.request)

    async def definition(self, site: Any, primitive: Any, definition: dict[str, Any], ctx: Any) -> dict[str, Any]:
        uri, visibility = view_uri(site, primitive), visibility_of(primitive)
        if (uri is None and visibility is None) or not shows_views(ctx.request):
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
