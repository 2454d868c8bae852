"""
What observing a request costs, in process and on one core: the 2026-07-28 ``tools/call`` of
``echo_async`` served by ``serve_request`` (the function every transport answers a request with),
timed over many calls in each of three set-ups measured in the same run:

- nobody observes: the metrics app's receivers disconnected, the request log below INFO (what a
  project gets by default);
- metrics: the receivers of ``django_mcp.metrics`` connected (a counter and a histogram per
  request, and the same per tool call);
- request log: the ``django_mcp.requests`` logger at INFO, writing its line through a real
  ``StreamHandler`` into ``/dev/null``;

and prints microseconds per call and each set-up's extra cost over the first. The wire figures
(daphne and uvicorn, with and without the app) are in ``run.py``'s "Metrics" lines.

    .venv/bin/python benchmarks/observability.py            # 5 interleaved rounds of 20,000 calls
    .venv/bin/python benchmarks/observability.py --quick    # 3 rounds of 5,000
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("MCP_TEST_SQLITE", ":memory:")

import django  # noqa: E402

django.setup()

from django_mcp.metrics.receivers import connect_receivers, disconnect_receivers  # noqa: E402
from django_mcp.protocol.context import RequestContext  # noqa: E402
from django_mcp.protocol.envelope import read_envelope  # noqa: E402
from django_mcp.sites import get_default_site  # noqa: E402
from django_mcp.transports.http import dispatcher_for  # noqa: E402
from django_mcp.transports.requests import serve_request  # noqa: E402


MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "echo_async", "arguments": {"text": "hello"},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 5,000 calls")
    parser.add_argument("--calls", type=int, help="calls per round (default 20,000; quick 5,000)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 3)")
    args = parser.parse_args()
    args.calls = args.calls or (5_000 if args.quick else 20_000)
    args.rounds = args.rounds or (3 if args.quick else 5)
    return args


async def time_calls(calls: int) -> float:
    """Microseconds per call of ``calls`` calls, each with its own context as a transport makes it."""
    dispatcher = dispatcher_for(get_default_site())
    envelope = read_envelope(MESSAGE["params"])
    started = time.perf_counter()
    for _ in range(calls):
        ctx = RequestContext.for_modern(envelope, MESSAGE, user=None)
        response = await serve_request(dispatcher, MESSAGE, ctx)
    elapsed = time.perf_counter() - started
    assert response["result"]["content"][0]["text"] == "hello", response
    return elapsed / calls * 1e6


def set_up(name: str, request_logger: logging.Logger) -> None:
    disconnect_receivers()
    request_logger.setLevel(logging.WARNING)
    if name == "metrics":
        connect_receivers()
    elif name == "request log":
        request_logger.setLevel(logging.INFO)


async def main() -> int:
    args = parse_args()
    request_logger = logging.getLogger("django_mcp.requests")
    sink = open(os.devnull, "w")  # noqa: SIM115 - open for the whole run
    handler = logging.StreamHandler(sink)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    request_logger.addHandler(handler)
    request_logger.propagate = False
    names = ["nobody observes", "metrics", "request log"]
    print(f"observability cost: {args.rounds} interleaved rounds x {args.calls:,} calls of echo_async (2026-07-28), "
          f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    for name in names:  # warm-up: imports, caches, label children
        set_up(name, request_logger)
        await time_calls(500)
    results: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(1, args.rounds + 1):
        for name in names:
            set_up(name, request_logger)
            results[name].append(await time_calls(args.calls))
        print(f"  round {round_number}: " + ", ".join(f"{name} {results[name][-1]:.2f} us" for name in names))
    set_up("nobody observes", request_logger)
    base = statistics.median(results[names[0]])
    print(f"\n{'set-up':18}{'us/call':>10}{'extra us':>10}{'extra %':>9}")
    for name in names:
        median = statistics.median(results[name])
        print(f"{name:18}{median:>10.2f}{median - base:>+10.2f}{(median - base) / base:>+9.0%}")
    sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
