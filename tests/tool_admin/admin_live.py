"""
Helpers for the tool admin's live tests: a staff member changing tool rows through the admin's
own change form, and a client waiting for ``notifications/tools/list_changed`` in either era.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ToolsListChanged

from tests.stored_prompts.admin_browser import AdminBrowser


TIMEOUT = 30
MODES = ["legacy", "2026-07-28"]


class ToolStaff(AdminBrowser):
    """A logged-in staff member editing ``McpTool`` rows in the admin."""

    def row_id(self, name: str) -> int:
        status, _, page = self.open(f"/admin/django_mcp_tool_admin/mcptool/?q={name}")
        assert status == 200, page[:500]
        for pk, label in re.findall(r'href="/admin/django_mcp_tool_admin/mcptool/(\d+)/change/[^"]*">([^<]+)</a>', page):
            if label == name:
                return int(pk)
        raise AssertionError(f"no row for tool {name!r} in the admin")

    def change_tool(self, name: str, *, enabled: bool = True, rate_limit: str = "", permissions: tuple[int, ...] = (),
                    title: str = "") -> None:
        """Save the tool's change form, as a staff member does, with these values."""
        data: dict[str, Any] = {"title": title, "description": "", "annotations": "", "required_scopes": "",
                                "rate_limit": rate_limit, "log_arguments": "on", "permissions": list(permissions),
                                "_continue": "1"}
        if enabled:
            data["enabled"] = "on"
        path = f"/admin/django_mcp_tool_admin/mcptool/{self.row_id(name)}/change/"
        status, _, form = self.open(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert status == 200 and token, form[:500]
        # When Save is pressed: what the latency of list_changed is measured from.
        self.saved_at = time.monotonic()
        status, url, page = self.open(path, {"csrfmiddlewaretoken": token.group(1), **data})
        assert status == 200 and "/change/" in url and "errornote" not in page, page[:3000]


@asynccontextmanager
async def connect(url: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    async with asyncio.timeout(TIMEOUT):
        async with Client(url, mode=mode, **options) as client:
            yield client


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def change_reaches_client(mcp_url: str, mode: str, staff: ToolStaff, change: Any,
                                ) -> tuple[set[str], float]:
    """
    Connect, run ``change`` (a staff edit, possibly on another worker), wait for
    ``notifications/tools/list_changed``; the tools listed afterwards and the seconds from the
    staff member pressing Save (``staff.saved_at``, the admin's POST) to the notification's arrival.
    """
    if mode == "legacy":
        arrived = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                arrived.set()

        async with connect(mcp_url, mode, message_handler=on_message) as client:
            await tool_names(client)
            for _ in range(10):  # the legacy GET stream may still be opening at first
                await asyncio.to_thread(change)
                try:
                    await asyncio.wait_for(arrived.wait(), 2.0)
                    break
                except TimeoutError:
                    continue
            else:
                raise AssertionError("notifications/tools/list_changed never arrived")
            latency = time.monotonic() - staff.saved_at
            return await tool_names(client), latency
    async with connect(mcp_url, mode) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            assert subscription.honored.tools_list_changed is True
            await asyncio.to_thread(change)
            event = await anext(subscription)
            latency = time.monotonic() - staff.saved_at
        assert isinstance(event, ToolsListChanged)
        return await tool_names(client), latency
