"""
django_mcp.tracing in process, with the OpenTelemetry SDK's in-memory exporter: a server span for
every request and notification of both eras, named and attributed by the MCP semantic conventions
(https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/), its parent the trace in ``params._meta``
or else the HTTP request's, errors recorded as the conventions classify them, a client span with
its context in ``_meta`` for what the server asks its client, and the duration histograms.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.asgi import get_asgi_application
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

import django_mcp.asgi
from django_mcp.hooks import Hook, register_hook, unregister_hook
from django_mcp.test import ErrorResponse, McpClient
from django_mcp.tracing import instruments


pytestmark = pytest.mark.django_db(transaction=True)

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_SPAN = "b7ad6b7169203331"
PROXY_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PROXY_SPAN = "00f067aa0ba902b7"


def traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


def with_headers(*headers: tuple[bytes, bytes]) -> Any:
    """The project's ASGI application behind a proxy that adds ``headers`` to every request."""
    inner = django_mcp.asgi.application(get_asgi_application())

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [*scope["headers"], *headers]}
        await inner(scope, receive, send)

    return app


@pytest.mark.parametrize("version", ERAS)
def test_a_tool_call_is_a_server_span_named_and_attributed_by_the_conventions(spans, version):
    client = McpClient(version)
    client.call_tool("echo", text="hi")
    session = client.session_id
    client.close()
    span = spans.one("tools/call echo")
    assert span.kind is SpanKind.SERVER and span.status.status_code is StatusCode.UNSET
    attributes = dict(span.attributes or {})
    assert attributes.pop("jsonrpc.request.id").isdigit()
    # The test client's scope, as a server reports the peer: client.address/port, the HTTP version.
    assert attributes.pop("client.address") and attributes.pop("client.port")
    assert attributes.pop("network.protocol.version") == "1.1"
    expected = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
                "mcp.protocol.version": version, "network.transport": "tcp", "network.protocol.name": "http"}
    if version == "2026-07-28":
        assert attributes == expected  # no session in the stateless revision
    else:
        session_id = attributes.pop("mcp.session.id")
        assert attributes == expected
        # The session's key inside the server, never the signed Mcp-Session-Id the client holds.
        assert session_id and session_id != session and session_id in session
        initialize = spans.one("initialize")
        assert initialize.attributes["mcp.session.id"] == session_id
        assert initialize.attributes["mcp.protocol.version"] == version
        assert spans.one("notifications/initialized").kind is SpanKind.SERVER


def test_every_method_gets_its_span_and_target(spans):
    client = McpClient("2025-11-25", elicitation={"action": "accept", "content": {"name": "Ada"}})
    client.list_tools()
    client.read_resource("memo://items/7")
    client.get_prompt("summarize", topic="bees")
    client.complete("summarize", "style", "d")
    client.subscribe("memo://greeting")
    client.ping()
    client.close()
    names = [span.name for span in spans.get_finished_spans()]
    for name in ("initialize", "notifications/initialized", "tools/list", "resources/read", "prompts/get summarize",
                 "completion/complete", "resources/subscribe", "ping"):
        assert name in names, (name, names)
    assert spans.one("resources/read").attributes["mcp.resource.uri"] == "memo://items/7"
    assert spans.one("resources/subscribe").attributes["mcp.resource.uri"] == "memo://greeting"
    assert spans.one("prompts/get summarize").attributes["gen_ai.prompt.name"] == "summarize"
    assert "gen_ai.operation.name" not in spans.one("prompts/get summarize").attributes


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_trace_in_meta_is_the_parent_and_the_http_request_is_linked(spans, version):
    app = with_headers((b"traceparent", traceparent(PROXY_TRACE, PROXY_SPAN).encode()))
    client = McpClient(version, app=app)
    client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"},
                                  "_meta": {"traceparent": traceparent(CLIENT_TRACE, CLIENT_SPAN)}})
    client.close()
    span = spans.one("tools/call echo")
    assert span.parent is not None and span.parent.is_remote
    assert (format(span.context.trace_id, "032x"), format(span.parent.span_id, "016x")) == (CLIENT_TRACE, CLIENT_SPAN)
    assert [(format(link.context.trace_id, "032x"), format(link.context.span_id, "016x")) for link in span.links] \
        == [(PROXY_TRACE, PROXY_SPAN)]


def test_without_a_trace_in_meta_the_http_request_is_the_parent(spans):
    client = McpClient(app=with_headers((b"traceparent", traceparent(PROXY_TRACE, PROXY_SPAN).encode())))
    client.call_tool("echo", text="hi")
    span = spans.one("tools/call echo")
    assert format(span.context.trace_id, "032x") == PROXY_TRACE and format(span.parent.span_id, "016x") == PROXY_SPAN
    assert not span.links


def test_a_span_an_asgi_instrumentation_opened_is_the_parent(spans):
    inner = django_mcp.asgi.application(get_asgi_application())
    tracer = trace.get_tracer("an ASGI instrumentation")

    async def instrumented(scope: dict[str, Any], receive: Any, send: Any) -> None:
        with tracer.start_as_current_span("POST /mcp", kind=SpanKind.SERVER):
            await inner(scope, receive, send)

    McpClient(app=instrumented).call_tool("echo", text="hi")
    http, mcp = spans.one("POST /mcp"), spans.one("tools/call echo")
    assert mcp.parent.span_id == http.context.span_id and mcp.context.trace_id == http.context.trace_id


def test_a_malformed_trace_in_meta_is_ignored(spans):
    client = McpClient()
    for bad in ("not a traceparent", 17, "00-" + "0" * 32 + "-" + "0" * 16 + "-01"):
        client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": {"traceparent": bad}})
    assert [span.parent for span in spans.named("tools/call echo")] == [None, None, None]


def test_errors_are_recorded_as_the_conventions_classify_them(spans):
    client = McpClient()
    with pytest.raises(ErrorResponse):
        client.call_tool("no_such_tool")
    unknown = spans.one("tools/call no_such_tool")
    # The client asked for something that does not exist: the code is recorded, not an error.
    assert unknown.attributes["rpc.response.status_code"] == "-32602"
    assert "error.type" not in unknown.attributes and unknown.status.status_code is StatusCode.UNSET


def test_a_tool_error_and_a_server_failure_are_errors(spans):
    class Failing(Hook):
        async def call(self, call: Any, call_next: Any) -> Any:
            if call.arguments.get("text") == "fail":
                raise RuntimeError("the database is away")
            if call.arguments.get("text") == "tool error":
                return {"content": [{"type": "text", "text": "no"}], "isError": True}
            return await call_next(call)

    failing = register_hook(Failing())
    try:
        client = McpClient()
        assert client.call_tool("echo", text="tool error").is_error
        with pytest.raises(ErrorResponse):
            client.call_tool("echo", text="fail")
    finally:
        unregister_hook(failing)
    tool_error, failure = spans.named("tools/call echo")
    assert tool_error.attributes["error.type"] == "tool_error" and tool_error.status.status_code is StatusCode.ERROR
    assert "rpc.response.status_code" not in tool_error.attributes
    assert failure.attributes["error.type"] == "-32603" and failure.attributes["rpc.response.status_code"] == "-32603"
    assert failure.status.status_code is StatusCode.ERROR


def test_what_the_server_asks_its_client_is_a_client_span_carried_in_meta(spans):
    client = McpClient("2025-11-25", elicitation={"action": "accept", "content": {"name": "Ada"}})
    assert client.call_tool("ask_name").text == "Hello, Ada!"
    client.close()
    call, ask = spans.one("tools/call ask_name"), spans.one("elicitation/create")
    assert ask.kind is SpanKind.CLIENT and ask.parent.span_id == call.context.span_id
    method, params = client.answers.asked[0]
    assert method == "elicitation/create"
    _, trace_id, span_id, _ = params["_meta"]["traceparent"].split("-")
    assert (trace_id, span_id) == (format(ask.context.trace_id, "032x"), format(ask.context.span_id, "016x"))


def test_the_operation_histogram_records_what_the_conventions_name(spans, metric_points):
    def count(**wanted: str) -> int:
        return sum(point.count for point in metric_points("mcp.server.operation.duration")
                   if all(point.attributes.get(key) == value for key, value in wanted.items()))

    before_ok = count(**{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo"})
    before_unknown = count(**{"mcp.method.name": "tools/call", "rpc.response.status_code": "-32602"})
    client = McpClient()
    client.call_tool("echo", text="hi")
    with pytest.raises(ErrorResponse):
        client.call_tool("a name a client made up")
    assert count(**{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo"}) == before_ok + 1
    assert count(**{"mcp.method.name": "tools/call", "rpc.response.status_code": "-32602"}) == before_unknown + 1
    for point in metric_points("mcp.server.operation.duration"):
        # Per-request values never become series: no ids, no session, no URI, no peer, no name a client made up.
        assert not {"jsonrpc.request.id", "mcp.session.id", "mcp.resource.uri", "client.address",
                    "client.port"} & set(point.attributes)
        assert point.attributes.get("gen_ai.tool.name") != "a name a client made up"


def test_a_session_ended_on_purpose_records_its_duration(spans, metric_points):
    before = sum(point.count for point in metric_points("mcp.server.session.duration"))
    client = McpClient("2025-11-25")
    client.initialize()
    client.close()
    points = metric_points("mcp.server.session.duration")
    assert sum(point.count for point in points) == before + 1
    assert any(point.attributes.get("mcp.protocol.version") == "2025-11-25" for point in points)


def test_without_a_configured_provider_the_hook_steps_aside(monkeypatch):
    # As in a process whose providers were never set (this one's are, by the other tests).
    monkeypatch.setattr(instruments, "_tracing", False)
    monkeypatch.setattr(instruments, "_measuring", False)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(instruments.metrics_api, "_METER_PROVIDER", None)
    assert not instruments.tracing() and not instruments.measuring()
    started: list[str] = []
    monkeypatch.setattr(instruments.tracer, "start_span", lambda *args, **kwargs: started.append(args[0]))
    assert McpClient().call_tool("echo", text="hi").text == "hi"
    assert started == []


def test_the_plain_view_under_wsgi_traces_as_the_channels_endpoint(spans, monkeypatch):
    """
    django_mcp.views.McpView through Django's WSGI handler (the test Client): the request is
    handed to the process's event loop, and its span still continues the proxy's traceparent.
    """
    import json

    from django.test import Client

    from django_mcp import fanout
    from django_mcp.transports.portal import portal

    monkeypatch.setattr(fanout, "_unconnected_workers", False)  # put back what serving the view says
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "wsgi"}, "_meta": meta}})
    try:
        answer = Client().post("/mcp", body, content_type="application/json", headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call", "mcp-name": "echo", "traceparent": traceparent(PROXY_TRACE, PROXY_SPAN)})
    finally:
        portal.stop()
    assert answer.status_code == 200, answer.content
    span = spans.one("tools/call echo")
    assert span.kind is SpanKind.SERVER and span.attributes["jsonrpc.request.id"] == "9"
    assert format(span.context.trace_id, "032x") == PROXY_TRACE and format(span.parent.span_id, "016x") == PROXY_SPAN


def test_what_a_client_sent_is_recorded_only_when_asked_and_redacted(spans, settings, metric_points):
    metric_points_of = metric_points
    client = McpClient()
    client.call_tool("echo", text="hi")
    assert not [key for key in spans.one("tools/call echo").attributes if "argument" in key or "variable" in key]
    spans.clear()
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TRACING_RECORD_ARGUMENTS": True}
    client.request("tools/call", {"name": "echo", "arguments": {"text": "hi", "token": "s3cret"}})
    client.get_prompt("summarize", topic="bees")
    recorded = spans.one("tools/call echo").attributes["gen_ai.tool.call.arguments"]
    assert json.loads(recorded) == {"text": "hi", "token": "[redacted]"}
    assert spans.one("prompts/get summarize").attributes["gen_ai.prompt.variable.topic"] == "bees"
    for point in metric_points_of("mcp.server.operation.duration"):
        assert not [key for key in point.attributes if "argument" in key or "variable" in key]
