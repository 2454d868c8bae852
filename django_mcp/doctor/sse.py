"""
The HTTP+SSE transport of 2024-11-05 (MCP spec 2024-11-05, basic/transports, "HTTP with SSE"), as
the clients that still speak it use it: GET the SSE URL, whose first event, ``endpoint``, names the
URL to POST messages to; POST ``initialize`` there; read its answer on the stream. Behind a proxy
each step breaks its own way: the stream buffered (no event ever arrives), a message URL without
the proxy's path prefix (the POST goes nowhere), POSTs reaching a worker that cannot pass the
answer to the one holding the stream.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urljoin, urlsplit

from . import http
from .card import remotes_of
from .endpoint import redirect_finding
from .findings import Finding, fail, ok, skip
from .http import origin_of
from .visit import CLIENT_INFO, Visit


#: The revision whose transport this is, which its clients ask for.
VERSION = "2024-11-05"
TITLE = f"HTTP+SSE transport ({VERSION}: an endpoint event, initialize answered on the stream)"
BUFFERING_FIX = ("A proxy in between that buffers holds events back: turn buffering off for the SSE path (nginx: "
                 "proxy_buffering off, as deploy/nginx.conf does for /sse; no gzip of text/event-stream), and check "
                 "that it forwards /sse to the workers.")


def sse_url(visit: Visit) -> tuple[str | None, str]:
    """The stream's URL (``--sse-url``, else the card's ``sse`` remote) and where it came from, or why there is none."""
    if visit.sse_url:
        return visit.sse_url, "--sse-url"
    if visit.server_card is None:
        return None, ("Not checked: no SSE URL (no Server Card names one); give the 2024-11-05 stream's URL with "
                      "--sse-url, e.g. the endpoint's origin and /sse.")
    remotes = remotes_of(visit.server_card, "sse")
    if not remotes:
        return None, "Not checked: the Server Card names no sse remote (the transport is off, or give --sse-url)."
    if origin_of(remotes[0]) != visit.origin_of_url:
        return None, f"Not checked: the Server Card's sse remote {remotes[0]} is on another host; give --sse-url."
    return remotes[0], "the Server Card"


def check_sse(visit: Visit) -> Finding:
    """The three steps, on one stream, each against ``visit.timeout``; the stream is closed at the end."""
    url, source = sse_url(visit)
    if url is None:
        return skip("sse", TITLE, source)
    headers = {"Accept": "text/event-stream"}
    if visit.token:
        headers["Authorization"] = f"Bearer {visit.token}"
    try:
        stream = http.open_stream(url, headers=headers, timeout=visit.timeout)
    except http.HttpError as error:
        if error.timed_out:
            # Not even the headers: a proxy that holds the answer until it ends never sends a stream's.
            return fail("sse", TITLE, f"GET {url}: nothing within {visit.timeout:g} s, not even the headers, so no "
                        "\"endpoint\" event: clients of 2024-11-05 wait for it, then time out.", BUFFERING_FIX,
                        fault="no endpoint event")
        return fail("sse", TITLE, f"{url}: {error}", "Check the proxy forwards the SSE path to the workers.",
                    fault="unreachable")
    try:
        return walk(visit, url, source, stream)
    finally:
        # Closing the stream ends the session (MCP spec 2024-11-05, basic/transports): nothing is left behind.
        stream.close()


def walk(visit: Visit, url: str, source: str, stream: http.Stream) -> Finding:
    response = stream.response
    if response.is_redirect:
        return redirect_finding("sse", "The SSE URL", response)
    if response.status in (401, 403) and not visit.token:
        return skip("sse", TITLE, f"Not checked: {url} is served and needs a token (HTTP {response.status}); "
                    "give one with --token.")
    if response.status != 200 or response.content_type != "text/event-stream":
        return not_served(visit, url, source, response)
    first = stream.next_event(time.monotonic() + visit.timeout)
    if first is None or first[0] != "endpoint":
        what = f"a {first[0]!r} event" if first else f"nothing within {visit.timeout:g} s"
        return fail("sse", TITLE, f"GET {url} opened a stream, but its first event was {what}, not \"endpoint\": "
                    "clients of 2024-11-05 wait for it, then time out.", BUFFERING_FIX, fault="no endpoint event")
    message_url = urljoin(url, first[1].strip())
    if origin_of(message_url) != visit.origin_of_url:
        return fail("sse", TITLE, f"The endpoint event names {first[1].strip()}, which is {message_url}: another "
                    f"host than the endpoint's ({visit.origin_of_url}), so clients POST their messages there.",
                    "The server names the message URL from the request it saw: let the proxy pass the client's "
                    "Host on (nginx: proxy_set_header Host $http_host).", fault="endpoint URL wrong",
                    message_url=message_url)
    return initialize(visit, stream, message_url, first[1].strip())


def not_served(visit: Visit, url: str, source: str, response: http.Response) -> Finding:
    seen = f"GET {url} (from {source}): HTTP {response.status}, {response.content_type or 'no Content-Type'}"
    if response.status in (404, 405):
        return fail("sse", TITLE, f"{seen}: clients of 2024-11-05 find no stream there.",
                    'Serve it (DJANGO_MCP["SSE_PATH"], "sse" by default; django_mcp.asgi routes it) and have the proxy '
                    "forward it and the messages path (deploy/nginx.conf: /sse and /messages/); or give the right "
                    "--sse-url.", fault="SSE not served")
    if response.status in (401, 403):
        return fail("sse", TITLE, f"{seen}: the token is refused on the SSE path.",
                    "Let the proxy pass Authorization to the workers for /sse and /messages/ too.",
                    fault="token refused")
    return fail("sse", TITLE, f"{seen}: {response.text(120)!r} is no event stream.",
                "Have the proxy forward the SSE path to the workers (something else answers there).",
                fault="SSE not served")


def initialize(visit: Visit, stream: http.Stream, message_url: str, named: str) -> Finding:
    """POST ``initialize`` to the message URL: ``202 Accepted``, then the answer as a ``message`` event."""
    request_id = visit.request_id()
    body = {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}}
    headers = {"Content-Type": "application/json"}
    if visit.token:
        headers["Authorization"] = f"Bearer {visit.token}"
    posted = time.monotonic()
    try:
        response = http.request("POST", message_url, headers=headers, body=body, timeout=visit.timeout)
    except http.HttpError as error:
        return fail("sse", TITLE, f"POST {message_url}: {error}", "Check the proxy.", fault="unreachable")
    path = urlsplit(message_url).path
    if response.status in (404, 405) or response.is_redirect:
        prefix = urlsplit(stream.response.url).path.rsplit("/", 1)[0]
        return fail("sse", TITLE, f"The endpoint event names {path}, and POST {path} answers HTTP {response.status}: "
                    "clients cannot send a single message.",
                    "Behind a proxy that serves the app under a path prefix" + (f" ({prefix})" if prefix else "")
                    + ", the server must know the prefix to name it: run the ASGI server with --root-path (daphne, "
                    "uvicorn); and let the proxy forward the messages path (deploy/nginx.conf: /messages/).",
                    fault="endpoint URL wrong", message_url=message_url)
    if response.status not in (200, 202):
        return fail("sse", TITLE, f"POST {path}: HTTP {response.status}: {response.text()}",
                    "See the server's log.", fault="message refused")
    while (event := stream.next_event(posted + visit.timeout)) is not None:
        try:
            answer = json.loads(event[1])
        except ValueError:
            continue
        if isinstance(answer, dict) and answer.get("id") == request_id:
            return judge_answer(answer, path, time.monotonic() - posted)
    return fail("sse", TITLE, f"POST {path} answered HTTP {response.status}, but no answer to initialize arrived on "
                f"the stream within {visit.timeout:g} s.",
                "With several workers, the one that took the POST passes the answer to the one holding the stream "
                "through the channel layer: share one (Redis) between all workers (docs/howto/several-workers.md). "
                + BUFFERING_FIX, fault="SSE answer missing")


def judge_answer(answer: dict, path: str, elapsed: float) -> Finding:
    if not isinstance(answer.get("result"), dict):
        error = answer.get("error") or {}
        return fail("sse", TITLE, f"initialize answered JSON-RPC error {error.get('code')}: {error.get('message')}",
                    "See the server's log.", fault="initialize failed")
    return ok("sse", TITLE, f"endpoint event {path}, initialize answered on the stream in {elapsed:.2f} s "
              f"(protocolVersion {answer['result'].get('protocolVersion')})")
