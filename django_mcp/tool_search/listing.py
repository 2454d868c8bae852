"""
:class:`ToolSearch`: the hook that makes a site's ``tools/list`` small (its pinned tools, then
``search_tools`` and ``call_tool``), and :func:`enable_tool_search`, which turns it on.

Only the listing changes. Every tool stays callable by name (``tools/call`` finds it as before,
behind the same permissions), so a client that lists, searches and then calls directly works, and
so does one that calls through ``call_tool``. The other listings (resources, prompts) are untouched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ..backend import handle
from ..hooks import CallNext, Hook, Listing
from ..protocol.backend import Page
from ..protocol.context import RequestContext
from ..protocol.errors import InvalidParams, echo
from .tools import CallFoundTool, SearchTools


class ToolSearch(Hook):
    """
    Tool search on one ``site`` (:func:`enable_tool_search` installs it): ``tools/list`` gives the
    ``pinned`` tools the request may see, in the order given, then the search tool (named
    ``search_tool_name``) and the call proxy (``call_tool_name``; None: none); the search covers
    every tool the request may see and returns ``max_results`` matches unless asked otherwise.
    """

    kinds = {"tool"}

    def __init__(self, site: Any, *, pinned: Iterable[str] = (), max_results: int = 8,
                 search_tool_name: str = "search_tools", call_tool_name: str | None = "call_tool") -> None:
        if not isinstance(max_results, int) or isinstance(max_results, bool) or not 1 <= max_results <= 50:
            raise ImproperlyConfigured("Tool search: max_results must be a whole number from 1 to 50.")
        if isinstance(pinned, str):
            raise ImproperlyConfigured("Tool search: pinned is a list of tool names, not one string.")
        self.site = site
        self.pinned = tuple(pinned)
        self.max_results = max_results
        self.search_tool_name = search_tool_name
        self.call_tool_name = call_tool_name
        self.search_tool = SearchTools(self)
        self.call_tool = CallFoundTool(self) if call_tool_name else None

    def own_names(self) -> list[str]:
        """The names of the tools tool search adds, as listed: never found by a search nor called through the proxy."""
        return [self.search_tool_name, *([self.call_tool_name] if self.call_tool_name else [])]

    async def list(self, listing: Listing, call_next: CallNext) -> Page:
        # Asked of tools/list only (kinds); call_next, the full listing, is what it replaces.
        if listing.cursor:
            # The short listing is one page: a cursor can only be stale (made before tool search) or forged.
            raise InvalidParams("Invalid cursor", {"cursor": echo(listing.cursor)})
        request, items = listing.request, []
        for name in (*self.pinned, *self.own_names()):
            tool = await self.site.find("tool", name, request)
            if tool is not None:
                items.append(await self.site.definition_of(tool, handle(request)))
        return Page(items)

    async def searchable(self, request: RequestContext) -> list[dict[str, Any]]:
        """Every tool definition ``request`` may see (all pages of the full listing), but tool search's own."""
        definitions: list[dict[str, Any]] = []
        cursor: str | None = None
        own = set(self.own_names())
        while True:
            page = await self.site.page("tool", cursor, request)
            definitions.extend(item for item in page.items if item.get("name") not in own)
            cursor = page.next_cursor
            if not cursor:
                return definitions


def enable_tool_search(site: Any, **options: Any) -> ToolSearch:
    """
    Turn on tool search for ``site``: make a :class:`ToolSearch` with ``options`` (``pinned``,
    ``max_results``, ``search_tool_name``, ``call_tool_name``, as it documents), register its
    search tool and call proxy (unless ``call_tool_name=None``), and install it as the hook that
    shortens ``tools/list``. Returns the :class:`ToolSearch`.
    """
    search = ToolSearch(site, **options)
    site.add(search.search_tool)
    if search.call_tool is not None:
        site.add(search.call_tool)
    site.add_hook(search)
    return search
