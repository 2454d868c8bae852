"""
Interoperability: the official ``mcp`` Python SDK client (2.3.0) against a live daphne server.

Every test runs once per client mode (the SDK's ``mcp.Client`` modes):

- ``auto``: probes ``server/discover`` and must settle on 2026-07-28 (stateless, MCP spec 2026-07-28, basic/transports/streamable-http);
- ``legacy``: the ``initialize`` handshake at 2025-11-25 (``Mcp-Session-Id``, MCP spec 2025-11-25, basic/transports#streamable-http);
- ``2026-07-28``: adopts the modern revision directly, with the request-metadata headers.

The server is ``live_server_mcp`` (SQLite, in-memory channel layer). Fixtures come from
``tests/testapp/mcp.py``; the logging and list-changed checks use tools of
``tests/conformance_app`` (installed in ``tests.settings``) and skip if those are missing.
Every client interaction runs under ``asyncio.timeout`` so a hang fails instead of stalling CI.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPDeprecationWarning, MCPError
from mcp.client.session import ClientRequestContext
from mcp.client.subscriptions import ToolsListChanged


TIMEOUT = 20
MODES = ["auto", "legacy", "2026-07-28"]
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
MODERN_MODES = {"auto", "2026-07-28"}
SERVER_NAME = "django-mcp-tests"


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def url(live_server_mcp: Any) -> str:
    return live_server_mcp.mcp_url


@asynccontextmanager
async def connect(url: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    """An entered SDK client, the whole session bounded by ``TIMEOUT`` seconds."""
    async with asyncio.timeout(TIMEOUT):
        async with Client(url, mode=mode, **options) as client:
            yield client


async def require_tool(client: Client, name: str) -> None:
    """Skip when a conformance-app fixture the test relies on is not installed."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    if name not in names:
        pytest.skip(reason=f"tool {name!r} (tests/conformance_app) is not registered on the server")


def texts(result: types.CallToolResult | types.GetPromptResult) -> list[str]:
    if isinstance(result, types.GetPromptResult):
        return [message.content.text for message in result.messages if isinstance(message.content, types.TextContent)]
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


# --- lifecycle ---------------------------------------------------------------------------------


async def test_protocol_version_negotiated(url: str, mode: str) -> None:
    """
    Version negotiation (MCP spec 2025-11-25, basic/lifecycle#initialization; basic/versioning#backward-compatibility): one endpoint serves both eras. ``auto`` discovers
    2026-07-28 via ``server/discover``; ``legacy`` completes ``initialize`` at the latest handshake
    version 2025-11-25; a pinned 2026-07-28 client needs no handshake at all.
    """
    async with connect(url, mode) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode]
        if mode != "2026-07-28":
            # initialize (legacy) and server/discover (auto) both report the server and its capabilities;
            # a pinned client synthesizes a minimal discover result and knows neither.
            assert client.server_info is not None and client.server_info.name == SERVER_NAME
            capabilities = client.server_capabilities
            assert capabilities.tools is not None
            assert capabilities.resources is not None and capabilities.prompts is not None
            assert capabilities.completions is not None


# --- tools -------------------------------------------------------------------------------------


async def test_list_tools(url: str, mode: str) -> None:
    """
    ``tools/list`` (MCP spec 2026-07-28, server/tools): every tool has a name, its description and an object
    ``inputSchema``; ``add_numbers`` declares an ``outputSchema`` (2025-06-18+) and ``echo`` its
    ``readOnlyHint`` annotation.
    """
    async with connect(url, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"echo", "add_numbers", "slow_steps", "ask_name", "wait_forever"} <= set(tools)
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"

    echo = tools["echo"]
    assert echo.description == "Repeat the text."
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.input_schema["properties"]["times"]["type"] == "integer"
    assert echo.input_schema["properties"]["times"].get("default") == 1
    assert echo.input_schema["required"] == ["text"]
    assert echo.annotations is not None and echo.annotations.read_only_hint is True

    add = tools["add_numbers"]
    assert add.description == "Add numbers and return a structured result."
    numbers = add.input_schema["properties"]["numbers"]
    assert numbers["type"] == "array" and numbers["items"] == {"type": "integer"}
    assert add.input_schema["required"] == ["numbers"]
    assert add.output_schema is not None
    assert add.output_schema["type"] == "object"
    assert set(add.output_schema["properties"]) == {"total", "count"}
    assert sorted(add.output_schema["required"]) == ["count", "total"]

    assert tools["slow_steps"].input_schema["required"] == ["steps"]
    assert tools["ask_name"].input_schema.get("properties", {}) == {}


async def test_call_echo(url: str, mode: str) -> None:
    """``tools/call`` (MCP spec 2026-07-28, server/tools): a plain text result, ``isError`` false."""
    async with connect(url, mode) as client:
        result = await client.call_tool("echo", {"text": "hi", "times": 3})
    assert result.is_error is False
    assert texts(result) == ["hi hi hi"]


async def test_call_structured_output(url: str, mode: str) -> None:
    """
    Structured output (MCP spec 2026-07-28, server/tools): a tool with an ``outputSchema`` MUST return conforming
    ``structuredContent`` and SHOULD mirror it as serialized JSON in a text block.
    """
    async with connect(url, mode) as client:
        result = await client.call_tool("add_numbers", {"numbers": [2, 3, 5]})
    assert result.is_error is False
    assert result.structured_content == {"total": 10, "count": 3}
    assert [json.loads(text) for text in texts(result)] == [{"total": 10, "count": 3}]


async def test_progress_notifications(url: str, mode: str) -> None:
    """
    Progress (MCP spec 2026-07-28, basic/patterns/progress): with a ``progressToken`` the server sends ``notifications/progress``
    whose ``progress`` strictly increases and carries the ``total``; in 2026-07-28 they ride the
    request's own SSE response stream (MCP spec 2026-07-28, basic/transports/streamable-http).
    """
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with connect(url, mode) as client:
        result = await client.call_tool("slow_steps", {"steps": 3, "delay": 0.02}, progress_callback=on_progress)
    assert texts(result) == ["done 3 steps"]
    assert len(updates) == 3, updates
    values = [progress for progress, _, _ in updates]
    assert all(a < b for a, b in zip(values, values[1:])), values
    assert values[-1] == 3
    assert all(total == 3 for _, total, _ in updates)
    assert [message for _, _, message in updates] == ["step 1", "step 2", "step 3"]


async def test_unknown_tool_is_a_protocol_error(url: str, mode: str) -> None:
    """Unknown tool (MCP spec 2026-07-28, server/tools; MCP spec 2026-07-28, basic#error-codes): a JSON-RPC error ``-32602`` (Invalid params), not a tool result."""
    async with connect(url, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.code == types.INVALID_PARAMS
    assert "no_such_tool" in str(caught.value)


# --- resources ---------------------------------------------------------------------------------


async def test_read_resources(url: str, mode: str) -> None:
    """
    ``resources/read`` (MCP spec 2026-07-28, server/resources): a static text resource, and a templated one whose JSON
    text is built from the URI variable.
    """
    async with connect(url, mode) as client:
        greeting = await client.read_resource("memo://greeting")
        item = await client.read_resource("memo://items/7")
    [content] = greeting.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == "memo://greeting"
    assert content.mime_type == "text/plain"
    assert content.text == "Hello from the test app."

    [content] = item.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == "memo://items/7"
    assert content.mime_type == "application/json"
    assert json.loads(content.text) == {"id": "7", "name": "Item 7"}


async def test_list_resources_and_templates(url: str, mode: str) -> None:
    """``resources/list`` and ``resources/templates/list`` (MCP spec 2026-07-28, server/resources)."""
    async with connect(url, mode) as client:
        resources = {resource.uri: resource for resource in (await client.list_resources()).resources}
        templates = {
            template.uri_template: template for template in (await client.list_resource_templates()).resource_templates
        }
    assert "memo://greeting" in {str(uri) for uri in resources}
    template = templates["memo://items/{item_id}"]
    assert template.name == "item"
    assert template.description == "One item by id."
    assert template.mime_type == "application/json"


# --- prompts and completion --------------------------------------------------------------------


async def test_get_prompt(url: str, mode: str) -> None:
    """``prompts/get`` (MCP spec 2026-07-28, server/prompts): the optional argument has a default; given, it is used."""
    async with connect(url, mode) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        default = await client.get_prompt("summarize", {"topic": "cats"})
        detailed = await client.get_prompt("summarize", {"topic": "cats", "style": "detailed"})
    arguments = {argument.name: argument for argument in prompts["summarize"].arguments or []}
    assert arguments["topic"].required is True
    assert not arguments["style"].required
    assert default.description == "Summarize a topic."
    assert [message.role for message in default.messages] == ["user"]
    assert texts(default) == ["Write a short summary of cats."]
    assert texts(detailed) == ["Write a detailed summary of cats."]


async def test_get_prompt_missing_required_argument(url: str, mode: str) -> None:
    """Prompts (MCP spec 2026-07-28, server/prompts): a missing required argument is ``-32602``."""
    async with connect(url, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("summarize", {})
    assert caught.value.code == types.INVALID_PARAMS


async def test_completion(url: str, mode: str) -> None:
    """
    ``completion/complete`` (MCP spec 2026-07-28, server/utilities/completion): values for a prompt argument (``ref/prompt``) and for
    a resource-template variable (``ref/resource``), filtered by the typed prefix.
    """
    async with connect(url, mode) as client:
        style = await client.complete(types.PromptReference(type="ref/prompt", name="summarize"),
                                      {"name": "style", "value": "d"})
        every_style = await client.complete(types.PromptReference(type="ref/prompt", name="summarize"),
                                            {"name": "style", "value": ""})
        item = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="memo://items/{item_id}"),
            {"name": "item_id", "value": "1"},
        )
    assert style.completion.values == ["detailed"]
    assert sorted(every_style.completion.values) == ["detailed", "short"]
    assert sorted(item.completion.values) == ["1", "10"]
    assert not item.completion.has_more


# --- server→client requests: elicitation -------------------------------------------------------


async def test_elicitation(url: str, mode: str) -> None:
    """
    Elicitation (MCP spec 2026-07-28, client/elicitation; MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322). Legacy: ``elicitation/create`` is a real server→client
    JSON-RPC request on the POST's SSE stream, answered by a separate POST. 2026-07-28: the server
    returns an ``InputRequiredResult`` whose ``inputRequests`` key is the tool's key (``name``);
    the SDK fulfils it and retries with ``inputResponses`` + ``requestState``. Either way the
    client callback runs once and the tool greets the answer.
    """
    calls: list[tuple[ClientRequestContext, types.ElicitRequestParams]] = []

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        calls.append((context, params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with connect(url, mode, elicitation_callback=on_elicit) as client:
        result = await client.call_tool("ask_name", {})
    assert result.is_error is False
    assert texts(result) == ["Hello, Ada!"]
    assert len(calls) == 1
    context, params = calls[0]
    assert params.message == "What is your name?"
    assert params.requested_schema["required"] == ["name"]
    if mode in MODERN_MODES:
        # Dispatched from InputRequiredResult.inputRequests: the "request id" is the server's key.
        assert context.request_id == "name"
    else:
        # A JSON-RPC request of its own, with an id the server minted.
        assert context.request_id != "name"


async def test_elicitation_declined(url: str, mode: str) -> None:
    """Elicitation (MCP spec 2026-07-28, client/elicitation): a ``decline`` answer reaches the tool, which handles it."""

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with connect(url, mode, elicitation_callback=on_elicit) as client:
        result = await client.call_tool("ask_name", {})
    assert texts(result) == ["no name given"]


async def test_elicitation_needs_the_client_capability(url: str, mode: str) -> None:
    """
    Capability gating (MCP spec 2026-07-28, client/elicitation; MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322): a server MUST NOT ask for elicitation when the client
    did not declare it. 2026-07-28: a request that cannot proceed without it fails with ``-32021``
    and ``data.requiredCapabilities``. Legacy: the call fails without any request to the client.
    """
    async with connect(url, mode) as client:  # no elicitation_callback: no elicitation capability
        try:
            result = await client.call_tool("ask_name", {})
        except MCPError as error:
            if mode in MODERN_MODES:
                assert error.code == -32021
                assert error.error.data["requiredCapabilities"] == {"elicitation": {}}
            return
    assert mode not in MODERN_MODES, "2026-07-28 requires -32021"
    assert result.is_error is True, result


async def test_sampling(url: str, mode: str) -> None:
    """
    Sampling (MCP spec 2026-07-28, client/elicitation; MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322): legacy ``sampling/createMessage`` as a server→client request;
    2026-07-28 as an ``inputRequests`` entry (key ``llm_response``) that the SDK answers and retries.
    """
    seen: list[tuple[ClientRequestContext, types.CreateMessageRequestParams]] = []

    async def on_sample(context: ClientRequestContext,
                        params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append((context, params))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Paris"),
                                         model="test-model", stop_reason="endTurn")

    async with connect(url, mode, sampling_callback=on_sample) as client:
        await require_tool(client, "test_sampling")
        result = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert texts(result) == ["LLM response: Paris"]
    [(context, params)] = seen
    assert params.max_tokens == 100
    assert [message.content.text for message in params.messages] == ["Capital of France?"]
    if mode in MODERN_MODES:
        assert context.request_id == "llm_response"


async def test_roots(url: str, mode: str) -> None:
    """Roots (MCP spec 2026-07-28, client/elicitation): ``roots/list`` answered by the client's roots callback, in both eras."""

    async def on_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])

    async with connect(url, mode, list_roots_callback=on_roots) as client:
        await require_tool(client, "test_input_required_result_list_roots")
        result = await client.call_tool("test_input_required_result_list_roots", {})
    assert texts(result) == ["Client roots: file:///srv/project"]


async def test_tool_failure_is_a_result_not_an_error(url: str, mode: str) -> None:
    """Tool errors (MCP spec 2026-07-28, server/tools; MCP spec 2026-07-28, basic#error-codes): a failure inside a tool is a ``CallToolResult`` with ``isError: true``."""
    async with connect(url, mode) as client:
        await require_tool(client, "test_error_handling")
        result = await client.call_tool("test_error_handling", {})
    assert result.is_error is True
    assert texts(result) == ["This tool intentionally returns an error for testing"]


# --- logging -----------------------------------------------------------------------------------


async def test_logging_with_opt_in(url: str, mode: str) -> None:
    """
    Logging (MCP spec 2026-07-28, server/utilities/logging). Legacy: ``logging/setLevel`` sets the session threshold and only
    messages at or above it are sent. 2026-07-28: the client opts in per request with
    ``_meta["io.modelcontextprotocol/logLevel"]`` (the SDK's ``log_level=``) and messages at or
    above that level arrive on the request's response stream.
    """
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with connect(url, mode, logging_callback=on_log, log_level="info") as client:
        await require_tool(client, "test_logging_tool")
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("info")
        result = await client.call_tool("test_logging_tool", {})
    assert result.is_error is False
    # The tool logs debug, info and warning; the debug message is below the threshold.
    assert [params.level for params in received] == ["info", "warning"]
    assert all(isinstance(params.data, str) and params.data for params in received)


@pytest.mark.parametrize("mode", sorted(MODERN_MODES))
async def test_logging_without_opt_in_is_silent_in_2026(url: str, mode: str) -> None:
    """
    Logging (MCP spec 2026-07-28, server/utilities/logging): in 2026-07-28, if a request carries no ``logLevel`` the server MUST
    NOT emit ``notifications/message`` for it; a ``logging_callback`` alone is not an opt-in.
    (Legacy sessions may log without ``logging/setLevel``, so only the modern modes run.)
    """
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with connect(url, mode, logging_callback=on_log) as client:
        await require_tool(client, "test_logging_tool")
        result = await client.call_tool("test_logging_tool", {})
    assert result.is_error is False
    assert received == []


# --- change notifications ----------------------------------------------------------------------


async def _eventually(trigger: Callable[[], Any], arrived: asyncio.Event, *, attempts: int = 10) -> None:
    """Run ``trigger`` until ``arrived`` is set (a stream may still be opening on the first try)."""
    for _ in range(attempts):
        await trigger()
        try:
            await asyncio.wait_for(arrived.wait(), 1.0)
            return
        except TimeoutError:
            continue
    raise AssertionError("the change notification never arrived")


async def test_tools_list_changed_reaches_the_client(url: str, mode: str) -> None:
    """
    List-changed notifications (MCP spec 2025-11-25, basic/transports#streamable-http; MCP spec 2026-07-28, basic/patterns/subscriptions). Legacy: ``notifications/tools/list_changed``
    arrives on the session's GET stream (which the SDK opens after ``initialize``). 2026-07-28: a
    ``subscriptions/listen`` stream acknowledges ``toolsListChanged`` and then delivers the
    notification, stamped with the subscription id.
    """
    if mode == "legacy":
        arrived = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                arrived.set()

        async with connect(url, mode, message_handler=on_message) as client:
            await require_tool(client, "test_trigger_tool_change")
            # The GET stream is opened in the background: retry until it is there to receive.
            await _eventually(lambda: client.call_tool("test_trigger_tool_change", {}), arrived)
        return

    async with connect(url, mode) as client:
        await require_tool(client, "test_trigger_tool_change")
        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
            assert subscription.honored.tools_list_changed is True
            assert subscription.honored.prompts_list_changed is True
            assert not subscription.honored.resource_subscriptions
            result = await client.call_tool("test_trigger_tool_change", {})
            assert result.is_error is False
            event = await anext(subscription)
        assert isinstance(event, ToolsListChanged)
