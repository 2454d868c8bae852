"""The official SDK client (mcp 2.3.0) in process through sdk_transport: eras, questions, identity, streams."""

import asyncio

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.subscriptions import ToolsListChanged

from django_mcp.notifications import anotify_list_changed
from django_mcp.test import sdk_transport


pytestmark = pytest.mark.django_db(transaction=True)

MODES = ["auto", "legacy", "2026-07-28"]


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_lists_and_calls_in_process(mode):
    async with asyncio.timeout(20):
        async with Client(sdk_transport(), mode=mode) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            assert "echo" in {tool.name for tool in (await client.list_tools()).tools}
            assert texts(await client.call_tool("echo", {"text": "hi", "times": 2})) == ["hi hi"]
            progress = []
            result = await client.call_tool("slow_steps", {"steps": 2, "delay": 0},
                                            progress_callback=lambda p, t, m: progress.append(p))
            assert texts(result) == ["done 2 steps"] and progress == [1, 2]
            with pytest.raises(MCPError):
                await client.call_tool("no_such_tool", {})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_elicitation_goes_through_the_sdk_callback(mode):
    async def on_elicit(context, params):
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with asyncio.timeout(20):
        async with Client(sdk_transport(), mode=mode, elicitation_callback=on_elicit) as client:
            assert texts(await client.call_tool("ask_name", {})) == ["Hello, Ada!"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_identity_forced_or_through_the_authentication_classes(mode, django_user_model):
    ada = await django_user_model.objects.acreate(username="ada")
    await django_user_model.objects.acreate(username="bea", is_staff=True)
    async with asyncio.timeout(20):
        async with Client(sdk_transport(user=ada, scopes=["mcp:read"]), mode=mode) as client:
            assert texts(await client.call_tool("whoami", {})) == ["ada mcp:read"]
        async with Client(sdk_transport(headers={"X-Api-Key": "bea-key"}), mode=mode) as client:
            assert texts(await client.call_tool("whoami", {})) == ["bea mcp:read mcp:write"]


async def test_list_changes_reach_the_sdk_clients_listen_stream():
    async with asyncio.timeout(20):
        async with Client(sdk_transport(), mode="2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                await anotify_list_changed("tools")
                assert isinstance(await anext(subscription), ToolsListChanged)


async def test_list_changes_reach_the_sdk_clients_get_stream():
    arrived = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            arrived.set()

    async with asyncio.timeout(20):
        async with Client(sdk_transport(), mode="legacy", message_handler=on_message) as client:
            await client.list_tools()
            # The SDK opens its GET stream in the background: announce until it hears one.
            while not arrived.is_set():
                await anotify_list_changed("tools")
                try:
                    await asyncio.wait_for(arrived.wait(), 0.2)
                except asyncio.TimeoutError:
                    pass
