"""Server-Sent Events framing."""

import json
import re

from django_mcp.transports import sse


def parse(stream: bytes) -> list[dict]:
    """A minimal SSE parser following the WHATWG rules (lines end with CRLF, LF or CR)."""
    events, current = [], {"data": []}
    for line in re.split(r"\r\n|\r|\n", stream.decode("utf-8")):
        if line == "":
            if current["data"] or len(current) > 1:
                events.append({**current, "data": "\n".join(current["data"])})
            current = {"data": []}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            current["data"].append(value)
        else:
            current[field] = value
    return events


def test_single_line_event():
    assert sse.event("hello") == b"data: hello\n\n"
    assert sse.event(b"bytes") == b"data: bytes\n\n"


def test_multi_line_data():
    chunk = sse.event("one\ntwo\n")
    assert chunk == b"data: one\ndata: two\ndata: \n\n"
    assert parse(chunk) == [{"data": "one\ntwo\n"}]


def test_fields_order():
    chunk = sse.event("x", event_name="message", event_id="s1-4", retry_ms=3000)
    assert chunk == b"id: s1-4\nevent: message\nretry: 3000\ndata: x\n\n"
    assert parse(chunk) == [{"id": "s1-4", "event": "message", "retry": "3000", "data": "x"}]


def test_empty_data_priming_event():
    assert sse.event("", event_id="p0") == b"id: p0\ndata: \n\n"


def test_utf8():
    assert sse.event("café") == "data: café\n\n".encode()


def test_message_event_round_trips_json():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "line1\nline2", "é": True}}
    chunk = sse.message_event(message)
    assert chunk.startswith(b"data: {")
    assert chunk.count(b"\n") == 2  # JSON escapes newlines: one data line
    [event] = parse(chunk)
    assert json.loads(event["data"]) == message
    assert "event" not in event
    named = parse(sse.message_event(message, named=True, event_id="7"))[0]
    assert named["event"] == "message" and named["id"] == "7"


def test_message_event_is_framed_as_the_general_event_would_frame_it():
    # message_event frames compact JSON directly; it must give the very bytes event() gives.
    from django_mcp.protocol import jsonrpc

    messages = [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
                {"jsonrpc": "2.0", "id": "x", "result": {"text": "a\r\nb\rc\u2028d", "n": [1, 2.5, None]}}]
    for message in messages:
        for named in (False, True):
            for event_id in (None, "s1-4"):
                assert sse.message_event(message, named=named, event_id=event_id) == sse.event(
                    jsonrpc.encode(message), event_name="message" if named else None, event_id=event_id)


def test_keepalive_is_a_comment():
    chunk = sse.keepalive()
    assert chunk.startswith(b": ping - ")
    assert chunk.endswith(b"\n\n")
    assert parse(chunk) == []


def test_carriage_returns_in_data_survive():
    assert parse(sse.event("a\rb")) == [{"data": "a\nb"}]
