"""An ASGI application served from a Django request (``django_mcp.transports.django_exchange``)."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any

from asgiref.sync import sync_to_async

import pytest
from django.http import StreamingHttpResponse
from django.test import AsyncRequestFactory, RequestFactory, override_settings

from django_mcp.transports.django_exchange import asgi_scope, read_body, serve


def test_a_wsgi_request_becomes_an_http_scope() -> None:
    request = RequestFactory().post("/mcp?x=1", b"{}", content_type="application/json",
                                    headers={"mcp-session-id": "abc", "accept": "application/json"},
                                    REMOTE_ADDR="10.0.0.7", REMOTE_PORT="5151")
    scope = asgi_scope(request)
    headers = dict(scope["headers"])
    assert scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/mcp"
    assert scope["query_string"] == b"x=1"
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"content-length"] == b"2"
    assert headers[b"mcp-session-id"] == b"abc" and headers[b"accept"] == b"application/json"
    assert headers[b"host"] == b"testserver"  # no Host header: named as Django names the server
    assert scope["client"] == ("10.0.0.7", 5151) and scope["server"] == ("testserver", 80)


@override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_the_scheme_is_djangos() -> None:
    request = RequestFactory().post("/mcp", b"{}", content_type="application/json",
                                    headers={"x-forwarded-proto": "https"})
    assert asgi_scope(request)["scheme"] == "https"


def test_an_asgi_request_keeps_the_servers_scope() -> None:
    request = AsyncRequestFactory().post("/mcp", b"{}", content_type="application/json", headers={"x-a": "1"})
    scope = asgi_scope(request)
    assert scope["headers"] == request.scope["headers"] and scope is not request.scope


@override_settings(DJANGO_MCP={"MAX_REQUEST_BODY_SIZE": 10})
def test_the_body_is_read_up_to_one_byte_past_the_limit() -> None:
    factory = RequestFactory()
    assert read_body(factory.post("/mcp", b"0123456789", content_type="application/json")) == b"0123456789"
    # Announced larger: not read at all (the consumer refuses it from Content-Length).
    assert read_body(factory.post("/mcp", b"x" * 50, content_type="application/json")) == b""
    assert read_body(factory.get("/mcp")) == b""


def _app(*messages: dict[str, Any], after: Any = None) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert (await receive())["type"] == "http.request"
        for message in messages:
            await send(message)
        if after is not None:
            await after(receive)
    return app


async def test_an_answer_in_one_piece_is_an_http_response() -> None:
    request = AsyncRequestFactory().post("/mcp", b"{}", content_type="application/json")
    app = _app({"type": "http.response.start", "status": 201, "headers": [
                   (b"content-type", b"application/json"), (b"content-length", b"2"), (b"x-one", b"a"),
                   (b"x-one", b"b")]},
               {"type": "http.response.body", "body": b"{}"})
    response = await serve(app, request, asgi_scope(request), b"{}", stream=True)
    assert response.status_code == 201 and response.content == b"{}"
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["X-One"] == "a, b"


async def test_an_answer_without_a_type_gets_none_of_djangos() -> None:
    request = AsyncRequestFactory().post("/mcp")
    app = _app({"type": "http.response.start", "status": 202, "headers": []}, {"type": "http.response.body"})
    response = await serve(app, request, asgi_scope(request), b"", stream=True)
    assert response.status_code == 202 and "Content-Type" not in response.headers


@pytest.mark.django_db  # closing a response sends request_finished, whose receiver closes old connections
async def test_a_streamed_answer_streams_and_its_end_disconnects_the_app() -> None:
    request = AsyncRequestFactory().post("/mcp")
    heard: list[str] = []

    async def wait_for_the_end(receive: Any) -> None:
        heard.append((await receive())["type"])

    app = _app({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]},
               {"type": "http.response.body", "body": b"event: 1\n\n", "more_body": True},
               {"type": "http.response.body", "body": b"event: 2\n\n", "more_body": True},
               after=wait_for_the_end)
    response = await serve(app, request, asgi_scope(request), b"", stream=True)
    assert isinstance(response, StreamingHttpResponse)
    # As Django's ASGI handler reads it: until the client leaves, then closed from a thread.
    async with aclosing(aiter(response)) as chunks:
        assert await anext(chunks) == b"event: 1\n\n"
        assert await anext(chunks) == b"event: 2\n\n"
    assert heard == []
    await sync_to_async(response.close)()
    for _ in range(20):
        if heard:
            break
        await asyncio.sleep(0.01)
    assert heard == ["http.disconnect"]


async def test_without_streaming_the_whole_stream_is_one_response() -> None:
    request = AsyncRequestFactory().post("/mcp")
    app = _app({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]},
               {"type": "http.response.body", "body": b"a", "more_body": True},
               {"type": "http.response.body", "body": b"b", "more_body": False})
    response = await serve(app, request, asgi_scope(request), b"", stream=False)
    assert response.content == b"ab" and not response.streaming


async def test_an_app_that_never_answers_is_a_500(caplog: pytest.LogCaptureFixture) -> None:
    request = AsyncRequestFactory().post("/mcp")
    response = await serve(_app(), request, asgi_scope(request), b"", stream=True)
    assert response.status_code == 500
    assert "sent no response" in caplog.text


async def test_the_app_runs_outside_the_requests_thread_sensitive_context() -> None:
    """
    Django's ASGI handler serves each request in a ThreadSensitiveContext; the consumer opens its
    own per MCP request, as under Channels, so its own queries are not sent to a thread (and, on
    SQLite, a connection) made for each exchange.
    """
    from asgiref.sync import SyncToAsync, ThreadSensitiveContext

    seen: list[Any] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(SyncToAsync.thread_sensitive_context.get(None))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    request = AsyncRequestFactory().post("/mcp")
    async with ThreadSensitiveContext() as django_s:
        assert SyncToAsync.thread_sensitive_context.get(None) is django_s
        await serve(app, request, asgi_scope(request), b"", stream=True)
    assert seen == [None]
