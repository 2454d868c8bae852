"""
Run by tests/test/test_live_fixture.py in a pytest of its own, on a test database in a file: a
project's test using the live_mcp_server fixture with the official SDK client over a socket.
"""

import asyncio

import pytest
from mcp import Client


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_client_over_a_socket_sees_the_tests_rows(live_mcp_server, django_user_model, mode):
    django_user_model.objects.create_user("ada")

    async def call() -> str:
        async with asyncio.timeout(30), Client(live_mcp_server.mcp_url, mode=mode,
                                               ) as client:
            return (await client.call_tool("echo", {"text": "over a socket"})).content[0].text

    assert asyncio.run(call()) == "over a socket"
    assert live_mcp_server.url.startswith("http://127.0.0.1:")


def test_the_server_reads_the_test_database(live_mcp_server, django_user_model):
    import httpx2

    django_user_model.objects.create_user("bea", is_staff=True)
    answer = httpx2.post(live_mcp_server.mcp_url, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami",
        "X-Api-Key": "bea-key"}, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "whoami", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}}, timeout=30)
    assert answer.json()["result"]["content"][0]["text"] == "bea mcp:read mcp:write"
