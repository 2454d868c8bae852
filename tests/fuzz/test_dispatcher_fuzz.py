"""
The dispatcher fuzzed directly (``Dispatcher.handle_request`` on the default test site), the way
every transport drives it: the body read (``jsonrpc.decode``), the JSON-RPC envelope checked
(``jsonrpc.validate_message``), for 2026-07-28 the ``_meta`` envelope (``read_envelope``), then
the request.

- Legacy: an ``initialize`` (near-valid params) makes a session, then up to four requests run on
  it; the server's own requests (elicitation, sampling, roots) are answered by a fuzzed client.
- 2026-07-28: one stateless request with a consistent or an inconsistent ``_meta``; when it asks
  for input, up to two retries carry its ``requestState`` and fuzzed ``inputResponses``
  (MCP spec 2026-07-28, basic/patterns/mrtr).

Invariant (``checks.py``): every answer is a JSON-RPC response with the request's id, encodable by
the server, never an internal error; nothing escapes but :class:`McpError` from the envelope
checks; nothing takes longer than ``TIMEOUT``.
"""

import asyncio
import json
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from hypothesis import given
from hypothesis import strategies as st

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.envelope import read_envelope
from django_mcp.protocol.errors import McpError, ParseError
from django_mcp.protocol.handlers.lifecycle import handshake
from django_mcp.request_state import SignedStateCodec
from django_mcp.sites import get_default_site

from .checks import check_response, check_server_message
from .counting import count
from .profiles import fuzz_settings
from .strategies import (initialize_params, input_responses, json_values, legacy_messages, modern_messages,
                         weighted)

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10.0


class FuzzSession:
    """
    A legacy session as the protocol layer sees it (``protocol.context.LegacySession``), kept in
    memory: the dispatcher's side of sessions is what is fuzzed here; the transports' stores are
    fuzzed through HTTP in ``test_http_fuzz.py``.
    """

    def __init__(self, protocol_version: str, capabilities: dict[str, Any], client_info: Any) -> None:
        self.id = "fuzz"
        self.protocol_version = protocol_version
        self.client_capabilities = capabilities
        self.client_info = client_info
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()

    async def set_log_level(self, level: str) -> None:
        self.log_level = level

    async def subscribe(self, uri: str) -> None:
        self.subscriptions.add(uri)

    async def unsubscribe(self, uri: str) -> None:
        self.subscriptions.discard(uri)


def client_answers(method: str) -> st.SearchStrategy[Any]:
    """What a fuzzed client answers the server's own request: a plausible result, or junk."""
    plausible = {
        "elicitation/create": st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"])},
                                                    optional={"content": st.dictionaries(st.text(max_size=8),
                                                                                         json_values(3), max_size=3)}),
        "sampling/createMessage": st.fixed_dictionaries({
            "role": st.just("assistant"), "model": st.just("fuzz"),
            "content": st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)})}),
        "roots/list": st.fixed_dictionaries({"roots": st.lists(st.fixed_dictionaries(
            {"uri": st.sampled_from(["file:///tmp", "not a uri"])}), max_size=2)}),
    }
    return st.one_of(plausible.get(method, st.just({})), json_values(6))


class FuzzClient:
    """The client half of a request: collects what the server streams, answers what it asks."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.sent: list[dict[str, Any]] = []

    async def send_message(self, message: dict[str, Any]) -> None:
        self.sent.append(check_server_message(message))

    async def send_request(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        check_server_message(jsonrpc.request("srv-1", method, params))
        return self.data.draw(client_answers(method), label=f"answer to {method}")

    async def listen(self, honoured: dict[str, Any]) -> Any:
        async def nothing() -> Any:
            return
            yield  # an async generator that ends at once: no change happens during the test

        return nothing()


_dispatcher: Dispatcher | None = None


def dispatcher() -> Dispatcher:
    """The dispatcher of the default site, made once (as the HTTP transport does per site)."""
    global _dispatcher
    if _dispatcher is None or _dispatcher.backend is not get_default_site():
        _dispatcher = Dispatcher(get_default_site(), state_codec=SignedStateCodec())
    return _dispatcher


class Unreadable(Exception):
    """The body a client would write for this message is refused by ``jsonrpc.decode``."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response


def as_received(message: Any) -> Any:
    """
    The message as a transport hands it to the dispatcher: written as JSON by the client, read
    back by ``jsonrpc.decode`` (which refuses, for one, strings with unpaired surrogates). A value
    too deep for this test's stack to write is handed over as it is.
    """
    try:
        body = json.dumps(message)
    except RecursionError:
        return message
    try:
        return jsonrpc.decode(body)
    except ParseError as exc:
        raise Unreadable(jsonrpc.error_response(None, exc)) from None


def envelope_refusal(message: Any, modern: bool) -> dict[str, Any] | None:
    """The error a transport sends for a message whose envelope is wrong, else None."""
    try:
        jsonrpc.validate_message(message)
        if modern and jsonrpc.is_request(message):
            read_envelope(message.get("params"))
    except McpError as exc:
        return jsonrpc.error_response(jsonrpc.request_id_or_none(message), exc)
    return None


async def answer(message: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    try:
        return await asyncio.wait_for(dispatcher().handle_request(message, ctx), TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"no answer within {TIMEOUT} s to {message!r:.500}") from None


@fuzz_settings("dispatcher_legacy")
@given(init=initialize_params(), messages=st.lists(legacy_messages(), min_size=1,
                                                                                max_size=4), data=st.data())
async def test_legacy_session(init: Any, messages: list[Any], data: st.DataObject) -> None:
    count("dispatcher_legacy")
    user = AnonymousUser()
    try:
        init = as_received(init)
        done = handshake(dispatcher(), init if isinstance(init, dict) else None, user)
    except Unreadable as refused:
        check_response(refused.response, None)
        return
    except McpError as exc:
        check_response(jsonrpc.error_response(0, exc), 0)
        return
    check_response(jsonrpc.result_response(0, done.result), 0, era="legacy")
    session = FuzzSession(done.protocol_version, done.client_capabilities, done.client_info)
    for message in messages:
        try:
            message = as_received(message)
        except Unreadable as refused:
            check_response(refused.response, None)
            continue
        refusal = envelope_refusal(message, modern=False)
        if refusal is not None:
            check_response(refusal, None if refusal["id"] is None else message["id"])
            continue
        if not jsonrpc.is_request(message):
            continue  # notifications and responses are the transport's business
        client = FuzzClient(data)
        ctx = RequestContext.for_legacy(session, message, user=user, send_message=client.send_message,
                                        send_request=client.send_request)
        check_response(await answer(message, ctx), message["id"], era="legacy")


@fuzz_settings("dispatcher_modern")
@given(message=weighted((4, modern_messages(consistent=True)), (1, modern_messages(consistent=False))), data=st.data())
async def test_modern_request(message: Any, data: st.DataObject) -> None:
    count("dispatcher_modern")
    for _round in range(3):
        try:
            message = as_received(message)
        except Unreadable as refused:
            check_response(refused.response, None)
            return
        refusal = envelope_refusal(message, modern=True)
        if refusal is not None:
            check_response(refusal, None if refusal["id"] is None else message["id"])
            return
        if not jsonrpc.is_request(message):
            return
        client = FuzzClient(data)
        ctx = RequestContext.for_modern(read_envelope(message["params"]), message, user=AnonymousUser(),
                                        send_message=client.send_message, listen=client.listen)
        response = check_response(await answer(message, ctx), message["id"], era="modern")
        result = response.get("result") or {}
        if result.get("resultType") != "input_required":
            return
        # Retry as a client would: the state back, answers (right or wrong) to what was asked.
        params = {**message["params"], "requestState": result["requestState"],
                  "inputResponses": data.draw(input_responses(), label="inputResponses")}
        message = {**message, "params": params}
