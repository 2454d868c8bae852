"""
The site as the protocol's backend: listings page through sources with bounded work per page,
cursors are the site's own, run-time sources are listed and advertised, and lookups ask the same
permission question as listings.
"""

from typing import Any

import pytest

from django_mcp import Tool
from django_mcp.permissions import BasePermission
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.sites import McpSite
from django_mcp.sources import PrimitiveSource


# Sync tools run through database_sync_to_async, which closes the thread's old DB connections.
pytestmark = pytest.mark.django_db

def ctx() -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version="2026-07-28")


class Counting(BasePermission):
    """Counts the questions asked; hides the primitives whose number is in ``hidden``."""

    def __init__(self, hidden: set[int] | None = None) -> None:
        self.calls = 0
        self.hidden = hidden or set()

    async def has_permission(self, ctx: Any, primitive: Any) -> bool:
        self.calls += 1
        return primitive.number not in self.hidden


def numbered_site(count: int, permission: Counting) -> McpSite:
    site = McpSite()
    for number in range(count):
        tool = type(f"Tool{number}", (Tool,), {
            "name": f"tool_{number:05d}", "number": number, "permission_classes": [permission],
            "input_schema": {"type": "object"}, "call": lambda self: "ok"})
        site.register(tool)
    return site


async def walk(site: McpSite, permission: Counting) -> tuple[list[str], list[int]]:
    """Every page of tools/list: the names in order, and the permission questions each page cost."""
    names: list[str] = []
    costs: list[int] = []
    cursor = None
    while True:
        before = permission.calls
        page = await site.list_tools(cursor, ctx())
        costs.append(permission.calls - before)
        names.extend(item["name"] for item in page.items)
        cursor = page.next_cursor
        if cursor is None:
            return names, costs


async def test_ten_thousand_tools_page_with_bounded_work():
    permission = Counting()
    site = numbered_site(10_000, permission)
    site.page_size = 100
    names, costs = await walk(site, permission)
    assert names == [f"tool_{n:05d}" for n in range(10_000)]  # every one, once, in order
    assert len(costs) == 100
    # Each page asks about exactly the tools it lists: no page looks at the rest of the registry.
    assert max(costs) == 100


async def test_hidden_tools_cost_only_what_is_skipped():
    permission = Counting(hidden={n for n in range(10_000) if n % 2})
    site = numbered_site(10_000, permission)
    site.page_size = 100
    names, costs = await walk(site, permission)
    assert names == [f"tool_{n:05d}" for n in range(0, 10_000, 2)]
    assert max(costs) <= 200
    # A full page does not peek past its last item, so when only hidden tools are left after it
    # (here: tool 9999) the client gets one more, empty page; the spec allows that.
    assert len(costs) == 51 and costs[-1] == 1


async def test_a_page_that_ends_with_the_registry_has_no_cursor():
    permission = Counting()
    site = numbered_site(6, permission)
    site.page_size = 3
    first = await site.list_tools(None, ctx())
    second = await site.list_tools(first.next_cursor, ctx())
    assert [item["name"] for item in second.items] == ["tool_00003", "tool_00004", "tool_00005"]
    assert second.next_cursor is None


async def test_cursors_belong_to_their_listing():
    site = numbered_site(5, Counting())
    site.page_size = 2
    cursor = (await site.list_tools(None, ctx())).next_cursor
    with pytest.raises(InvalidParams, match="Invalid cursor"):
        await site.list_prompts(cursor, ctx())
    with pytest.raises(InvalidParams, match="Invalid cursor"):
        await site.list_tools(cursor[:-2] + "xy", ctx())
    with pytest.raises(InvalidParams, match="Invalid cursor"):
        await site.list_tools("eyJvIjowfQ", ctx())  # the old unsigned offset cursor


class RowTools(PrimitiveSource):
    """A run-time source, as a table of tools would be: empty at first, filled later."""

    kind = "tool"

    def __init__(self) -> None:
        self.rows: list[Tool] = []
        self.asked: list[Any] = []

    async def candidates(self, ctx: Any, position: Any, limit: int) -> tuple[list[tuple[Tool, Any]], bool]:
        self.asked.append((position, limit))
        start = position or 0
        batch = self.rows[start:start + limit]
        return [(tool, start + i + 1) for i, tool in enumerate(batch)], start + len(batch) < len(self.rows)

    async def lookup(self, key: str, ctx: Any) -> Tool | None:
        return next((tool for tool in self.rows if tool.name == key), None)


def row_tool(name: str) -> Tool:
    return Tool.from_function(lambda: name, name=name, input_schema={"type": "object"})


async def test_a_run_time_source_is_advertised_before_its_first_row():
    site = McpSite()
    assert "tools" not in site.capabilities(ctx())
    source = RowTools()
    site.add_source(source)
    assert site.capabilities(ctx())["tools"] == {"listChanged": True}
    assert (await site.list_tools(None, ctx())).items == []
    source.rows.append(row_tool("from_a_row"))
    assert [item["name"] for item in (await site.list_tools(None, ctx())).items] == ["from_a_row"]
    assert (await site.call_tool("from_a_row", {}, ctx()))["content"][0]["text"] == "from_a_row"


async def test_pages_cross_from_registered_tools_into_a_source():
    site = numbered_site(3, Counting())
    source = RowTools()
    source.rows.extend(row_tool(f"row_{n}") for n in range(4))
    site.add_source(source)
    site.page_size = 2
    names, cursor = [], None
    while True:
        page = await site.list_tools(cursor, ctx())
        assert len(page.items) <= 2
        names.extend(item["name"] for item in page.items)
        if (cursor := page.next_cursor) is None:
            break
    assert names == ["tool_00000", "tool_00001", "tool_00002", "row_0", "row_1", "row_2", "row_3"]
    # The source was only ever asked for what a page still needed.
    assert all(limit <= 2 for _, limit in source.asked)


async def test_lookups_ask_the_listing_question_once_per_request():
    permission = Counting(hidden={1})
    site = numbered_site(2, permission)
    request = ctx()
    assert await site.tool_input_schema("tool_00001", request) is None
    assert await site.tool_input_schema("tool_00000", request) == {"type": "object"}
    await site.call_tool("tool_00000", {}, request)
    assert permission.calls == 2  # the call reused the decision taken for the header check
    with pytest.raises(InvalidParams, match="Unknown tool: tool_00001"):
        await site.call_tool("tool_00001", {}, request)
