"""Server-Sent Events framing (WHATWG HTML, "server-sent events")."""

import re
import time

from ..protocol import jsonrpc


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def event(data: bytes | str, *, event_name: str | None = None, event_id: str | None = None,
          retry_ms: int | None = None) -> bytes:
    """One event; multi-line data is split over several ``data:`` lines."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event_name is not None:
        lines.append(f"event: {event_name}")
    if retry_ms is not None:
        lines.append(f"retry: {retry_ms}")
    # Clients end a line at CR, LF or CRLF, so each of them starts a new data line.
    lines.extend(f"data: {line}" for line in _LINE_BREAK.split(data))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def message_event(message: dict, *, event_id: str | None = None, named: bool = False) -> bytes:
    """A JSON-RPC message as an event (``event: message`` when ``named``)."""
    data = jsonrpc.encode(message)
    if b"\n" in data or b"\r" in data:  # never from jsonrpc.encode, but kept correct if it ever were
        return event(data, event_name="message" if named else None, event_id=event_id)
    # Compact JSON is one line (RFC 8259 escapes line breaks inside strings), so the event is its
    # fields and one data line, framed without decoding and splitting it: every notification to
    # every stream comes this way.
    head = (b"id: " + str(event_id).encode() + b"\n" if event_id is not None else b"") + (
        b"event: message\n" if named else b"")
    return head + b"data: " + data + b"\n\n"


def shared_message_event(event: dict, *, named: bool = False) -> bytes:
    """
    ``message_event(event["message"])`` for a channel-layer event, encoded once: the worker hands
    the same event to every stream of its that listens (``transports/shared_groups.py``), and a
    thousand streams need one encoding, not a thousand. Kept in the event under a private key.
    """
    key = "_sse_named" if named else "_sse"
    chunk = event.get(key)
    if chunk is None:
        chunk = event[key] = message_event(event["message"], named=named)
    return chunk


def keepalive() -> bytes:
    """A comment line: ignored by clients, keeps proxies and idle timers from closing the stream."""
    return f": ping - {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}\n\n".encode()
