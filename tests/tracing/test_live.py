"""
django_mcp.tracing from outside: live servers configured with the OpenTelemetry SDK as a project
configures it (``tests/tracing/otel_setup.py``: OTLP/HTTP export, the database drivers
instrumented), exporting to a receiver the test runs (``otlp_receiver.py``, decoding the protobuf
with ``opentelemetry-proto``); the official SDK client in this process, whose own spans go to the
in-memory exporter and whose ``traceparent`` travels in ``params._meta``.

- every transport and era, and the plain view on gunicorn and uvicorn: the server span is the
  child of the SDK client's span;
- the ORM's queries nest inside the MCP span; the duration metrics arrive;
- two daphne workers on PostgreSQL and Redis: a request on A announces a change, B delivers it to
  the stream it holds, and the trace is reassembled by its id across both;
- a durable task made on daphne runs in a ``db_worker`` process, in a span linked to the call
  that made it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from opentelemetry.trace import SpanKind

from tests.live import ROOT, GunicornServer, LiveServer, UvicornServer, server_env
from tests.tracing.otlp_receiver import OtlpReceiver, Span
from tests.tasks.deployment import DbWorker
from tests.transports.sse_client import LegacySession
from tests.transports.workers import own_redis_prefix


TIMEOUT = 30
TRANSPORTS = ["2026-07-28", "legacy", "http+sse", "stdio"]
CLIENT_TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as started:
        yield started


def otel_env(base: Mapping[str, str], receiver: OtlpReceiver, service: str) -> dict[str, str]:
    return {**base, "DJANGO_SETTINGS_MODULE": "tests.tracing.otel_settings",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": service}


@pytest.fixture(scope="module")
def server(sqlite_server_env: Mapping[str, str], receiver: OtlpReceiver) -> Iterator[LiveServer]:
    with LiveServer(env=otel_env(sqlite_server_env, receiver, "mcp-live"), name="tracing") as started:
        yield started


@asynccontextmanager
async def connected(server: LiveServer, env: dict[str, str], transport: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_stdio"],
                                       env=server_env({**env, "OTEL_SERVICE_NAME": "mcp-stdio"}), cwd=str(ROOT))
        async with Client(params, mode="legacy") as client:
            yield client
    elif transport == "http+sse":
        async with Client(sse_client(f"{server.url}/sse"), mode="legacy") as client:
            yield client
    else:
        async with Client(server.mcp_url, mode=transport) as client:
            yield client


def server_span_of(client_span: Any, name: str) -> Any:
    def find(spans: list[Span]) -> Span | None:
        trace_id = format(client_span.context.trace_id, "032x")
        return next((span for span in spans if span.name == name and span.trace_id == trace_id), None)

    return find


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_server_span_continues_the_sdk_clients_trace(server, sqlite_server_env, receiver, spans, transport):
    env = otel_env(sqlite_server_env, receiver, "mcp-live")
    async with asyncio.timeout(TIMEOUT), connected(server, env, transport) as client:
        result = await client.call_tool("echo", {"text": "traced"})
    assert result.content[0].text == "traced"
    # The SDK names its client spans "MCP send {method} {target}".
    sent = [span for span in spans.named("MCP send tools/call echo") if span.kind is SpanKind.CLIENT]
    assert len(sent) == 1, [span.name for span in spans.get_finished_spans()]
    served = receiver.wait_for(server_span_of(sent[0], "tools/call echo"))
    assert served.kind == "SERVER" and served.parent_span_id == format(sent[0].context.span_id, "016x")
    assert served.attributes["gen_ai.tool.name"] == "echo"
    assert served.attributes["network.transport"] == ("pipe" if transport == "stdio" else "tcp")
    assert served.attributes["mcp.protocol.version"] == ("2026-07-28" if transport == "2026-07-28" else "2025-11-25")
    assert ("mcp.session.id" in served.attributes) is (transport != "2026-07-28")  # stdio: the process is the session
    assert served.service == ("mcp-stdio" if transport == "stdio" else "mcp-live")


@pytest.mark.parametrize("kind", ["gunicorn", "uvicorn"])
async def test_the_plain_view_continues_the_sdk_clients_trace(sqlite_server_env, receiver, spans, kind):
    """django_mcp.views.McpView on gunicorn (WSGI: the process's own event loop) and on uvicorn (Django's ASGI handler)."""
    server_class = GunicornServer if kind == "gunicorn" else UvicornServer
    with server_class(env=otel_env(sqlite_server_env, receiver, f"plain-{kind}")) as server:
        async with asyncio.timeout(TIMEOUT), Client(server.mcp_url, mode="2026-07-28") as client:
            result = await client.call_tool("echo", {"text": kind})
        assert result.content[0].text == kind
        sent = next(span for span in spans.named("MCP send tools/call echo") if span.kind is SpanKind.CLIENT)
        served = receiver.wait_for(server_span_of(sent, "tools/call echo"))
    assert served.service == f"plain-{kind}" and served.kind == "SERVER"
    assert served.parent_span_id == format(sent.context.span_id, "016x")


async def test_the_orms_queries_nest_inside_the_mcp_span(server, receiver, spans):
    async with asyncio.timeout(TIMEOUT), Client(server.mcp_url, mode="2026-07-28") as client:
        await client.list_prompts()  # the stored prompts (django_mcp.stored_prompts) are rows
    sent = next(span for span in spans.named("MCP send prompts/list") if span.kind is SpanKind.CLIENT)
    listing = receiver.wait_for(server_span_of(sent, "prompts/list"))

    def queries(found: list[Span]) -> list[Span]:
        return [span for span in found if span.parent_span_id == listing.span_id and span.kind == "CLIENT"
                and "SELECT" in span.name.upper() + str(span.attributes.get("db.statement", ""))]


    nested = receiver.wait_for(queries)
    assert all(span.trace_id == listing.trace_id for span in nested)


async def test_the_duration_metrics_arrive(server, receiver, spans):
    async with asyncio.timeout(TIMEOUT), Client(server.mcp_url, mode="legacy") as client:
        await client.call_tool("echo", {"text": "measured"})

    def operation_points(found: list[Span]) -> list[dict[str, Any]]:
        with receiver.lock:
            return [point for service, name, points in receiver.metrics if name == "mcp.server.operation.duration"
                    for point in points if point.get("gen_ai.tool.name") == "echo"]

    points = receiver.wait_for(operation_points)
    assert points[0]["mcp.method.name"] == "tools/call" and "jsonrpc.request.id" not in points[0]
    # The SDK client ends its session when it leaves: the session's length is recorded.
    receiver.wait_for(lambda found: any(name == "mcp.server.session.duration" for _, name, _ in receiver.metrics))


def test_a_notification_announced_on_one_worker_and_delivered_by_another_is_one_trace(services, receiver):
    with LiveServer(env=otel_env(services, receiver, "worker-a"), name="tracing-a") as a, \
            LiveServer(env=otel_env(services, receiver, "worker-b"), name="tracing-b") as b:
        session = LegacySession.start(a)
        stream = session.open_get_stream(b)
        try:
            traceparent = f"00-{CLIENT_TRACE}-1111111111111111-01"
            response = session.call(a, "tools/call", {"name": "test_trigger_tool_change", "arguments": {},
                                                      "_meta": {"traceparent": traceparent}})
            assert response["result"]["isError"] is False, response
            message = stream.wait_for(lambda sent: sent.get("method") == "notifications/tools/list_changed")[0]
        finally:
            stream.close()
    # The client gets the trace context too, unprefixed in _meta (MCP spec 2026-07-28, basic#meta).
    assert message["params"]["_meta"]["traceparent"].split("-")[1] == CLIENT_TRACE

    def whole_trace(found: list[Span]) -> dict[str, Span] | None:
        mine = {(span.service, span.name): span for span in found if span.trace_id == CLIENT_TRACE}
        wanted = [("worker-a", "tools/call test_trigger_tool_change"), ("worker-a", "notifications/tools/list_changed"),
                  ("worker-b", "deliver notifications/tools/list_changed")]
        return {name: mine[(service, name)] for service, name in wanted} if all(key in mine for key in wanted) else None

    trace = receiver.wait_for(whole_trace)
    print(receiver.tree(CLIENT_TRACE))  # the how-to's picture of this trace (docs/howto/tracing.md)
    call = trace["tools/call test_trigger_tool_change"]
    announced = trace["notifications/tools/list_changed"]
    delivered = trace["deliver notifications/tools/list_changed"]
    assert call.parent_span_id == "1111111111111111" and call.kind == "SERVER"
    assert announced.parent_span_id == call.span_id and announced.kind == "CLIENT"
    assert delivered.parent_span_id == announced.span_id and delivered.kind == "CONSUMER"
    assert delivered.attributes["django_mcp.streams"] >= 1


def test_a_durable_tasks_run_in_a_db_worker_is_linked_to_the_call_that_made_it(services, receiver):
    env = {**own_redis_prefix(services, "tracing_tasks"), "MCP_TEST_TASKS": "db",
           **otel_env({}, receiver, "daphne"), "DJANGO_SETTINGS_MODULE": "tests.tracing.otel_durable_settings"}
    worker = DbWorker({**env, "OTEL_SERVICE_NAME": "db-worker"}, "tracing", "durable_live")
    with LiveServer(env=env, name="tracing-tasks") as server:
        worker.start()
        try:
            session = LegacySession.start(server)
            created = session.call(server, "tools/call", {"name": "durable_pid", "arguments": {},
                                                          "task": {"ttl": 60000}})
            task_id = created["result"]["task"]["taskId"]
            answered = session.call(server, "tasks/result", {"taskId": task_id})
            assert answered["result"]["content"][0]["text"] == f"ran in pid {worker.pid}", answered

            def made_and_run(found: list[Span]) -> tuple[Span, Span] | None:
                made = next((span for span in found
                             if span.service == "daphne" and span.name == "tools/call durable_pid"), None)
                ran = next((span for span in found
                            if span.service == "db-worker" and span.name == "tools/call durable_pid"), None)
                return (made, ran) if made and ran else None

            # Before the worker stops: its batch of spans goes out within a fifth of a second.
            made, ran = receiver.wait_for(made_and_run)
        finally:
            worker.stop()
    assert made.kind == "SERVER" and ran.kind == "CONSUMER" and ran.attributes["django_mcp.task.id"] == task_id
    # Its own trace, linked to the call: a task may run long after, or again after a worker died.
    assert ran.trace_id != made.trace_id and not ran.parent_span_id
    assert ran.links == [(made.trace_id, made.span_id)]
