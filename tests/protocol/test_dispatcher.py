"""
The dispatcher driven directly, with a small :class:`McpSite` and a :class:`RequestContext` per era:
method gating per revision, params validation, capability gating, result shaping, errors per era,
pagination and multi-round-trip requests (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic/versioning;
MCP spec 2026-07-28, server; MCP spec 2026-07-28, basic#error-codes).
"""

import asyncio
from typing import Any

import pytest

from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.handlers.lifecycle import initialize_result
from django_mcp.protocol.versions import LEGACY_VERSIONS, Era
from django_mcp.sites import McpSite
from django_mcp.request_state import SignedStateCodec


# Sync callables run through database_sync_to_async, which checks the thread's DB connections.
pytestmark = pytest.mark.django_db


MODERN = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CACHEABLE_LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def meta(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {PV: MODERN, CAPS: caps or {}}


def modern_ctx(caps: dict[str, Any] | None = None, **kwargs: Any) -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version=MODERN, client_capabilities=caps or {}, **kwargs)


def legacy_ctx(version: str = "2025-11-25", **kwargs: Any) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version=version, **kwargs)


def modern_params(params: dict[str, Any] | None = None, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(params or {}), "_meta": meta(caps)}


async def call(dispatcher: Dispatcher, method: str, params: dict[str, Any] | None, ctx: RequestContext,
               request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    response = await dispatcher.handle_request(message, ctx)
    assert response["jsonrpc"] == "2.0"
    assert response["id"] == request_id
    assert ("result" in response) != ("error" in response)
    return response


async def modern_call(dispatcher: Dispatcher, method: str, params: dict[str, Any] | None = None,
                      caps: dict[str, Any] | None = None, **ctx_kwargs: Any) -> dict[str, Any]:
    return await call(dispatcher, method, modern_params(params, caps), modern_ctx(caps, **ctx_kwargs))


def error_code(response: dict[str, Any]) -> int:
    assert "error" in response, response
    return response["error"]["code"]


# Sites --------------------------------------------------------------------------------------


def build_site() -> McpSite:
    site = McpSite()

    @site.tool()
    async def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @site.tool()
    def echo(text: str) -> str:
        return text

    @site.tool()
    async def ask(x: str, ctx: Context) -> str:
        answer = await ctx.elicit("Name?", FORM, key="k")
        return f"{x}:{answer.action}:{(answer.content or {}).get('name')}"

    @site.tool()
    async def ask_too(x: str, ctx: Context) -> str:
        answer = await ctx.elicit("Name?", FORM, key="k")
        return f"other {x}:{answer.action}"

    @site.tool()
    async def two_rounds(ctx: Context) -> str:
        first = await ctx.elicit("First?", FORM, key="k1")
        second = await ctx.elicit("Second?", FORM, key="k2")
        return f"{first.content['name']}+{second.content['name']}"

    @site.tool()
    async def refuse() -> str:
        raise InvalidParams("refused on purpose", {"why": "test"})

    @site.tool()
    async def crash() -> str:
        raise RuntimeError("kaboom")

    @site.tool()
    async def bad_result() -> dict:
        return {"content": "not a list", "isError": False}

    @site.resource("res://a", mime_type="text/plain")
    def resource_a() -> str:
        return "A"

    @site.resource("res://broken")
    async def broken() -> str:
        raise ValueError("disk on fire")

    @site.resource("res://items/{id}")
    async def item(id: str) -> dict:
        return {"id": id}

    @site.resource("res://secret/{id}", permission=lambda ctx: False)
    async def secret(id: str) -> str:
        return "hidden"

    @site.resource("res://ask")
    async def ask_resource(ctx: Context) -> str:
        answer = await ctx.elicit("Which?", FORM, key="which")
        return answer.content["name"]

    @site.prompt(complete={"topic": ["django", "drf", "channels"] + [f"x{i}" for i in range(150)]})
    def greet(topic: str, style: str = "plain") -> str:
        return f"Tell me about {topic} ({style})"

    @site.prompt()
    async def interview(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", FORM, key="who")
        return f"Interview {answer.content['name']}"

    return site


@pytest.fixture
def site() -> McpSite:
    return build_site()


@pytest.fixture
def dispatcher(site: McpSite) -> Dispatcher:
    return Dispatcher(site, state_codec=SignedStateCodec(), list_ttl_ms=60000, cache_scope="public")


@pytest.fixture
def tools_only() -> Dispatcher:
    site = McpSite()

    @site.tool()
    async def only() -> str:
        return "x"

    return Dispatcher(site, state_codec=SignedStateCodec())


# Method gating per revision ------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_ping_answers_in_every_legacy_revision(dispatcher, version):
    response = await call(dispatcher, "ping", None, legacy_ctx(version))
    assert response["result"] == {}


async def test_ping_is_gone_in_2026(dispatcher):
    response = await modern_call(dispatcher, "ping")
    assert error_code(response) == -32601


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_server_discover_is_absent_in_legacy(dispatcher, version):
    response = await call(dispatcher, "server/discover", None, legacy_ctx(version))
    assert error_code(response) == -32601


@pytest.mark.parametrize("method", ["logging/setLevel", "resources/subscribe", "resources/unsubscribe"])
async def test_methods_removed_in_2026(dispatcher, method):
    params = {"level": "info"} if method == "logging/setLevel" else {"uri": "res://a"}
    response = await modern_call(dispatcher, method, params)
    assert error_code(response) == -32601


async def test_subscriptions_listen_is_absent_in_legacy(dispatcher):
    response = await call(dispatcher, "subscriptions/listen", {"notifications": {}}, legacy_ctx())
    assert error_code(response) == -32601


@pytest.mark.parametrize("ctx_factory", [legacy_ctx, modern_ctx])
async def test_unknown_method(dispatcher, ctx_factory):
    response = await call(dispatcher, "tools/destroy", {"_meta": meta()}, ctx_factory())
    assert error_code(response) == -32601
    assert response["error"]["data"] == "tools/destroy"


# Params validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"arguments": {}}),
        ("tools/call", {"name": 5}),
        ("tools/call", {"name": "add", "arguments": [1, 2]}),
        ("resources/read", {}),
        ("resources/read", {"uri": 12}),
        ("prompts/get", {"name": "greet", "arguments": {"topic": 1}}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}}),
    ],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_bad_params_are_32602(dispatcher, method, params, era):
    if era == "legacy":
        response = await call(dispatcher, method, params, legacy_ctx())
    else:
        response = await modern_call(dispatcher, method, params)
    assert error_code(response) == -32602
    assert response["error"]["message"].startswith(f"Invalid params for {method}")


async def test_unknown_tool_is_32602(dispatcher):
    response = await call(dispatcher, "tools/call", {"name": "nope", "arguments": {}}, legacy_ctx())
    assert error_code(response) == -32602
    assert response["error"]["message"] == "Unknown tool: nope"


async def test_unknown_prompt_and_missing_prompt_argument(dispatcher):
    response = await call(dispatcher, "prompts/get", {"name": "nope"}, legacy_ctx())
    assert error_code(response) == -32602
    response = await call(dispatcher, "prompts/get", {"name": "greet", "arguments": {}}, legacy_ctx())
    assert error_code(response) == -32602
    assert "topic" in response["error"]["message"]


# Capability gating ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/list", {}),
        ("prompts/get", {"name": "x"}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "res://a"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
    ],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_methods_of_unoffered_capabilities_are_32601(tools_only, method, params, era):
    if era == "legacy":
        response = await call(tools_only, method, params, legacy_ctx())
    else:
        response = await modern_call(tools_only, method, params)
    assert error_code(response) == -32601


async def test_tools_only_site_still_lists_tools(tools_only):
    response = await modern_call(tools_only, "tools/list")
    assert [tool["name"] for tool in response["result"]["tools"]] == ["only"]


async def test_discover_advertises_only_what_exists(tools_only, dispatcher):
    caps = (await modern_call(tools_only, "server/discover"))["result"]["capabilities"]
    assert "tools" in caps
    assert "prompts" not in caps and "resources" not in caps and "completions" not in caps
    caps = (await modern_call(dispatcher, "server/discover"))["result"]["capabilities"]
    assert {"tools", "prompts", "resources", "completions"} <= set(caps)


# Result shaping -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", CACHEABLE_LISTS)
async def test_legacy_list_results_are_legacy_shaped(dispatcher, method):
    result = (await call(dispatcher, method, None, legacy_ctx()))["result"]
    for key in ("resultType", "ttlMs", "cacheScope"):
        assert key not in result
    assert SERVER_INFO not in (result.get("_meta") or {})


@pytest.mark.parametrize("method", CACHEABLE_LISTS)
async def test_modern_list_results_are_complete_and_cacheable(dispatcher, method):
    result = (await modern_call(dispatcher, method))["result"]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 60000
    assert result["cacheScope"] == "public"
    assert result["_meta"][SERVER_INFO]["name"] == "django-mcp-tests"
    assert isinstance(result["_meta"][SERVER_INFO]["version"], str)


async def test_modern_discover(dispatcher):
    result = (await modern_call(dispatcher, "server/discover"))["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN
    assert set(LEGACY_VERSIONS) <= set(result["supportedVersions"])
    assert result["ttlMs"] == 60000
    assert result["cacheScope"] == "public"
    assert result["_meta"][SERVER_INFO]["name"] == "django-mcp-tests"
    assert "instructions" not in result


async def test_discover_and_initialize_carry_instructions(dispatcher, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "INSTRUCTIONS": "Be nice."}
    assert (await modern_call(dispatcher, "server/discover"))["result"]["instructions"] == "Be nice."
    ctx = legacy_ctx()
    result = initialize_result(dispatcher, {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "c", "version": "1"}}, ctx)
    assert result["instructions"] == "Be nice."


async def test_modern_read_is_cacheable(dispatcher):
    result = (await modern_call(dispatcher, "resources/read", {"uri": "res://a"}))["result"]
    assert result["contents"] == [{"uri": "res://a", "mimeType": "text/plain", "text": "A"}]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 60000 and result["cacheScope"] == "public"


async def test_legacy_read_is_legacy_shaped(dispatcher):
    result = (await call(dispatcher, "resources/read", {"uri": "res://items/7"}, legacy_ctx()))["result"]
    assert result == {"contents": [{"uri": "res://items/7", "mimeType": "application/json", "text": '{"id": "7"}'}]}


async def test_modern_call_and_get_are_not_cacheable(dispatcher):
    result = (await modern_call(dispatcher, "tools/call", {"name": "add", "arguments": {"a": 1}}))["result"]
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == {"result": 3}
    assert result["_meta"][SERVER_INFO]["name"] == "django-mcp-tests"
    assert "ttlMs" not in result and "cacheScope" not in result
    result = (await modern_call(dispatcher, "prompts/get", {"name": "greet", "arguments": {"topic": "x"}}))["result"]
    assert result["resultType"] == "complete"
    assert "ttlMs" not in result and "cacheScope" not in result
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Tell me about x (plain)"}}]


async def test_legacy_call_result(dispatcher):
    result = (await call(dispatcher, "tools/call", {"name": "echo", "arguments": {"text": "hi"}},
                         legacy_ctx("2025-06-18")))["result"]
    assert result == {"content": [{"type": "text", "text": "hi"}], "isError": False}


async def test_initialize_negotiates_a_legacy_version(dispatcher):
    for requested, expected in [("2025-03-26", "2025-03-26"), ("2024-11-05", "2024-11-05"),
                                (MODERN, LEGACY_VERSIONS[-1]), ("1999-01-01", LEGACY_VERSIONS[-1])]:
        ctx = legacy_ctx()
        result = initialize_result(dispatcher, {"protocolVersion": requested, "capabilities": {},
                                                "clientInfo": {"name": "c", "version": "1"}}, ctx)
        assert result["protocolVersion"] == expected
        assert ctx.protocol_version == expected
        assert result["serverInfo"]["name"] == "django-mcp-tests"
        assert "tools" in result["capabilities"]
        assert "resultType" not in result


def test_initialize_needs_a_version(dispatcher):
    with pytest.raises(InvalidParams):
        initialize_result(dispatcher, {"capabilities": {}}, legacy_ctx())


# Errors -----------------------------------------------------------------------------------------


async def test_resource_not_found_is_32002_in_legacy(dispatcher):
    response = await call(dispatcher, "resources/read", {"uri": "res://missing"}, legacy_ctx())
    assert response["error"] == {"code": -32002, "message": "Resource not found: res://missing",
                                 "data": {"uri": "res://missing"}}


async def test_resource_not_found_is_32602_in_2026(dispatcher):
    response = await modern_call(dispatcher, "resources/read", {"uri": "res://missing"})
    assert error_code(response) == -32602
    assert response["error"]["data"] == {"uri": "res://missing"}


@pytest.mark.parametrize("ctx_factory", [legacy_ctx, modern_ctx])
async def test_forbidden_template_reads_as_not_found(dispatcher, ctx_factory):
    ctx = ctx_factory()
    response = await call(dispatcher, "resources/read", {"uri": "res://secret/1", "_meta": meta()}, ctx)
    assert error_code(response) == (-32602 if ctx.is_modern else -32002)


async def test_mcp_error_from_a_tool_passes_through(dispatcher):
    response = await call(dispatcher, "tools/call", {"name": "refuse", "arguments": {}}, legacy_ctx())
    assert response["error"] == {"code": -32602, "message": "refused on purpose", "data": {"why": "test"}}


async def test_tool_exception_is_an_error_result_not_a_jsonrpc_error(dispatcher):
    result = (await call(dispatcher, "tools/call", {"name": "crash", "arguments": {}}, legacy_ctx()))["result"]
    # An unexpected exception's text (paths, SQL, values) stays in the server's log.
    assert result == {"content": [{"type": "text", "text": "Tool crash failed with an internal error."}],
                      "isError": True}


async def test_unexpected_exception_is_32603(dispatcher):
    response = await call(dispatcher, "resources/read", {"uri": "res://broken"}, legacy_ctx())
    assert response["error"] == {"code": -32603, "message": "Internal error"}


async def test_invalid_result_is_32603(dispatcher):
    response = await call(dispatcher, "tools/call", {"name": "bad_result", "arguments": {}}, legacy_ctx())
    assert error_code(response) == -32603
    assert response["error"]["message"] == "The server produced an invalid result"


# Pagination --------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_pagination_walks_every_page(site, era):
    site.page_size = 3
    small = Dispatcher(site, state_codec=SignedStateCodec())
    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"cursor": cursor} if cursor is not None else {}
        if era == "legacy":
            result = (await call(small, "tools/list", params, legacy_ctx()))["result"]
        else:
            result = (await modern_call(small, "tools/list", params))["result"]
            assert result["resultType"] == "complete" and "ttlMs" in result
        assert len(result["tools"]) <= 3
        names.extend(tool["name"] for tool in result["tools"])
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == [tool.name for tool in site.tools]
    assert pages == 3  # 8 tools, 3 per page


async def test_pagination_of_resources_and_prompts(site):
    site.page_size = 1
    small = Dispatcher(site, state_codec=SignedStateCodec())
    first = (await call(small, "prompts/list", None, legacy_ctx()))["result"]
    assert [p["name"] for p in first["prompts"]] == ["greet"]
    second = (await call(small, "prompts/list", {"cursor": first["nextCursor"]}, legacy_ctx()))["result"]
    assert [p["name"] for p in second["prompts"]] == ["interview"]
    assert "nextCursor" not in second
    resources = (await call(small, "resources/list", None, legacy_ctx()))["result"]
    assert len(resources["resources"]) == 1 and "nextCursor" in resources


@pytest.mark.parametrize("ctx_factory", [legacy_ctx, modern_ctx])
async def test_invalid_cursor_is_32602(dispatcher, ctx_factory):
    response = await call(dispatcher, "tools/list", {"cursor": "garbage!", "_meta": meta()}, ctx_factory())
    assert error_code(response) == -32602


# Completion ------------------------------------------------------------------------------------


async def test_completion_filters_and_caps_at_100(dispatcher):
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "topic", "value": "d"}}
    result = (await call(dispatcher, "completion/complete", params, legacy_ctx()))["result"]
    assert result["completion"] == {"values": ["django", "drf"], "total": 2, "hasMore": False}
    params["argument"]["value"] = "x"
    completion = (await call(dispatcher, "completion/complete", params, legacy_ctx()))["result"]["completion"]
    assert len(completion["values"]) == 100
    assert completion["values"][0] == "x0"
    assert completion["total"] == 150
    assert completion["hasMore"] is True


async def test_completion_modern_shape(dispatcher):
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "style", "value": ""}}
    result = (await modern_call(dispatcher, "completion/complete", params))["result"]
    assert result["resultType"] == "complete"
    assert result["completion"]["values"] == []


# Legacy session methods --------------------------------------------------------------------------


class FakeSession:
    id = "s1"
    protocol_version = "2025-11-25"
    client_capabilities: dict[str, Any] = {}
    client_info = None

    def __init__(self) -> None:
        self.log_level = None
        self.subscribed: list[str] = []
        self.unsubscribed: list[str] = []

    async def set_log_level(self, level: str) -> None:
        self.log_level = level

    async def subscribe(self, uri: str) -> None:
        self.subscribed.append(uri)

    async def unsubscribe(self, uri: str) -> None:
        self.unsubscribed.append(uri)


async def test_legacy_set_level_and_subscriptions(dispatcher):
    session = FakeSession()
    ctx = legacy_ctx(session=session)
    assert (await call(dispatcher, "logging/setLevel", {"level": "error"}, ctx))["result"] == {}
    assert session.log_level == "error"
    assert (await call(dispatcher, "resources/subscribe", {"uri": "res://items/3"}, legacy_ctx(session=session))
            )["result"] == {}
    assert session.subscribed == ["res://items/3"]
    assert (await call(dispatcher, "resources/unsubscribe", {"uri": "res://items/3"},
                       legacy_ctx(session=session)))["result"] == {}
    assert session.unsubscribed == ["res://items/3"]


async def test_legacy_subscribe_to_unknown_resource(dispatcher):
    session = FakeSession()
    response = await call(dispatcher, "resources/subscribe", {"uri": "nope://x"}, legacy_ctx(session=session))
    assert error_code(response) == -32602
    assert session.subscribed == []


async def test_legacy_set_level_rejects_unknown_level(dispatcher):
    session = FakeSession()
    response = await call(dispatcher, "logging/setLevel", {"level": "loud"}, legacy_ctx(session=session))
    assert error_code(response) == -32602
    assert session.log_level is None


# subscriptions/listen ----------------------------------------------------------------------------


async def test_listen_acknowledges_first_and_tags_notifications(tools_only):
    sent: list[dict[str, Any]] = []

    async def send_message(message: dict[str, Any]) -> None:
        sent.append(message)

    filters: list[dict[str, Any]] = []

    async def notifications():
        # Nothing may precede the acknowledgement.
        assert [m["method"] for m in sent] == ["notifications/subscriptions/acknowledged"]
        yield {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        yield {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {"x": 1}}}

    async def listen(honoured: dict[str, Any]):
        filters.append(honoured)
        assert sent == []  # sources are joined before the acknowledgement
        return notifications()

    ctx = modern_ctx(request_id="L1", send_message=send_message, listen=listen)
    params = modern_params({"notifications": {"toolsListChanged": True, "promptsListChanged": True,
                                              "resourceSubscriptions": ["res://a"]}})
    response = await call(tools_only, "subscriptions/listen", params, ctx, request_id="L1")
    # Only what the server offers is honoured (no prompts, no resources here).
    assert filters == [{"toolsListChanged": True}]
    assert sent[0] == {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                       "params": {"_meta": {SUB_ID: "L1"}, "notifications": {"toolsListChanged": True}}}
    assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                       "params": {"_meta": {SUB_ID: "L1"}}}
    assert sent[2]["params"]["_meta"] == {"x": 1, SUB_ID: "L1"}
    assert len(sent) == 3
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["_meta"][SUB_ID] == "L1"


# MRTR ----------------------------------------------------------------------------------------------


ELICIT_CAPS = {"elicitation": {}}


async def test_mrtr_round_trip(dispatcher):
    first = await modern_call(dispatcher, "tools/call", {"name": "ask", "arguments": {"x": "1"}}, ELICIT_CAPS)
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"k": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Name?", "requestedSchema": FORM}}}
    assert isinstance(result["requestState"], str) and result["requestState"]
    assert "ttlMs" not in result and "cacheScope" not in result
    assert result["_meta"][SERVER_INFO]["name"] == "django-mcp-tests"

    retry = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": result["requestState"],
        "inputResponses": {"k": {"action": "accept", "content": {"name": "Ada"}}},
    }, ELICIT_CAPS)
    assert retry["result"]["resultType"] == "complete"
    assert retry["result"]["content"] == [{"type": "text", "text": "1:accept:Ada"}]
    assert retry["result"]["isError"] is False


async def first_state(dispatcher: Dispatcher, name: str = "ask", arguments: dict[str, Any] | None = None) -> str:
    response = await modern_call(dispatcher, "tools/call", {"name": name, "arguments": arguments or {"x": "1"}},
                                 ELICIT_CAPS)
    assert response["result"]["resultType"] == "input_required"
    return response["result"]["requestState"]


ANSWER = {"k": {"action": "accept", "content": {"name": "Ada"}}}


async def test_mrtr_tampered_state_is_32602(dispatcher):
    state = await first_state(dispatcher)
    middle = len(state) // 2
    tampered = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1:]
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": tampered, "inputResponses": ANSWER}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_garbage_state_is_32602(dispatcher):
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": "made-up", "inputResponses": ANSWER}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_state_replayed_onto_other_arguments_is_32602(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "2"}, "requestState": state, "inputResponses": ANSWER}, ELICIT_CAPS)
    assert error_code(response) == -32602
    assert "different request" in response["error"]["message"]


async def test_mrtr_state_replayed_onto_another_tool_is_32602(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask_too", "arguments": {"x": "1"}, "requestState": state, "inputResponses": ANSWER}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_state_replayed_onto_another_method_is_32602(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "prompts/get", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": state, "inputResponses": ANSWER}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_without_elicitation_capability_is_32021(dispatcher):
    response = await modern_call(dispatcher, "tools/call", {"name": "ask", "arguments": {"x": "1"}}, {"roots": {}})
    assert error_code(response) == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_mrtr_multi_round_keeps_earlier_answers(dispatcher):
    first = (await modern_call(dispatcher, "tools/call", {"name": "two_rounds", "arguments": {}}, ELICIT_CAPS))
    assert list(first["result"]["inputRequests"]) == ["k1"]
    second = await modern_call(dispatcher, "tools/call", {
        "name": "two_rounds", "arguments": {}, "requestState": first["result"]["requestState"],
        "inputResponses": {"k1": {"action": "accept", "content": {"name": "Ada"}}}}, ELICIT_CAPS)
    assert second["result"]["resultType"] == "input_required"
    assert list(second["result"]["inputRequests"]) == ["k2"]
    assert second["result"]["inputRequests"]["k2"]["params"]["message"] == "Second?"
    # The third request carries only the new answer: the first travels in the signed state.
    third = await modern_call(dispatcher, "tools/call", {
        "name": "two_rounds", "arguments": {}, "requestState": second["result"]["requestState"],
        "inputResponses": {"k2": {"action": "accept", "content": {"name": "Bob"}}}}, ELICIT_CAPS)
    assert third["result"]["resultType"] == "complete"
    assert third["result"]["content"] == [{"type": "text", "text": "Ada+Bob"}]


async def test_mrtr_answers_without_state_are_used(dispatcher):
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "inputResponses": ANSWER}, ELICIT_CAPS)
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["content"] == [{"type": "text", "text": "1:accept:Ada"}]


async def test_mrtr_malformed_answer_without_state_is_32602(dispatcher):
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "inputResponses": {"k": {"action": "perhaps"}}}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_unknown_response_keys_are_ignored(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": state,
        "inputResponses": {**ANSWER, "stray": {"action": "decline"}}}, ELICIT_CAPS)
    assert response["result"]["content"] == [{"type": "text", "text": "1:accept:Ada"}]


async def test_mrtr_missing_answer_is_asked_again(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": state, "inputResponses": {}}, ELICIT_CAPS)
    assert response["result"]["resultType"] == "input_required"
    assert list(response["result"]["inputRequests"]) == ["k"]


async def test_mrtr_malformed_answer_is_32602(dispatcher):
    state = await first_state(dispatcher)
    response = await modern_call(dispatcher, "tools/call", {
        "name": "ask", "arguments": {"x": "1"}, "requestState": state,
        "inputResponses": {"k": {"action": "accept", "content": "not an object"}}}, ELICIT_CAPS)
    assert error_code(response) == -32602


async def test_mrtr_on_prompts_and_resources(dispatcher):
    first = await modern_call(dispatcher, "prompts/get", {"name": "interview"}, ELICIT_CAPS)
    assert first["result"]["resultType"] == "input_required"
    done = await modern_call(dispatcher, "prompts/get", {
        "name": "interview", "requestState": first["result"]["requestState"],
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}, ELICIT_CAPS)
    assert done["result"]["messages"][0]["content"]["text"] == "Interview Ada"

    first = await modern_call(dispatcher, "resources/read", {"uri": "res://ask"}, ELICIT_CAPS)
    assert first["result"]["resultType"] == "input_required"
    assert "ttlMs" not in first["result"]
    done = await modern_call(dispatcher, "resources/read", {
        "uri": "res://ask", "requestState": first["result"]["requestState"],
        "inputResponses": {"which": {"action": "accept", "content": {"name": "blue"}}}}, ELICIT_CAPS)
    assert done["result"]["contents"][0]["text"] == "blue"
    assert done["result"]["resultType"] == "complete"


async def test_legacy_elicitation_goes_through_send_request(dispatcher):
    asked: list[tuple[str, Any]] = []

    async def send_request(method: str, params: Any) -> dict[str, Any]:
        asked.append((method, params))
        await asyncio.sleep(0)
        return {"action": "accept", "content": {"name": "Lin"}}

    ctx = legacy_ctx("2025-06-18", client_capabilities={"elicitation": {}}, send_request=send_request)
    result = (await call(dispatcher, "tools/call", {"name": "ask", "arguments": {"x": "9"}}, ctx))["result"]
    assert result["content"] == [{"type": "text", "text": "9:accept:Lin"}]
    assert asked == [("elicitation/create", {"message": "Name?", "requestedSchema": FORM})]


async def test_legacy_elicitation_without_capability_is_invalid_request(dispatcher):
    """-32021 exists only in 2026-07-28: a legacy client gets -32600 with the same data."""
    ctx = legacy_ctx("2025-06-18", send_request=lambda *a: None)
    response = await call(dispatcher, "tools/call", {"name": "ask", "arguments": {"x": "9"}}, ctx)
    assert error_code(response) == -32600
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
