"""
Where query tools come from (django_mcp/tools/query_source.py): a per-worker snapshot of the rows,
read once, read again when the tool rows change here or on another worker, or when it is older than
TOOL_POLICY_CACHE_SECONDS; a tool in code always wins over a row of the same name.
"""

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.test import override_settings

from django_mcp.fanout import POLICIES_CHANGED, SESSIONS_GROUP
from django_mcp.query_tools.models import McpQueryTool
from django_mcp.sites import McpSite
from django_mcp.query_tools.source import QueryToolSource
from django_mcp.query_tools.source import add_query_tool_source
from tests.query_tools.test_tools import make_data, save_row, tool_names

pytestmark = pytest.mark.django_db(transaction=True)


class CountingSource(QueryToolSource):
    """The real source, counting its reads of the rows."""

    reads = 0

    def read(self) -> Any:
        self.reads += 1
        return super().read()


@pytest.fixture
def site() -> McpSite:
    site = McpSite("query-source")
    site.add_source(CountingSource(site))
    return site


@pytest.fixture
async def bob() -> Any:
    return (await database_sync_to_async(make_data)())["bob"]


def source_of(site: McpSite) -> CountingSource:
    return next(source for source in site.sources("tool") if isinstance(source, CountingSource))


async def eventually(check: Any, seconds: float = 2.0) -> bool:
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_listings_and_lookups_read_the_rows_once_until_they_change(site, bob):
    await database_sync_to_async(save_row)(site)
    for _ in range(3):
        assert await tool_names(site, bob) == ["find_volumes"]
    assert await source_of(site).lookup("find_volumes", None) is not None
    assert source_of(site).reads == 1
    # A save on this worker is seen by the next listing, before any announcement arrives.
    await database_sync_to_async(save_row)(site, name="find_more")
    assert await tool_names(site, bob) == ["find_volumes", "find_more"]
    assert source_of(site).reads == 2


async def test_a_change_announced_by_another_worker_is_read_again(site, bob):
    await database_sync_to_async(save_row)(site)
    assert await tool_names(site, bob) == ["find_volumes"]
    # Another worker's admin disabled it: this worker's database sees it, its signals did not run.
    await McpQueryTool.objects.filter(name="find_volumes").aupdate(enabled=False)
    assert await tool_names(site, bob) == ["find_volumes"]  # the snapshot, until told
    await get_channel_layer().group_send(SESSIONS_GROUP, {"type": POLICIES_CHANGED})

    async def hidden() -> bool:
        return await tool_names(site, bob) == []

    assert await eventually(hidden)


async def test_the_snapshot_is_read_again_once_older_than_the_cache_seconds(site, bob):
    await database_sync_to_async(save_row)(site)
    with override_settings(DJANGO_MCP={"TOOL_POLICY_CACHE_SECONDS": 0.0}):
        assert await tool_names(site, bob) == ["find_volumes"]
        await McpQueryTool.objects.filter(name="find_volumes").aupdate(enabled=False)

        async def hidden() -> bool:
            # An expired snapshot is served while one read refreshes it in the background.
            return await tool_names(site, bob) == []

        assert await eventually(hidden)


async def test_a_tool_in_code_registered_later_wins_over_a_row_of_its_name(bob):
    site = McpSite("query-source-code")
    source = add_query_tool_source(site)
    await database_sync_to_async(save_row)(site)
    assert await tool_names(site, bob) == ["find_volumes"]

    @site.tool(name="find_volumes")
    def find_volumes() -> str:
        """The tool in code."""
        return "code"

    assert await source.lookup("find_volumes", None) is None
    batch, more = await source.candidates(None, None, 10)
    assert (batch, more) == ([], False)
