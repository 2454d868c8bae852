"""
Template prompts over real HTTP, with the official ``mcp`` Python SDK client in both eras: file
prompts and database prompts in ``prompts/list``, ``prompts/get`` with arguments, completion, and
a staff member's edit in the admin reaching a connected client as
``notifications/prompts/list_changed`` (MCP spec 2025-11-25, server/prompts, "List Changed
Notification"; MCP spec 2026-07-28, basic/patterns/subscriptions).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.subscriptions import PromptsListChanged

from .admin_browser import AdminBrowser, create_superuser


TIMEOUT = 30
MODES = ["legacy", "2026-07-28"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@asynccontextmanager
async def connect(url: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    async with asyncio.timeout(TIMEOUT):
        async with Client(url, mode=mode, **options) as client:
            yield client


@pytest.fixture(scope="module")
def staff(sqlite_server_env: Any, live_server_mcp: Any) -> AdminBrowser:
    create_superuser(sqlite_server_env, "prompt-staff", "prompt-pw")
    browser = AdminBrowser(live_server_mcp.url)
    browser.login("prompt-staff", "prompt-pw")
    return browser


def texts(result: types.GetPromptResult) -> list[tuple[str, str]]:
    return [(m.role, m.content.text if isinstance(m.content, types.TextContent) else m.content.type)
            for m in result.messages]


async def test_list_and_get_file_and_database_prompts(live_server_mcp: Any, staff: AdminBrowser, mode: str) -> None:
    name = f"live_{mode.replace('-', '_')}"
    await asyncio.to_thread(staff.save_prompt, name, '{% load mcp_prompts %}Plan {{ topic }} for {{ user }}.'
                            '{% message "assistant" %}Planning {{ topic }}.{% endmessage %}',
                            description="Staff wrote me.", arguments='[{"name": "topic", "choices": ["owls", "oaks"]}]')
    async with connect(live_server_mcp.mcp_url, mode) as client:
        listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        greet = await client.get_prompt("testing.greet", {"person": "{{ user }}", "times": "2", "language": "fr"})
        stored = await client.get_prompt(name, {"topic": "owls"})
        language = await client.complete(types.PromptReference(type="ref/prompt", name="testing.greet"),
                                         {"name": "language", "value": "f"})
        topic = await client.complete(types.PromptReference(type="ref/prompt", name=name),
                                      {"name": "topic", "value": "o"})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("testing.greet", {})
        with pytest.raises(MCPError) as invalid:
            await client.get_prompt("testing.greet", {"person": "Ada", "times": "many"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("no.such.prompt", {})
    assert listed["testing.greet"].title == "Greet someone"
    assert [(a.name, bool(a.required)) for a in listed["testing.greet"].arguments] == [
        ("person", True), ("times", False), ("language", False)]
    assert listed[name].description == "Staff wrote me."
    assert texts(greet) == [("user", "Hello {{ user }}! (x2) (lundi, asked by AnonymousUser)"),
                            ("assistant", "Hello! How can I help?")]
    assert texts(stored) == [("user", "Plan owls for AnonymousUser."), ("assistant", "Planning owls.")]
    assert language.completion.values == ["fr"]
    assert sorted(topic.completion.values) == ["oaks", "owls"]
    assert missing.value.code == invalid.value.code == unknown.value.code == types.INVALID_PARAMS
    assert "person" in missing.value.error.message
    assert "times: Enter a whole number." in invalid.value.error.message


async def _eventually(trigger: Callable[[], Awaitable[Any]], arrived: asyncio.Event, attempts: int = 10) -> None:
    """Run ``trigger`` until ``arrived`` is set (the legacy GET stream may still be opening at first)."""
    for _ in range(attempts):
        await trigger()
        try:
            await asyncio.wait_for(arrived.wait(), 2.0)
            return
        except TimeoutError:
            continue
    raise AssertionError("notifications/prompts/list_changed never arrived")


async def admin_edit_reaches_client(mcp_url: str, staff: AdminBrowser, mode: str) -> None:
    """A staff edit in the admin (``staff`` may be another worker) reaches a client of ``mcp_url``."""
    name = f"edited_{uuid.uuid4().hex[:8]}"
    pk = await asyncio.to_thread(staff.save_prompt, name, "Version 1")
    edits = iter(range(2, 100))

    async def edit() -> None:
        await asyncio.to_thread(staff.save_prompt, name, f"Version {next(edits)}", pk=pk)

    if mode == "legacy":
        arrived = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.PromptListChangedNotification):
                arrived.set()

        async with connect(mcp_url, mode, message_handler=on_message) as client:
            await _eventually(edit, arrived)
            latest = await client.get_prompt(name, {})
    else:
        async with connect(mcp_url, mode) as client:
            async with client.listen(prompts_list_changed=True) as subscription:
                assert subscription.honored.prompts_list_changed is True
                await edit()
                event = await anext(subscription)
            assert isinstance(event, PromptsListChanged)
            latest = await client.get_prompt(name, {})
    assert texts(latest)[0][1].startswith("Version ")


async def test_a_staff_edit_in_the_admin_reaches_a_connected_client(live_server_mcp: Any, staff: AdminBrowser,
                                                                    mode: str) -> None:
    await admin_edit_reaches_client(live_server_mcp.mcp_url, staff, mode)
