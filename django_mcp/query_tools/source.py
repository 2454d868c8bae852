"""
Where a site's query tools come from (:class:`QueryToolSource`): the enabled
:class:`~django_mcp.query_tools.models.McpQueryTool` rows of the site, each made into a
:class:`~django_mcp.query_tools.tools.QueryTool` (or a saved query), listed after the tools in code.

Every ``tools/list`` and every call of a name no code tool has consults this source, so it must
not query the database each time (a listing took about 3 ms more with the query). Each worker
keeps a snapshot of the rows in the row snapshots (:mod:`django_mcp.snapshots`): saving or
deleting a query tool announces a change of the rows to every worker (after the commit), which
forgets the snapshots, and the snapshot is read again after ``TOOL_POLICY_CACHE_SECONDS`` in any
case.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..context import Context
from ..protocol.errors import InvalidParams
from ..snapshots import snapshots
from ..sources import PrimitiveSource
from ..threads import in_thread
from .models import McpQueryTool
from .serving import remember_site
from ..tools.base import Tool

logger = logging.getLogger("django_mcp.tools")


@dataclass(frozen=True)
class Snapshot:
    """The enabled query tools of a site, in primary-key order, and by name."""

    tools: list[tuple[int, Tool]]
    by_name: dict[str, Tool]


class QueryToolSource(PrimitiveSource):
    """The enabled query tools of one site, in primary-key order, after the tools in code."""

    kind = "tool"

    def __init__(self, site: Any) -> None:
        self.site = site
        # pk → (updated, tool): a row is made into a tool once per version, on each worker.
        self._built: dict[Any, tuple[Any, Tool]] = {}
        # Made once: every listing and lookup asks for the snapshot.
        self._read_in_thread = in_thread(self.read)

    def __repr__(self) -> str:
        return f"<QueryToolSource {self.site.name!r}>"

    def tool_for(self, row: McpQueryTool) -> Tool | None:
        built = self._built.get(row.pk)
        if built is None or built[0] != row.updated:
            try:
                built = self._built[row.pk] = (row.updated, row.as_tool(self.site))
            except Exception:
                # A row the model no longer fits (a field removed since) must not break the listing.
                logger.exception("The query tool %s is not served: it no longer fits its model.", row.name)
                return None
        return built[1]

    def read(self) -> Snapshot:
        """Read the site's enabled rows (sync: runs on a pool thread)."""
        rows = list(McpQueryTool.objects.filter(site=self.site.name, enabled=True)
                    .select_related("model").order_by("pk"))
        # Rows deleted or disabled since are not kept built.
        self._built = {row.pk: self._built[row.pk] for row in rows if row.pk in self._built}
        tools = [(row.pk, tool) for row in rows if (tool := self.tool_for(row)) is not None]
        return Snapshot(tools, {tool.name: tool for _, tool in tools})

    async def snapshot(self) -> Snapshot:
        """The rows as this worker last read them (see :meth:`~django_mcp.snapshots.RowSnapshots.snapshot`)."""
        return await snapshots.snapshot(("query tools", self.site.name), self._read_in_thread)

    def in_code(self, name: str) -> bool:
        # A name a tool in code has is never served from here (the admin refuses such names too);
        # checked when serving, as tools in code may be registered after the rows were read.
        return self.site.get_registered("tool", name) is not None

    async def candidates(self, ctx: Context, position: Any, limit: int) -> tuple[list[tuple[Any, Any]], bool]:
        if position is not None and not isinstance(position, int):
            raise InvalidParams("Invalid cursor")
        batch: list[tuple[Any, Any]] = []
        for pk, tool in (await self.snapshot()).tools:
            if (position is None or pk > position) and not self.in_code(tool.name):
                if len(batch) == limit:
                    return batch, True
                batch.append((tool, pk))
        return batch, False

    async def lookup(self, key: str, ctx: Context) -> Any:
        tool = (await self.snapshot()).by_name.get(key)
        return None if tool is None or self.in_code(key) else tool


def add_query_tool_source(site: Any) -> QueryToolSource:
    """
    Serve the enabled query tools whose ``site`` is ``site.name`` on ``site``, after its own tools
    (once: the app's ``ready()`` may run again, see :meth:`~django_mcp.sites.McpSite.add_source_once`).
    """
    source = site.add_source_once(QueryToolSource(site))
    remember_site(site)
    return source
