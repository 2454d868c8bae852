"""
Cross-worker delivery of ``notifications/tools/list_changed``: latency, loss and duplicates.

    cd /work/main && .venv/bin/python benchmarks/delivery.py
    .venv/bin/python benchmarks/delivery.py --mode modern --runs 1 --listeners 20   # a quick look

Goal (the project's issue): p99 < 50 ms in both protocol eras with 100 listeners, nothing lost or
duplicated. A measurement, not a test: it prints numbers and exits 0, whatever they are.

Setup: a fresh PostgreSQL database (127.0.0.1:5432, user postgres; created with psycopg, migrated
with ``tests.live.migrate``, dropped at the end) and a unique Redis channel-layer prefix
(127.0.0.1:6379; its keys are deleted at the end), and two daphne workers serving
``tests.asgi:application`` on them (``tests.transports.workers.two_workers``), bound to 127.0.0.1.
With two CPUs the workers inherit CPU 0 and this script then moves to CPU 1.

Per run and mode, ``--listeners`` streams are held open on worker A:

- ``legacy`` (2025-11-25): one session each (initialize, notifications/initialized), holding its GET
  stream (``Accept: text/event-stream``, ``Mcp-Session-Id``);
- ``modern`` (2026-07-28): one ``subscriptions/listen`` POST stream each with
  ``{"toolsListChanged": true}`` (opened once its acknowledgement has arrived).

One warm-up trigger is sent and awaited on every stream, then ``--triggers`` 2026-07-28
``tools/call test_trigger_tool_change`` requests go to worker B, ``--interval-ms`` apart, each on
its own connection; the tool calls ``anotify_list_changed("tools")``. Every stream's list_changed
arrivals are stamped in this process as their bytes arrive (this process' GC is off while
measuring). A stream's k-th arrival belongs to the k-th trigger; latency = arrival - the moment
the trigger request was written. Streams that received more or fewer than ``--triggers``
notifications count as duplicates / lost and are left out of the latencies (their number is
printed). ``spread`` is, per trigger, the last arrival minus the first across streams (p50 and
max over triggers). ``worst`` names the trigger with the slowest arrival and its median latency
over all streams: a median close to the max means the whole fan-out stalled (a pause on a worker),
a low median means a few streams were late. At the end, the tracebacks in each worker's log are
counted (e.g. ``Could not leave channel group`` when many streams close at once).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.metadata
import math
import os
import socket
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.delivery_clients import SSE, Exchange, call, open_exchange
from tests.live import LiveServer, migrate
from tests.transports.workers import two_workers

MODERN, LEGACY = "2026-07-28", "2025-11-25"
LIST_CHANGED = "notifications/tools/list_changed"
ACK = "notifications/subscriptions/acknowledged"
TRIGGER_TOOL = "test_trigger_tool_change"
WAIT = 15.0  # any single request, head or message
DRAIN = 10.0  # after the last trigger, how long to wait for missing notifications
GRACE = 0.5  # then how long to keep listening for late duplicates
OPEN_CONCURRENCY = 16
SERVER_CPU, LOAD_CPU = 0, 1
ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listeners", type=int, default=100, help="streams held on worker A (default 100)")
    parser.add_argument("--triggers", type=int, default=50, help="tools/call triggers per run on worker B (default 50)")
    parser.add_argument("--interval-ms", type=float, default=50.0, help="between trigger sends (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="runs per mode, interleaved (default 3)")
    parser.add_argument("--mode", choices=["legacy", "modern", "both"], default="both")
    args = parser.parse_args()
    if min(args.listeners, args.triggers, args.runs) < 1 or args.interval_ms < 0:
        parser.error("--listeners, --triggers and --runs must be >= 1, --interval-ms >= 0")
    return args


# --- services and workers ------------------------------------------------------------------------


@contextlib.contextmanager
def services() -> Iterator[dict[str, str]]:
    """A fresh PostgreSQL database and Redis prefix, as in tests/conftest.py's ``services``; dropped after."""
    import psycopg
    from psycopg import sql

    for host, port, name in (("127.0.0.1", 5432, "PostgreSQL"), ("127.0.0.1", 6379, "Redis")):
        try:
            socket.create_connection((host, port), timeout=2).close()
        except OSError as exc:
            raise SystemExit(f"delivery.py needs {name} on {host}:{port}: {exc}") from None
    token = uuid.uuid4().hex[:10]
    db_name = f"django_mcp_bench_{token}"
    env = {"DJANGO_SETTINGS_MODULE": "tests.settings", "MCP_TEST_DATABASE": "postgres", "MCP_TEST_PG_NAME": db_name,
           "MCP_TEST_CHANNEL_LAYER": "redis", "MCP_TEST_REDIS_PREFIX": f"django_mcp_bench_{token}"}
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db_name)))
    try:
        migrate(env)
        yield env
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db_name)))
        with contextlib.suppress(Exception):
            import redis

            client = redis.Redis(host="127.0.0.1", port=6379, socket_timeout=5, socket_connect_timeout=5)
            keys = list(client.scan_iter(match=f"{env['MCP_TEST_REDIS_PREFIX']}*", count=1000))
            if keys:
                client.delete(*keys)
            client.close()


ALLOWED_CPUS = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set()


def pin(cpus: set[int]) -> bool:
    """Move this process (and the children it starts from now on) to ``cpus``, when CPUs 0 and 1 are ours."""
    if not hasattr(os, "sched_setaffinity") or not {SERVER_CPU, LOAD_CPU} <= ALLOWED_CPUS:
        return False
    os.sched_setaffinity(0, cpus)
    return True


# --- listeners and triggers ----------------------------------------------------------------------


def modern_request(request_id: Any, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request: the ``_meta`` envelope and the mirrored headers."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "delivery-benchmark", "version": "1.0"}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}, headers


@dataclass
class Listener:
    arrivals: list[float] = field(default_factory=list)
    stream: Exchange | None = None
    session_id: str | None = None

    def on_message(self, now: float, message: dict[str, Any]) -> None:
        if message.get("method") == LIST_CHANGED:
            self.arrivals.append(now)


async def open_listener(server: LiveServer, mode: str, index: int) -> Listener:
    listener = Listener()
    host, port = server.host, server.port
    if mode == "legacy":
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "delivery-benchmark", "version": "1.0"}}}
        reply = await call(host, port, "POST", init)
        listener.session_id = reply.headers.get("mcp-session-id")
        if reply.status != 200 or not listener.session_id:
            raise RuntimeError(f"initialize: {reply.status} {reply.body}")
        headers = {"Mcp-Session-Id": listener.session_id, "MCP-Protocol-Version": LEGACY}
        done = await call(host, port, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        if done.status != 202:
            raise RuntimeError(f"notifications/initialized: {done.status} {done.body}")
        listener.stream = await open_exchange(host, port, "GET", None, {"Accept": SSE, **headers},
                                              on_message=listener.on_message)
    else:
        message, headers = modern_request(f"listen-{index}", "subscriptions/listen",
                                          {"notifications": {"toolsListChanged": True}})
        listener.stream = await open_exchange(host, port, "POST", message, headers, on_message=listener.on_message)
    stream = listener.stream
    if stream.status != 200 or stream.content_type != SSE:
        stream.close()
        raise RuntimeError(f"{mode} stream: {stream.status} {stream.content_type}")
    if mode == "modern":
        await stream.wait_message(lambda m: m.get("method") == ACK, WAIT)
    return listener


async def close_listeners(server: LiveServer, listeners: list[Listener]) -> None:
    for listener in listeners:
        if listener.stream is not None:
            listener.stream.close()
    sessions = [l.session_id for l in listeners if l.session_id]
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def delete(session_id: str) -> None:
        async with gate:
            with contextlib.suppress(Exception):
                await call(server.host, server.port, "DELETE", None,
                           {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})

    await asyncio.gather(*(delete(s) for s in sessions))


async def trigger(server: LiveServer, request_id: str) -> tuple[float | None, float | None]:
    """(send time, seconds to the response) of one tools/call; (None, None) if it failed."""
    message, headers = modern_request(request_id, "tools/call", {"name": TRIGGER_TOOL, "arguments": {}})
    try:
        reply = await call(server.host, server.port, "POST", message, headers)
    except (OSError, asyncio.TimeoutError) as exc:
        print(f"  ! trigger {request_id}: {exc!r}")
        return None, None
    if reply.status != 200 or not reply.body or reply.body.get("result", {}).get("isError") is not False:
        print(f"  ! trigger {request_id}: {reply.status} {reply.body}")
        return reply.sent_at, None
    return reply.sent_at, reply.seconds


async def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


# --- one run -------------------------------------------------------------------------------------


async def run_once(a: LiveServer, b: LiveServer, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def opened(index: int) -> Listener:
        async with gate:
            return await open_listener(a, mode, index)

    started = time.perf_counter()
    results = await asyncio.gather(*(opened(i) for i in range(args.listeners)), return_exceptions=True)
    listeners = [r for r in results if isinstance(r, Listener)]
    failures = [r for r in results if not isinstance(r, Listener)]
    sends: list[float | None] = []
    rtts: list[float] = []
    try:
        if failures:
            print(f"  ! {len(failures)} of {args.listeners} {mode} streams did not open, first: {failures[0]!r}")
        open_seconds = time.perf_counter() - started
        await asyncio.sleep(0.2)
        await trigger(b, "warm-up")
        warmed = await wait_until(lambda: all(l.arrivals for l in listeners), DRAIN)
        await asyncio.sleep(0.2)
        if not warmed:
            print(f"  ! warm-up reached {sum(bool(l.arrivals) for l in listeners)} of {len(listeners)} streams")
        for listener in listeners:
            listener.arrivals.clear()

        gc.collect()
        gc.freeze()
        gc.disable()
        start = time.perf_counter() + 0.02
        tasks = []
        for i in range(args.triggers):
            await asyncio.sleep(max(0.0, start + i * args.interval_ms / 1000 - time.perf_counter()))
            tasks.append(asyncio.create_task(trigger(b, f"trigger-{i}")))
        done = await asyncio.wait_for(asyncio.gather(*tasks), WAIT + 5)
        sends = [sent for sent, _ in done]
        rtts = [seconds for _, seconds in done if seconds is not None]
        await wait_until(lambda: all(len(l.arrivals) >= args.triggers for l in listeners), DRAIN)
        await asyncio.sleep(GRACE)
    finally:
        gc.enable()
        gc.unfreeze()
        await close_listeners(a, listeners)
    stats = summarize(listeners, sends, args)
    stats.update(open_s=open_seconds, failed_open=len(failures), rtt_ms=[s * 1000 for s in rtts])
    return stats


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarize(listeners: list[Listener], sends: list[float | None], args: argparse.Namespace) -> dict[str, Any]:
    n = args.triggers
    counts = [len(l.arrivals) for l in listeners]
    exact = [l for l in listeners if len(l.arrivals) == n]
    per_trigger = [[(l.arrivals[k] - sent) * 1000 for l in exact] for k, sent in enumerate(sends) if sent is not None]
    latencies = [x for row in per_trigger for x in row]
    spreads = [max(row) - min(row) for row in per_trigger if row]
    worst = max(range(len(per_trigger)), key=lambda k: max(per_trigger[k] or [0]), default=None)
    return {
        "expected": args.listeners * n, "received": sum(counts), "streams": len(listeners), "exact": len(exact),
        "lost": sum(max(0, n - c) for c in counts) + (args.listeners - len(listeners)) * n,
        "dup": sum(max(0, c - n) for c in counts), "failed_triggers": sum(s is None for s in sends),
        "latencies": latencies, "spreads": spreads, "negative": sum(x < 0 for x in latencies),
        "worst": None if worst is None or not per_trigger[worst] else
        (worst, statistics.median(per_trigger[worst]), max(per_trigger[worst])),
    }


# --- output --------------------------------------------------------------------------------------

COLUMNS = (f"{'mode':<7} {'run':>3} {'expected':>8} {'received':>8} {'dup':>4} {'lost':>4}  {'p50':>6} {'p90':>6} "
           f"{'p99':>6} {'max':>6}  {'spread p50/max':>14}  {'trigger rtt p50':>15}  worst trigger (median / max ms)")


def row(mode: str, run: int, s: dict[str, Any]) -> str:
    lat = s["latencies"]
    worst = "-" if s["worst"] is None else f"#{s['worst'][0]:<3} {s['worst'][1]:6.1f} / {s['worst'][2]:6.1f}"
    return (f"{mode:<7} {run:>3} {s['expected']:>8} {s['received']:>8} {s['dup']:>4} {s['lost']:>4}  "
            f"{pct(lat, 50):6.1f} {pct(lat, 90):6.1f} {pct(lat, 99):6.1f} {max(lat, default=math.nan):6.1f}  "
            f"{pct(s['spreads'], 50):6.1f}/{max(s['spreads'], default=math.nan):<7.1f}  "
            f"{pct(s['rtt_ms'], 50):15.1f}  {worst}")


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


async def measure(a: LiveServer, b: LiveServer, modes: list[str], args: argparse.Namespace) -> dict[str, list]:
    results: dict[str, list] = {mode: [] for mode in modes}
    print(COLUMNS)
    for run in range(1, args.runs + 1):
        for mode in modes:
            stats = await run_once(a, b, mode, args)
            results[mode].append(stats)
            print(row(mode, run, stats), flush=True)
            notes = []
            if stats["exact"] != stats["streams"]:
                notes.append(f"latencies from {stats['exact']} of {stats['streams']} streams (others lost/doubled)")
            if stats["negative"]:
                notes.append(f"{stats['negative']} arrivals before their trigger was sent (misattributed)")
            if stats["failed_triggers"]:
                notes.append(f"{stats['failed_triggers']} triggers failed")
            notes.append(f"opening {stats['streams']} streams took {stats['open_s']:.1f} s")
            print("            " + "; ".join(notes), flush=True)
    return results


def main() -> int:
    args = parse_args()
    modes = ["legacy", "modern"] if args.mode == "both" else [args.mode]
    wall = time.perf_counter()
    print(f"delivery: {args.listeners} listeners on worker A, {args.triggers} triggers on worker B every "
          f"{args.interval_ms:g} ms, {args.runs} run(s) of {', '.join(modes)}")
    print(f"python {sys.version.split()[0]}, daphne {version('daphne')}, channels {version('channels')}, "
          f"channels_redis {version('channels-redis')}, redis-py {version('redis')}, psycopg {version('psycopg')}")
    with services() as env:
        server_pinned = pin({SERVER_CPU})  # the workers inherit CPU 0 ...
        try:
            with two_workers(env, keepalive="15", prefix="delivery") as workers:
                load_pinned = pin({LOAD_CPU})  # ... and this process moves to CPU 1
                where = "workers on CPU 0, this script on CPU 1" if server_pinned and load_pinned else "none"
                print(f"pinning: {where} (CPUs available {sorted(ALLOWED_CPUS)})")
                print(f"client GC: collected, frozen and disabled while triggers run\n{workers.describe()}\n")
                try:
                    results = asyncio.run(asyncio.wait_for(measure(workers.a, workers.b, modes, args),
                                                           args.runs * len(modes) * (120 + args.triggers)))
                finally:
                    for name, server in (("A", workers.a), ("B", workers.b)):
                        text = server.log_path.read_text(errors="replace") if server.log_path else ""
                        print(f"{'' if name == 'B' else chr(10)}worker {name} log {server.log_path}: "
                              f"{text.count('Traceback')} tracebacks, "
                              f"{text.count('Could not leave channel group')} 'Could not leave channel group'")
        finally:
            pin(ALLOWED_CPUS)

    print(f"\nsummary (goal: p99 < 50 ms, 0 lost, 0 duplicated), median over {args.runs} run(s):")
    for mode, runs in results.items():
        p99s = [pct(s["latencies"], 99) for s in runs]
        every = [x for s in runs for x in s["latencies"]]
        lost, dup = sum(s["lost"] for s in runs), sum(s["dup"] for s in runs)
        median_p99 = statistics.median(p99s)
        verdict = "meets goal" if median_p99 < 50 and lost == dup == 0 else "MISSES GOAL"
        print(f"  {mode:<7} p99 per run {', '.join(f'{p:.1f}' for p in p99s)} ms -> median {median_p99:.1f} ms; "
              f"all runs pooled p50 {pct(every, 50):.1f} p99 {pct(every, 99):.1f} "
              f"max {max(every, default=math.nan):.1f} ms; lost {lost}, duplicated {dup}: {verdict}")
    print(f"\ntotal time {time.perf_counter() - wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
