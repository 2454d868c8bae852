"""
The HTTP layer fuzzed in process: the project's ASGI application (``django_mcp.asgi.application``
around Django's, as ``tests/asgi.py`` builds it) serving ``/mcp``, ``/sse`` and ``/messages/`` on the
default test site.

- Legacy Streamable HTTP: a near-valid ``initialize``, then POSTs (single messages and batches),
  GET streams and DELETEs on the session it made (MCP spec 2025-11-25, basic/transports#streamable-http).
- 2026-07-28: stateless POSTs whose mirrored headers agree with the body, or not
  (MCP spec 2026-07-28, basic/transports/streamable-http).
- Raw: any method, path variant, headers and bytes.
- HTTP+SSE: a ``/sse`` stream, and fuzzed POSTs to its ``/messages/`` URL whose answers must
  arrive on the stream (MCP spec 2024-11-05, basic/transports#http-with-sse).

Invariant: ``checks.check_http_answer`` for every answer; a request's response reaches the client;
nothing escapes the application; every wait is bounded (``asgi_client.TIMEOUT``).
"""

import json
from typing import Any

import pytest
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.test import override_settings
from hypothesis import event as record, given
from hypothesis import strategies as st

import django_mcp.asgi
from django_mcp.protocol import jsonrpc
from django_mcp.protocol.errors import McpError

from .asgi_client import Answer, EventReader, Exchange, request
from .checks import check_http_answer, check_server_message, require
from .counting import count
from .http_strategies import (BASE, damaged_base, encode_body, modern_headers, raw_bodies, raw_header_values)
from .profiles import fuzz_settings
from .strategies import initialize_params, legacy_messages, modern_messages, weighted

pytestmark = pytest.mark.django_db(transaction=True)

# A tool that asks a legacy client (elicitation, sampling, roots) waits this long for the answer
# the fuzzer never sends, instead of the five minutes of the default.
CLIENT_WAIT = 0.3


@pytest.fixture(scope="module", autouse=True)
def quick_client_requests():
    overrides = {**settings.DJANGO_MCP, "CLIENT_REQUEST_TIMEOUT_SECONDS": CLIENT_WAIT,
                 "FREEZE_STARTUP_OBJECTS": False}
    with override_settings(DJANGO_MCP=overrides):
        yield


_app: Any = None


def app() -> Any:
    """The project's ASGI application, built once (without freezing the test process's objects)."""
    global _app
    if _app is None:
        _app = django_mcp.asgi.application(get_asgi_application())
    return _app


def request_id_of(message: Any) -> Any:
    """The id of a message that is a valid JSON-RPC request, else None."""
    try:
        jsonrpc.validate_message(message)
    except McpError:
        return None
    return message["id"] if jsonrpc.is_request(message) else None


def answered(answer: Answer, carried: Any, request_id: Any) -> None:
    """A 200 to a single request carries its response (as JSON, or among the SSE events)."""
    if request_id is None or answer.status != 200 or answer.held:
        return
    responses = carried if isinstance(carried, list) else [carried]
    ids = [item.get("id") for item in responses if isinstance(item, dict) and "method" not in item]
    require(request_id in ids, f"no response to request {request_id!r}", (answer.status, answer.body[:800]))


async def post(path: str, headers: list[tuple[bytes, bytes]], payload: Any, era: str, *, hold: bool = False,
               query: bytes = b"") -> tuple[Answer, Any]:
    """POST a JSON payload, check the answer; returns it and what it carried."""
    answer = await request(app(), "POST", path, headers, encode_body(payload), query=query, hold=hold)
    carried = check_http_answer(answer.status, answer.headers, answer.body, era)
    record(describe(answer, carried))
    return answer, carried


def describe(answer: Answer, carried: Any) -> str:
    """A label for Hypothesis's statistics (--hypothesis-show-statistics): what kind of answer this was."""
    kind = "sse" if answer.is_sse else "json" if carried is not None else "empty"
    if isinstance(carried, dict):
        kind += f" {carried['error']['code']}" if "error" in carried else " result"
    return f"{answer.status} {kind}"


def legacy_steps() -> st.SearchStrategy[tuple[str, Any]]:
    """What a legacy client does next: a message (mostly), a batch, a GET stream, a DELETE."""
    return weighted(
        (12, st.tuples(st.just("message"), legacy_messages())),
        (2, st.tuples(st.just("batch"), st.lists(legacy_messages(), min_size=0, max_size=3))),
        (1, st.tuples(st.just("get"), st.none())), (1, st.tuples(st.just("delete"), st.none())))


@fuzz_settings("http_legacy")
@given(init=initialize_params(), init_headers=damaged_base(),
       steps=st.lists(legacy_steps(), min_size=1, max_size=4), data=st.data())
async def test_legacy_session_over_http(init: Any, init_headers: Any, steps: list[Any], data: st.DataObject) -> None:
    count("http_legacy")
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    answer, _ = await post("/mcp", init_headers, message, "legacy")
    session_id = answer.headers.get(b"mcp-session-id")
    if answer.status != 200 or session_id is None:
        return
    version = json.loads(answer.body)["result"]["protocolVersion"].encode()
    try:
        for kind, payload in steps:
            named = data.draw(weighted((12, st.just(session_id)), (1, raw_header_values())), label="session id")
            headers = [*BASE, (b"mcp-session-id", named)]
            if data.draw(st.booleans()):
                headers.append((b"mcp-protocol-version", data.draw(weighted((12, st.just(version)),
                                                                            (1, raw_header_values())))))
            if kind == "message":
                answer, carried = await post("/mcp", headers, payload, "legacy")
                answered(answer, carried, request_id_of(payload))
            elif kind == "batch":
                await post("/mcp", headers, payload, "legacy")
            else:
                method = "GET" if kind == "get" else "DELETE"
                headers[2] = (b"accept", b"text/event-stream")
                answer = await request(app(), method, "/mcp", headers, hold=True)
                check_http_answer(answer.status, answer.headers, answer.body, "legacy")
    finally:
        await request(app(), "DELETE", "/mcp", [*BASE, (b"mcp-session-id", session_id)])


@fuzz_settings("http_modern")
@given(message=weighted((12, modern_messages(consistent=True)), (2, modern_messages(consistent=False)),
                        (1, legacy_messages())),
       base=damaged_base(), data=st.data())
async def test_modern_request_over_http(message: Any, base: Any, data: st.DataObject) -> None:
    count("http_modern")
    headers = [*base, *data.draw(modern_headers(message), label="mirrored headers")]
    # subscriptions/listen holds its stream open until the client leaves: read its first event.
    hold = isinstance(message, dict) and message.get("method") == "subscriptions/listen"
    answer, carried = await post("/mcp", headers, message, "modern", hold=hold)
    if answer.held:
        first = carried[0] if carried else None
        require(isinstance(first, dict) and first.get("method") == "notifications/subscriptions/acknowledged",
                "a listen stream that does not start with its acknowledgement", answer.body[:500])
    answered(answer, carried, request_id_of(message))


EXTRA_HEADERS = [b"mcp-session-id", b"mcp-protocol-version", b"mcp-method", b"mcp-name", b"origin", b"last-event-id",
                 b"access-control-request-method"]


@fuzz_settings("http_raw")
@given(method=st.sampled_from(["POST"] * 6 + ["GET", "DELETE", "PUT", "OPTIONS", "HEAD", "PATCH"]),
       path=st.sampled_from(["/mcp", "/mcp/", "/sse", "/messages/", "/messages"]), base=damaged_base(),
       extra=st.lists(st.tuples(st.sampled_from(EXTRA_HEADERS), raw_header_values()), max_size=3),
       body=raw_bodies(), query=st.one_of(st.just(b""), st.binary(max_size=20), st.just(b"session_id=0")))
async def test_raw_requests(method: str, path: str, base: Any, extra: Any, body: bytes, query: bytes) -> None:
    count("http_raw")
    # A GET may open a stream that stays open (/sse, a session's stream): read its start, let go.
    answer = await request(app(), method, path, [*base, *extra], body, query=query, hold=True)
    record(describe(answer, check_http_answer(answer.status, answer.headers, answer.body)))


@fuzz_settings("http_sse")
@given(init=initialize_params(),
       posts=st.lists(weighted((6, legacy_messages()), (1, raw_bodies())), min_size=1, max_size=4),
       data=st.data())
async def test_http_sse_session(init: Any, posts: list[Any], data: st.DataObject) -> None:
    count("http_sse")
    stream = Exchange(app(), "GET", "/sse", [(b"host", b"testserver"), (b"accept", b"text/event-stream")])
    try:
        opened = await stream.response(hold=True)
        require(opened.status == 200 and opened.is_sse, "GET /sse did not open a stream", opened)
        events = EventReader(stream, opened.body.replace(b"\r\n", b"\n"))
        name, url = await events.next_event()
        require(name == "endpoint" and "session_id=" in url, "the first event is not the endpoint", (name, url))
        query = url.partition("?")[2].encode()
        initialize = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}
        for message in [initialize, *posts]:
            wrong_session = data.draw(st.integers(0, 9)) == 0
            body = message if isinstance(message, bytes) else encode_body(message)
            answer = await request(app(), "POST", "/messages/", list(BASE), body,
                                   query=b"session_id=0" if wrong_session else query)
            record(describe(answer, check_http_answer(answer.status, answer.headers, answer.body)))
            request_id = None if isinstance(message, bytes) else request_id_of(message)
            if answer.status == 202 and request_id is not None:
                await until_answered(events, request_id)
    finally:
        await stream.close()


async def until_answered(events: EventReader, request_id: Any) -> None:
    """Read the stream until the response to ``request_id`` arrives; every event on the way must be JSON-RPC."""
    while True:
        event = await events.next_event()
        require(event is not None, f"the stream ended before the response to {request_id!r}", request_id)
        name, data = event
        message = check_server_message(json.loads(data))
        if "method" not in message and message.get("id") == request_id:
            record("sse " + (f"error {message['error']['code']}" if "error" in message else "result"))
            return
