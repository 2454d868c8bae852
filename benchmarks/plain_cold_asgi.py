"""
The floor of the cold-session table (benchmarks/README.md): a plain ASGI callable, no Channels, no
Django, answering the five steps of a cold session with the same fixed bodies as
``baseline_cold_asgi.py`` (a byte search of the body tells the steps apart, a fresh random session
id per ``initialize``).

What is left of a cold session's cost here is the ASGI server's own: parsing five requests,
building their scopes, writing ten messages to the socket, and the system calls. Every row of the
table pays it, django_mcp and the SDK peer alike, so a row's CPU time per session minus this one's
is what that application spends of its own.

Serve it with ``daphne benchmarks.plain_cold_asgi:application`` or
``uvicorn benchmarks.plain_cold_asgi:application --lifespan off``.
"""

import secrets

from benchmarks.cold_answers import CALL, INITIALIZE, TOOLS, json_headers


async def application(scope, receive, send):
    """One request of a cold session: the whole body read, then one fixed answer."""
    if scope["type"] != "http":
        return  # daphne and uvicorn send no lifespan to this app (started with it off)
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    if scope["method"] == "DELETE":
        status, headers, answer = 200, [(b"content-length", b"0")], b""
    elif b'"initialize"' in body:
        status, answer = 200, INITIALIZE
        headers = [*json_headers(INITIALIZE), (b"mcp-session-id", secrets.token_hex(16).encode())]
    elif b"notifications/initialized" in body:
        status, headers, answer = 202, [(b"content-length", b"0")], b""
    elif b'"tools/list"' in body:
        status, headers, answer = 200, json_headers(TOOLS), TOOLS
    else:
        status, headers, answer = 200, json_headers(CALL), CALL
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": answer})
