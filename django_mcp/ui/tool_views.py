"""
Which view a tool shows, and the views the short form makes: ``@tool(view="book_card.html")``
serves a :class:`~django_mcp.ui.views.View` of that template at ``ui://<site>/<tool name>``,
published through a source of the site's resources (the core's seam for primitives that are not
registered one by one), so it exists whatever order the apps are loaded in.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ..sources import PrimitiveSource
from .constants import SCHEME
from .views import View


logger = logging.getLogger("django_mcp.ui")


def view_option(tool: Any) -> Any:
    """The tool's ``view`` option: a template name, a ``ui://`` URI, a View class or instance, or None."""
    return getattr(tool, "view", None)


def view_uri(site: Any, tool: Any) -> str | None:
    """The ``ui://`` URI of the view ``tool`` shows on ``site``, or None."""
    option = view_option(tool)
    if option is None:
        return None
    if isinstance(option, str):
        return option if option.startswith(SCHEME) else f"{SCHEME}{site.name}/{tool.name}"
    return getattr(option, "uri", None)


class ToolViews(PrimitiveSource):
    """The views of a site's tools that name a template (``@tool(view="…html")``)."""

    kind = "resource"
    # Before the rows of model resources (100): a host prefetches views from the first page of
    # resources/list (ext-apps specification, "Resource Discovery"), not after thousands of rows.
    order = 50

    def __init__(self, site: Any) -> None:
        self.site = site
        self._made: dict[tuple[str, str], View] = {}
        self._refused: set[tuple[str, str]] = set()

    def views(self) -> list[View]:
        found = []
        for tool in self.site.tools:
            option = view_option(tool)
            if isinstance(option, str) and not option.startswith(SCHEME):
                try:
                    found.append(self._view(tool, option))
                except ImproperlyConfigured as error:
                    # A bad view_csp (system check django_mcp.E007) costs that view, not the listing.
                    if (tool.name, option) not in self._refused:
                        self._refused.add((tool.name, option))
                        logger.error("The view of the tool %r is not served: %s", tool.name, error)
        return found

    def _view(self, tool: Any, template_name: str) -> View:
        key = (tool.name, template_name)
        view = self._made.get(key)
        if view is None or view.tool is not tool:
            attributes = {"uri": f"{SCHEME}{self.site.name}/{tool.name}", "template_name": template_name,
                          "name": f"{tool.name}_view", "title": getattr(tool, "title", None) or tool.name,
                          "description": f"The view of the tool {tool.name}", "tool": tool, "site": self.site,
                          "csp": getattr(tool, "view_csp", None), "__module__": type(tool).__module__}
            view = self._made[key] = type(f"{type(tool).__name__}View", (View,), attributes)()
        return view

    def may_publish(self) -> bool:
        return any(isinstance(view_option(tool), str) for tool in self.site.tools)

    async def candidates(self, ctx: Any, position: Any, limit: int) -> tuple[list[tuple[Any, Any]], bool]:
        views = self.views()
        start = position or 0
        page = views[start:start + limit]
        return [(view, start + index + 1) for index, view in enumerate(page)], start + limit < len(views)

    async def lookup(self, key: str, ctx: Any) -> Any:
        return next((view for view in self.views() if view.uri == key), None)
