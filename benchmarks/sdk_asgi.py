"""
The peer of the benchmarks (benchmarks/README.md): the official MCP Python SDK's server, as an ASGI app.

An ``MCPServer`` (called ``FastMCP`` before mcp 2) with one tool, ``echo(text: str) -> str``, served
as Streamable HTTP on ``/mcp``: stateful (each ``initialize`` opens a session with an
``Mcp-Session-Id``, as django_mcp's 2025-11-25 legacy mode does) and with plain JSON answers instead
of one-event SSE streams (``json_response=True``), so both servers answer a POST the same way.

``echo`` is a plain ``def`` like django_mcp's ``echo`` in ``tests``: the SDK runs it in a worker
thread (``anyio.to_thread``), as django_mcp runs a sync tool on a pool thread, so the peers pay the
same hop. With ``BENCH_ASYNC_TOOL=1`` it is an ``async def`` instead, the twin of django_mcp's
``cold_asgi.py`` under the same variable: neither side then leaves the event loop.

The SDK's app keeps its sessions in a task group that only its lifespan starts, so it must be
served with the lifespan on (``servers.py`` does so for this app): ``uvicorn
benchmarks.sdk_asgi:application --lifespan on``. daphne does not run lifespans, which is why the
peer is measured on uvicorn only.
"""

import os

from mcp.server.mcpserver import MCPServer

# WARNING, not the SDK's default INFO: at INFO the session manager logs a line for every session
# it opens, and a log write per request would be measured too (the servers run without access log
# for the same reason).
server = MCPServer("django-mcp-bench-peer", version="1", log_level="WARNING")


if os.environ.get("BENCH_ASYNC_TOOL"):
    # The async twin (cold_run.py's async rows): no worker thread on either side.
    @server.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text
else:
    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text


# The SDK's defaults otherwise: 127.0.0.1 with its DNS-rebinding protection (Host 127.0.0.1:*
# allowed, which is what the benchmark sends), 30 min idle timeout, at most 10 000 open sessions
# (cold sessions are deleted, so they never pile up).
application = server.streamable_http_app(json_response=True, stateless_http=False)
