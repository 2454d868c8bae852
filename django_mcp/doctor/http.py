"""
The doctor's HTTP client: the standard library's ``http.client``, one connection per request, and
never a redirect followed. A client that meets a redirect on the MCP endpoint or a metadata
document fails there (a POST is not re-sent elsewhere), so the doctor reports the redirect itself.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


#: What the doctor says it is, so the server's logs and access logs tell its requests apart.
USER_AGENT = "django-mcp-doctor/1"
#: No document the doctor reads is larger; a bigger answer is cut there (and fails to parse).
MAX_BODY = 1024 * 1024


class HttpError(Exception):
    """The request got no HTTP answer at all: refused, timed out, TLS failed, or the name did not resolve."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        #: Connected, but no answer came in time (a stream held back by a buffering proxy looks so).
        self.timed_out = timed_out


@dataclass
class Response:
    """A complete HTTP answer: status, headers (looked up case-insensitively), body."""

    url: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    elapsed: float = 0.0
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        """The first value of header ``name``, or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    @property
    def is_redirect(self) -> bool:
        return self.status in (301, 302, 303, 307, 308)

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def text(self, limit: int = 200) -> str:
        """The start of the body, for a report."""
        return self.body[:limit].decode("utf-8", "replace").strip()


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError(f"{url} is not an http:// or https:// URL")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if parts.scheme == "https":
        # The default context verifies the certificate and the host name, as every MCP client does.
        return http.client.HTTPSConnection(parts.netloc, timeout=timeout, context=ssl.create_default_context()), path
    return http.client.HTTPConnection(parts.netloc, timeout=timeout), path


def _send(method: str, url: str, headers: Mapping[str, str] | None, body: Any,
          timeout: float) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    connection, answer, _ = _send_on_socket(method, url, headers, body, timeout)
    return connection, answer


def _send_on_socket(method: str, url: str, headers: Mapping[str, str] | None, body: Any, timeout: float
                    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, socket.socket | None]:
    """:func:`_send`, and the socket: an answer without a length takes it over from the connection."""
    connection, path = _connection(url, timeout)
    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    data: bytes | None
    if body is None or isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = json.dumps(body).encode()
        all_headers.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=data, headers=all_headers)
        sock = connection.sock
        return connection, connection.getresponse(), sock
    except ssl.SSLError as error:
        connection.close()
        raise HttpError(f"TLS failed: {error.reason or error}") from None
    except TimeoutError:
        connection.close()
        raise HttpError(f"no answer within {timeout:g} s", timed_out=True) from None
    except OSError as error:
        connection.close()
        raise HttpError(str(error) or error.__class__.__name__) from None


def request(method: str, url: str, *, headers: Mapping[str, str] | None = None, body: Any = None,
            timeout: float = 10.0) -> Response:
    """Send one request and read the whole answer (up to :data:`MAX_BODY` bytes)."""
    started = time.monotonic()
    connection, answer = _send(method, url, headers, body, timeout)
    try:
        content = b"" if method == "HEAD" else answer.read(MAX_BODY)
    except (OSError, http.client.HTTPException) as error:
        raise HttpError(f"the answer broke off: {error}") from None
    finally:
        connection.close()
    return Response(url, answer.status, answer.reason, answer.getheaders(), content, time.monotonic() - started)


def sse_events(answer: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """
    The JSON ``data`` of each event of a ``text/event-stream``, as soon as the blank line ending it
    arrives (HTML Living Standard, "Server-sent events", parsing an event stream). Comments
    (keep-alives) and events without data (2025-11-25 priming events) are skipped.
    """
    data: list[str] = []
    while True:
        raw = answer.readline(MAX_BODY)
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            try:
                yield json.loads("\n".join(data))
            except ValueError:
                pass
            data = []


def exchange(url: str, *, headers: Mapping[str, str], body: Any, timeout: float = 10.0) -> Response:
    """
    POST a JSON-RPC message and read the answer: a JSON body, or an event stream read event by
    event, each stamped with the seconds since the request was sent (``Response.events``), so a
    caller can tell whether events arrived one by one or all at once at the end.
    """
    started = time.monotonic()
    connection, answer = _send("POST", url, headers, body, timeout)
    response = Response(url, answer.status, answer.reason, answer.getheaders())
    try:
        if response.content_type == "text/event-stream":
            for event in sse_events(answer):
                response.events.append((time.monotonic() - started, event))
                if "id" in event and ("result" in event or "error" in event):
                    break  # the answer ends the exchange, whether or not the stream is closed after it
        else:
            response.body = answer.read(MAX_BODY)
    except (OSError, http.client.HTTPException) as error:
        raise HttpError(f"the answer broke off: {error}") from None
    finally:
        connection.close()
    response.elapsed = time.monotonic() - started
    return response


class Stream:
    """
    An open ``text/event-stream`` answer to a GET, read event by event against a deadline (a
    stream may stay open for good, and a proxy that buffers sends nothing): the 2024-11-05
    HTTP+SSE transport, whose stream carries the events that matter.
    """

    def __init__(self, url: str, connection: http.client.HTTPConnection, answer: http.client.HTTPResponse,
                 sock: socket.socket | None, started: float) -> None:
        self.response = Response(url, answer.status, answer.reason, answer.getheaders())
        self.connection, self.answer, self.sock, self.started = connection, answer, sock, started
        self.data: list[str] = []
        self.name = ""

    def next_event(self, deadline: float) -> tuple[str, str] | None:
        """
        The next event's type (``message`` when it names none) and data, or None when the stream
        ends, breaks off or ``deadline`` (``time.monotonic()``) passes first. Fields as the HTML
        Living Standard parses them ("Server-sent events", interpreting an event stream): comments
        (keep-alives) skipped, an event without data not dispatched.
        """
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.sock is None:
                return None
            # The socket's timeout bounds each read; shortening it to what is left bounds them all.
            self.sock.settimeout(remaining)
            try:
                raw = self.answer.readline(MAX_BODY)
            except (OSError, http.client.HTTPException):
                return None  # a timeout leaves the socket unusable: the stream is done either way
            if not raw:
                return None
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if not line:
                if self.data:
                    event = (self.name or "message", "\n".join(self.data))
                    self.data, self.name = [], ""
                    return event
                self.name = ""
            elif field == "event":
                self.name = value
            elif field == "data":
                self.data.append(value)

    def close(self) -> None:
        """Close the connection: for the 2024-11-05 transport this also ends the session."""
        self.answer.close()
        self.connection.close()
        if self.sock is not None:
            self.sock.close()


def open_stream(url: str, *, headers: Mapping[str, str], timeout: float = 10.0) -> Stream:
    """GET ``url`` and keep the answer open: read an event stream with :meth:`Stream.next_event`, then close it."""
    started = time.monotonic()
    connection, answer, sock = _send_on_socket("GET", url, headers, None, timeout)
    stream = Stream(url, connection, answer, sock, started)
    if stream.response.content_type != "text/event-stream":
        try:
            stream.response.body = answer.read(MAX_BODY)
        except (OSError, http.client.HTTPException):
            pass  # the status says enough
    return stream


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lowercased, the default port left out (RFC 6454)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port and port != default else "")


def same_resource(left: str, right: str) -> bool:
    """Whether two URLs name the same resource: scheme and host compared case-insensitively, no trailing slash."""
    return origin_of(left) + urlsplit(left).path.rstrip("/") == origin_of(right) + urlsplit(right).path.rstrip("/")
