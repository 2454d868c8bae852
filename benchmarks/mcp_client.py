"""
How fast a project's tests run through django_mcp.test's McpClient (see benchmarks/README.md,
"Test client"): tool calls per second in process, against the same calls over a live daphne
socket and against the dispatcher alone, one call after another as a test suite makes them; then
the wall time of a generated suite of 1,000 tool tests (goal: under 10 s on this machine).

    .venv/bin/python benchmarks/mcp_client.py                 # ≈1 min
    .venv/bin/python benchmarks/mcp_client.py --calls 500 --tests 200

The tool is ``echo`` of tests/testapp (a sync function: it runs on a thread, or under the test
client on the test's own thread), called with ``{"text": "hi"}`` and checked each time. Every
figure is from this run; ratios are against the dispatcher alone (no transport, no HTTP: the
floor a test client could reach). A measurement, not a test: it exits 0 once it has printed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ARGUMENTS = {"text": "hi"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}


def rate(calls: int, seconds: float) -> str:
    return f"{calls / seconds:8.0f} calls/s  ({seconds / calls * 1e6:7.0f} µs a call)"


async def dispatcher_alone(calls: int) -> float:
    """The site's dispatcher, handed the parsed request and a ready context: no transport at all."""
    from django.contrib.auth.models import AnonymousUser

    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.versions import Era
    from django_mcp.sites import get_default_site
    from django_mcp.transports.http import dispatcher_for

    dispatcher = dispatcher_for(get_default_site())
    started = time.perf_counter()
    for number in range(calls):
        message = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                   "params": {"name": "echo", "arguments": ARGUMENTS, "_meta": META}}
        ctx = RequestContext(era=Era.MODERN, protocol_version="2026-07-28", user=AnonymousUser())
        answer = await dispatcher.handle_request(message, ctx)
        assert answer["result"]["content"][0]["text"] == "hi", answer
    return time.perf_counter() - started


async def client_async(calls: int, version: str) -> float:
    from django_mcp.test import McpClient

    client = McpClient(version)
    await client.acall_tool("echo", ARGUMENTS)  # a legacy client opens its session first
    started = time.perf_counter()
    for _ in range(calls):
        assert (await client.acall_tool("echo", ARGUMENTS)).text == "hi"
    return time.perf_counter() - started


def client_sync(calls: int, version: str) -> float:
    from django_mcp.test import McpClient

    client = McpClient(version)
    client.call_tool("echo", ARGUMENTS)
    started = time.perf_counter()
    for _ in range(calls):
        assert client.call_tool("echo", ARGUMENTS).text == "hi"
    return time.perf_counter() - started


def over_a_socket(calls: int, env: dict[str, str]) -> float:
    """The same stateless POSTs to daphne on 127.0.0.1, over one kept-alive connection."""
    from tests.live import LiveServer

    with LiveServer(env=env, name="bench-test-client") as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}

        def one(number: int) -> None:
            body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                               "params": {"name": "echo", "arguments": ARGUMENTS, "_meta": META}})
            connection.request("POST", "/mcp", body, headers)
            answer = json.loads(connection.getresponse().read())
            assert answer["result"]["content"][0]["text"] == "hi", answer

        for number in range(20):  # warm: the first calls import and cache
            one(number)
        started = time.perf_counter()
        for number in range(calls):
            one(number)
        elapsed = time.perf_counter() - started
        connection.close()
    return elapsed


SUITE = '''
import pytest
from django.test import TestCase

from django_mcp.test import McpTestCase


class EchoTests(McpTestCase, TestCase):
    mcp_protocol_version = "{version}"
{methods}
'''
METHOD = '''
    def test_echo_{number}(self):
        result = self.mcp_client.call_tool("echo", text="{number}")
        self.assertFalse(result.is_error)
        self.assertEqual(result.text, "{number}")
'''


def suite_of(tests: int, version: str, folder: Path) -> float:
    """A generated module of ``tests`` TestCase tests, each one tool call and its checks, run by pytest."""
    module = folder / "test_generated_suite.py"
    module.write_text(SUITE.format(version=version, methods="".join(METHOD.format(number=n) for n in range(tests))))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), str(module)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    summary = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ran.stderr[-500:]
    if ran.returncode != 0 or f"{tests} passed" not in summary:
        print(f"  the generated suite failed: {summary}\n{ran.stdout[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="Calls per measurement (default 2000).")
    parser.add_argument("--tests", type=int, default=1000, help="Tests in the generated suite (default 1000).")
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-test-client-"))
    env = {"DJANGO_SETTINGS_MODULE": "tests.settings", "MCP_TEST_SQLITE": str(folder / "bench.sqlite3"),
           "MCP_TEST_CHANNEL_LAYER": "memory"}
    os.environ.update(env)
    from tests.live import migrate

    migrate(env)
    import django

    django.setup()
    from asgiref.sync import async_to_sync

    calls = options.calls
    print(f"django_mcp.test's McpClient, {calls} sequential calls of the sync tool echo each "
          f"(Python {sys.version.split()[0]}, Django {django.get_version()})\n")
    floor = async_to_sync(dispatcher_alone)(calls)
    rows = [("dispatcher alone (no transport)", floor)]
    for version in ("2026-07-28", "2025-11-25"):
        rows.append((f"McpClient, async, {version}", async_to_sync(client_async)(calls, version)))
        rows.append((f"McpClient, sync, {version}", client_sync(calls, version)))
    rows.append(("daphne over a socket, 2026-07-28", over_a_socket(calls, env)))
    for label, seconds in rows:
        print(f"  {label:<36} {rate(calls, seconds)}   {floor / seconds:5.2f}× the dispatcher")

    print(f"\nA suite of {options.tests} TestCase tests, one tool call each (pytest, one process, "
          "start-up and test database included):")
    for version in ("2026-07-28", "2025-11-25"):
        seconds = suite_of(options.tests, version, folder)
        verdict = "under" if seconds < 10 * options.tests / 1000 else "OVER"
        print(f"  {version}: {seconds:5.1f} s ({verdict} the goal of 10 s per 1,000 tests)")


if __name__ == "__main__":
    main()
