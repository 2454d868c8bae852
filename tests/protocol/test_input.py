"""Asking the client for input in both eras (MCP spec 2026-07-28, client/elicitation; MCP spec 2026-07-28,
basic/patterns/mrtr, SEP-2322)."""

import asyncio

import mcp_types
import pytest

from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.errors import InvalidParams, McpError, MissingClientCapability
from django_mcp.protocol.input import (
    ELICIT,
    LIST_ROOTS,
    SAMPLE,
    InputRequired,
    client_has,
    request_input,
    required_capability,
    wait_for_client_answer,
)
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SignedStateCodec
from django_mcp.sites import McpSite


FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def modern(caps=None, answers=None) -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version="2026-07-28", client_capabilities=caps or {},
                          input_answers=answers or {})


def legacy(caps=None, send_request=None) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", client_capabilities=caps or {},
                          send_request=send_request)


def test_required_capability():
    assert required_capability(ELICIT, {"message": "m"}) == {"elicitation": {}}
    assert required_capability(ELICIT, {"mode": "form"}) == {"elicitation": {}}
    assert required_capability(ELICIT, {"mode": "url", "url": "https://x"}) == {"elicitation": {"url": {}}}
    assert required_capability(SAMPLE, None) == {"sampling": {}}
    assert required_capability(LIST_ROOTS, {}) == {"roots": {}}


def test_required_capability_of_unknown_method():
    with pytest.raises(McpError):
        required_capability("tools/call", {})


def test_client_has():
    ctx = modern({"elicitation": {}, "sampling": {}})
    assert client_has(ctx, {"elicitation": {}})
    assert client_has(ctx, {"sampling": {}})
    assert not client_has(ctx, {"roots": {}})
    # ``elicitation: {}`` means form mode only (MCP spec 2026-07-28, client/elicitation).
    assert not client_has(ctx, {"elicitation": {"url": {}}})
    assert client_has(modern({"elicitation": {"url": {}}}), {"elicitation": {"url": {}}})
    assert client_has(modern({"elicitation": {"form": {}, "url": {}}}), {"elicitation": {"url": {}}})


async def test_modern_missing_answers_raise_input_required():
    ctx = modern({"elicitation": {}, "roots": {}})
    with pytest.raises(InputRequired) as info:
        await request_input(ctx, {"who": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}},
                                  "roots": {"method": LIST_ROOTS}})
    assert info.value.requests == {
        "who": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}},
        "roots": {"method": LIST_ROOTS, "params": {}},
    }


async def test_modern_asks_only_for_what_is_missing():
    ctx = modern({"elicitation": {}, "roots": {}}, answers={"roots": {"roots": [{"uri": "file:///a"}]}})
    with pytest.raises(InputRequired) as info:
        await request_input(ctx, {"who": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}},
                                  "roots": {"method": LIST_ROOTS}})
    assert list(info.value.requests) == ["who"]


async def test_modern_answers_are_parsed_into_result_models():
    ctx = modern({"elicitation": {}, "sampling": {}, "roots": {}}, answers={
        "e": {"action": "accept", "content": {"name": "Ada"}},
        "s": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "r": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]},
    })
    answers = await request_input(ctx, {
        "e": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}},
        "s": {"method": SAMPLE, "params": {"messages": [], "maxTokens": 5}},
        "r": {"method": LIST_ROOTS},
    })
    assert isinstance(answers["e"], mcp_types.ElicitResult)
    assert answers["e"].action == "accept"
    assert answers["e"].content == {"name": "Ada"}
    assert isinstance(answers["s"], mcp_types.CreateMessageResult)
    assert answers["s"].model == "m"
    assert isinstance(answers["r"], mcp_types.ListRootsResult)
    assert str(answers["r"].roots[0].uri) == "file:///tmp"


async def test_malformed_answer_is_invalid_params():
    ctx = modern({"elicitation": {}}, answers={"e": {"action": "maybe"}})
    with pytest.raises(InvalidParams) as info:
        await request_input(ctx, {"e": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}}})
    assert info.value.code == -32602
    assert info.value.data == {"key": "e"}


@pytest.mark.parametrize("ctx_factory", [modern, legacy])
async def test_undeclared_capability_is_32021(ctx_factory):
    ctx = ctx_factory({"roots": {}})
    with pytest.raises(MissingClientCapability) as info:
        await request_input(ctx, {"e": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}}})
    assert info.value.code == -32021
    assert info.value.data == {"requiredCapabilities": {"elicitation": {}}}


async def test_url_elicitation_needs_url_mode():
    ctx = modern({"elicitation": {}})
    with pytest.raises(MissingClientCapability) as info:
        await request_input(ctx, {"e": {"method": ELICIT, "params": {"mode": "url", "message": "m",
                                                                     "url": "https://example.com"}}})
    assert info.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}


async def test_legacy_sends_requests_and_parses_answers():
    sent = []

    async def send_request(method, params):
        sent.append((method, params))
        await asyncio.sleep(0)
        if method == ELICIT:
            return {"action": "decline"}
        return {"roots": []}

    ctx = legacy({"elicitation": {}, "roots": {}}, send_request)
    answers = await request_input(ctx, {"a": {"method": ELICIT, "params": {"message": "m", "requestedSchema": FORM}},
                                        "b": {"method": LIST_ROOTS}})
    assert sent == [(ELICIT, {"message": "m", "requestedSchema": FORM}), (LIST_ROOTS, None)]
    assert answers["a"].action == "decline"
    assert answers["b"].roots == []


async def test_legacy_malformed_answer_is_invalid_params():
    async def send_request(method, params):
        return {"nothing": True}

    ctx = legacy({"roots": {}}, send_request)
    with pytest.raises(InvalidParams):
        await request_input(ctx, {"r": {"method": LIST_ROOTS}})


async def test_legacy_without_a_way_to_ask():
    ctx = legacy({"roots": {}})
    with pytest.raises(McpError) as info:
        await request_input(ctx, {"r": {"method": LIST_ROOTS}})
    assert "cannot ask a 2025-11-25 client for input" in info.value.message


# Context helpers ----------------------------------------------------------------------------


async def test_context_elicit_modern_uses_form_mode_and_the_key():
    ctx = modern({"elicitation": {}})
    with pytest.raises(InputRequired) as info:
        await Context(ctx).elicit("Name?", FORM, key="k")
    assert info.value.requests == {"k": {"method": ELICIT, "params": {"mode": "form", "message": "Name?",
                                                                      "requestedSchema": FORM}}}


async def test_context_elicit_legacy_omits_mode():
    sent = []

    async def send_request(method, params):
        sent.append((method, params))
        return {"action": "accept", "content": {"name": "x"}}

    answer = await Context(legacy({"elicitation": {}}, send_request)).elicit("Name?", FORM)
    assert answer.content == {"name": "x"}
    assert sent == [(ELICIT, {"message": "Name?", "requestedSchema": FORM})]


async def test_context_auto_keys_are_deterministic():
    ctx = modern({"elicitation": {}, "roots": {}, "sampling": {}}, answers={"elicit_1": {"action": "cancel"}})
    context = Context(ctx)
    assert (await context.elicit("a", FORM)).action == "cancel"
    with pytest.raises(InputRequired) as info:
        await context.list_roots()
    assert list(info.value.requests) == ["roots_2"]


async def test_context_sample_wraps_a_string():
    ctx = modern({"sampling": {}})
    with pytest.raises(InputRequired) as info:
        await Context(ctx).sample("Hello", max_tokens=10, key="s", temperature=0.5)
    assert info.value.requests["s"] == {"method": SAMPLE, "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}],
        "maxTokens": 10, "temperature": 0.5}}


async def test_context_report_progress_and_log():
    sent = []

    async def send_message(message):
        sent.append(message)

    ctx = RequestContext(era=Era.MODERN, protocol_version="2026-07-28", progress_token="p", log_level="warning",
                         send_message=send_message)
    context = Context(ctx)
    await context.report_progress(1, 4, "quarter")
    await context.report_progress(2)
    await context.info("dropped")  # below the request's level
    await context.error({"boom": 1}, logger="db")
    assert sent == [
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "p", "progress": 1, "total": 4, "message": "quarter"}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 2}},
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "error", "data": {"boom": 1}, "logger": "db"}},
    ]


async def test_no_progress_without_token_and_no_logs_without_modern_opt_in():
    sent = []

    async def send_message(message):
        sent.append(message)

    ctx = RequestContext(era=Era.MODERN, protocol_version="2026-07-28", send_message=send_message)
    await Context(ctx).report_progress(1)
    await Context(ctx).error("x")
    assert sent == []


def test_wants_log():
    assert RequestContext(era=Era.LEGACY, protocol_version="2025-11-25").wants_log("debug")
    assert not RequestContext(era=Era.MODERN, protocol_version="2026-07-28").wants_log("emergency")
    ctx = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", log_level="error")
    assert not ctx.wants_log("warning")
    assert ctx.wants_log("error")
    assert ctx.wants_log("critical")
    assert not ctx.wants_log("bogus")


# A legacy client that does not answer (issue 11) -------------------------------------------------


def asking_site():
    site = McpSite()
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}

    @site.tool()
    async def ask_tool(ctx: Context) -> str:
        return str((await ctx.elicit("Name?", schema, key="name")).action)

    @site.prompt()
    async def ask_prompt(ctx: Context) -> str:
        return str((await ctx.elicit("Name?", schema, key="name")).action)

    return site


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "params"), [("tools/call", {"name": "ask_tool", "arguments": {}}),
                                                ("prompts/get", {"name": "ask_prompt"})])
@pytest.mark.parametrize(("answer", "message"), [
    (None, "The client did not answer elicitation/create in time"),
    ({"error": {"code": 1, "message": [[["deep"]]]}}, "The client refused elicitation/create: <array>"),
    ({"error": {"code": 1, "message": "no"}}, "The client refused elicitation/create: no"),
])
async def test_a_client_that_does_not_answer_gets_an_error_that_says_so(method, params, answer, message, caplog):
    # The transports wait for a legacy client's answer with wait_for_client_answer: a timeout or
    # an error answer used to escape as an unexpected exception (-32603 "Internal error" and a
    # logged traceback for prompts; "failed with an internal error" for tools).
    async def send_request(method_asked, params_asked):
        future = asyncio.get_running_loop().create_future()
        if answer is not None:
            future.set_result(answer)
        return await wait_for_client_answer(future, method_asked, timeout=0.01)

    dispatcher = Dispatcher(asking_site(), state_codec=SignedStateCodec())
    ctx = legacy({"elicitation": {}}, send_request)
    with caplog.at_level("WARNING", logger="django_mcp"):
        response = await dispatcher.handle_request({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                                                   ctx)
    assert response["error"] == {"code": -32603, "message": message}
    assert not [record for record in caplog.records if record.levelname in ("WARNING", "ERROR")]
