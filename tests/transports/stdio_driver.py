"""Driving a ``StdioServer`` in process with a list of messages, for the tests that need its answers."""

from __future__ import annotations

import asyncio
import io
import json
import os
from typing import Any

from django_mcp.transports.lines import LineReader
from django_mcp.transports.stdio import StdioServer


async def serve_lines(site: Any, user: Any, lines: list[dict[str, Any]], **server_options: Any) -> dict[Any, dict]:
    """Send ``lines`` (JSON-RPC messages) to a stdio server; its answers by request id."""
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    # A pipe kept open until every answer is out: end of input cancels requests still running.
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    output = io.BytesIO()
    with os.fdopen(read_fd, "rb") as stream:
        server = StdioServer(LineReader(stream, limit=1 << 20), output, user=user, site=site, **server_options)
        serving = asyncio.ensure_future(server.serve())
        try:
            async with asyncio.timeout(10):
                while output.getvalue().count(b"\n") < len(lines):
                    await asyncio.sleep(0.01)
        finally:
            os.close(write_fd)
            await asyncio.wait_for(serving, 10)
    return {answer["id"]: answer for answer in map(json.loads, output.getvalue().splitlines())}
