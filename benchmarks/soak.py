"""
Load and soak: many open streams on two workers, notifications fanning out at a steady rate and
ordinary requests alongside, for minutes. Reports memory over time, loss and delivery latency,
errors, and the channel-layer group membership left in Redis once every client has gone.

    .venv/bin/python benchmarks/soak.py                                   # 300 streams, 300 s
    .venv/bin/python benchmarks/soak.py --duration 60 --streams 100      # a quick look

A measurement, not a test: it prints numbers and exits 0. benchmarks/README.md ("Soak") says what
runs and how each figure is computed. Streams: half legacy GET streams (MCP spec 2025-11-25,
basic/transports#streamable-http), half 2026-07-28 ``subscriptions/listen`` (MCP spec 2026-07-28,
basic/patterns/subscriptions). The publisher is this script with ``--publish``, in a third process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.delivery import ALLOWED_CPUS, LOAD_CPU, SERVER_CPU, modern_request, pct, pin, services, version
from benchmarks.delivery_clients import SSE, Exchange, call, open_exchange
from tests.live import ROOT, LiveServer, server_env
from tests.transports.workers import two_workers

LEGACY = "2025-11-25"
ITEMS = ("memo://items/1", "memo://items/2")
CYCLE = ("tools", ITEMS[0], "prompts", ITEMS[1])  # what the publisher announces, in turn
LIST_KEYS = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts"}
OPEN_CONCURRENCY = 16
SAMPLE_EVERY = 5.0
DRAIN = 15.0  # seconds after the last send for late notifications
GROUPS_EMPTY_WITHIN = 30.0
WORKER_GROUPS = {"mcp.sessions"}
MAX_LEGACY = 190  # below the default MAX_SESSIONS_PER_USER (200 per client address), as a default deployment has


def parse_args() -> argparse.Namespace:
    """The command line; ``--publish`` (internal) makes this process the publisher."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of load (default 300)")
    parser.add_argument("--streams", type=int, default=300, help="open streams, half legacy (default 300)")
    parser.add_argument("--rate", type=float, default=4.0, help="notifications published per second (default 4)")
    parser.add_argument("--request-rate", type=float, default=10.0, help="ordinary requests per second (default 10)")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before the warm memory reading")
    parser.add_argument("--publish", action="store_true", help=argparse.SUPPRESS)  # the publisher process
    args = parser.parse_args()
    if args.streams < 2 or args.rate <= 0 or args.duration <= 0 or args.request_rate < 0:
        parser.error("--streams >= 2, --rate > 0, --duration > 0, --request-rate >= 0")
    if (args.streams + 1) // 2 > MAX_LEGACY:
        parser.error(f"at most {MAX_LEGACY} legacy sessions from one address: --streams <= {2 * MAX_LEGACY}")
    args.warmup = min(args.warmup, args.duration / 2)
    return args


def publisher(rate: float, duration: float) -> None:
    """Announce the ``CYCLE`` at ``rate`` per second for ``duration`` seconds; print each send's stamp."""
    import django

    django.setup()
    from django_mcp.notifications import anotify_list_changed, anotify_resource_updated

    async def run() -> None:
        start = time.perf_counter()
        for k in range(int(duration * rate)):
            await asyncio.sleep(max(0.0, start + k / rate - time.perf_counter()))
            key = CYCLE[k % len(CYCLE)]
            sent = time.perf_counter()
            try:
                await (anotify_list_changed(key) if key in ("tools", "prompts") else anotify_resource_updated(key))
            except Exception as exc:  # reported, and counted as lost by every stream expecting it
                print(f"ERROR {k} {key} {exc!r}", flush=True)
                continue
            print(f"SENT {k} {key} {sent:.6f}", flush=True)

    asyncio.run(run())


@dataclass
class Stream:
    """One open stream and the arrival stamps of what it heard, by kind (``tools``, ``prompts``, a URI)."""

    kind: str  # legacy | modern
    worker: str
    keys: set[str]
    arrivals: dict[str, list[float]] = field(default_factory=dict)
    unexpected: int = 0
    exchange: Exchange | None = None
    session_id: str | None = None

    def on_message(self, now: float, message: dict[str, Any]) -> None:
        """Stamp a change notification; anything this stream did not ask for counts as unexpected."""
        method = message.get("method")
        uri = (message.get("params") or {}).get("uri") if method == "notifications/resources/updated" else None
        key = LIST_KEYS.get(method) or uri
        if key in self.keys:
            self.arrivals.setdefault(key, []).append(now)
        elif key is not None:
            self.unexpected += 1


async def legacy_session(server: LiveServer) -> dict[str, str]:
    """``initialize`` + ``notifications/initialized`` at 2025-11-25; the headers that name the session."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}}
    reply = await call(server.host, server.port, "POST", init)
    if reply.status != 200 or not reply.headers.get("mcp-session-id"):
        raise RuntimeError(f"initialize: {reply.status} {reply.body}")
    headers = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    await call(server.host, server.port, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


async def open_stream(server: LiveServer, name: str, kind: str, index: int) -> Stream:
    """A legacy GET stream (subscribed to one item first) or a listen stream, once it is ready."""
    item = ITEMS[(index // 4) % 2]
    host, port = server.host, server.port
    if kind == "legacy":
        stream = Stream(kind, name, {"tools", "prompts", item})
        headers = await legacy_session(server)
        stream.session_id = headers["Mcp-Session-Id"]
        subscribed = await call(host, port, "POST", {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                                                     "params": {"uri": item}}, headers)
        if subscribed.status != 200 or "result" not in (subscribed.body or {}):
            raise RuntimeError(f"resources/subscribe: {subscribed.status} {subscribed.body}")
        stream.exchange = await open_exchange(host, port, "GET", None, {"Accept": SSE, **headers},
                                              on_message=stream.on_message)
    else:
        stream = Stream(kind, name, {"tools", item})
        wanted = {"toolsListChanged": True, "resourceSubscriptions": [item]}
        message, headers = modern_request(f"listen-{index}", "subscriptions/listen", {"notifications": wanted})
        stream.exchange = await open_exchange(host, port, "POST", message, headers, on_message=stream.on_message)
        await stream.exchange.wait_message(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    if stream.exchange.status != 200 or stream.exchange.content_type != SSE:
        raise RuntimeError(f"{kind} stream: {stream.exchange.status} {stream.exchange.content_type}")
    return stream


@dataclass
class Requests:
    """What the ordinary requests got."""

    sent: int = 0
    ok: int = 0
    server_errors: int = 0  # 5xx
    other_errors: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


async def one_request(server: LiveServer, k: int, legacy_headers: dict[str, str], stats: Requests) -> None:
    """The k-th request of the cycle: 2026-07-28 tools/call, resources/read; legacy tools/call, tools/list."""
    echo = {"name": "echo", "arguments": {"text": f"soak {k}"}}
    if k % 4 == 0:
        message, headers = modern_request(k, "tools/call", echo)
    elif k % 4 == 1:
        message, headers = modern_request(k, "resources/read", {"uri": "memo://greeting"})
        headers["Mcp-Name"] = "memo://greeting"  # mirrored, as 2026-07-28 asks (basic/transports/streamable-http)
    else:
        method, params = ("tools/call", echo) if k % 4 == 2 else ("tools/list", {})
        message, headers = {"jsonrpc": "2.0", "id": k, "method": method, "params": params}, legacy_headers
    stats.sent += 1
    try:
        reply = await call(server.host, server.port, "POST", message, headers)
    except (OSError, asyncio.TimeoutError) as exc:
        stats.other_errors.append(f"{message['method']}: {exc!r}")
        return
    result = (reply.body or {}).get("result")
    if reply.status == 200 and result is not None and not result.get("isError"):
        stats.ok += 1
        stats.seconds.append(reply.seconds)
    elif reply.status >= 500:
        stats.server_errors += 1
    else:
        stats.other_errors.append(f"{message['method']}: {reply.status} {str(reply.body)[:200]}")


async def requester(servers: list[LiveServer], rate: float, session: dict[str, str], stop: asyncio.Event,
                    stats: Requests) -> None:
    """Requests at a steady ``rate`` to alternate workers until ``stop``; then wait for the last answers."""
    tasks: set[asyncio.Task[None]] = set()
    start, k = time.perf_counter(), 0
    while rate and not stop.is_set():
        await asyncio.sleep(max(0.0, start + k / rate - time.perf_counter()))
        task = asyncio.create_task(one_request(servers[k % 2], k, session, stats))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        k += 1
    await asyncio.gather(*tasks)


def rss_mib(server: LiveServer) -> float:
    """The worker's resident set (VmRSS), MiB."""
    for line in Path(f"/proc/{server.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {server}")


def cpu_seconds(server: LiveServer) -> float:
    """The worker's CPU time so far: user + system, every thread (fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def slope_per_hour(samples: list[tuple[float, float]]) -> float:
    """Least-squares growth of ``(seconds, MiB)`` samples, in MiB per hour."""
    if len(samples) < 2:
        return float("nan")
    return statistics.linear_regression([t for t, _ in samples], [m for _, m in samples]).slope * 3600


def group_members(prefix: str) -> dict[str, int]:
    """Group name → channels in it, read straight from channels_redis's sorted sets."""
    marker = f"{prefix}:group:"
    with redis.Redis(host="127.0.0.1", port=6379, socket_timeout=5, socket_connect_timeout=5) as client:
        counts = {key.decode()[len(marker):]: client.zcard(key) for key in client.scan_iter(f"{marker}*", count=1000)}
    return {name: count for name, count in counts.items() if count}


async def soak(a: LiveServer, b: LiveServer, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    """Open the streams, run the load for ``--duration``, close every client; what ``print_report`` shows."""
    report: dict[str, Any] = {"rss": {"start": (rss_mib(a), rss_mib(b))}}
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def opened(i: int) -> Stream:
        async with gate:
            server, name = (a, "A") if (i // 2) % 2 == 0 else (b, "B")
            return await open_stream(server, name, "legacy" if i % 2 == 0 else "modern", i)

    started = time.perf_counter()
    results = await asyncio.gather(*(opened(i) for i in range(args.streams)), return_exceptions=True)
    streams = [r for r in results if isinstance(r, Stream)]
    report["open_failures"] = [repr(r) for r in results if not isinstance(r, Stream)]
    report["open_seconds"] = time.perf_counter() - started
    print(f"opened {len(streams)} of {args.streams} streams in {report['open_seconds']:.1f} s", flush=True)

    session = await legacy_session(a)  # the ordinary requests' legacy session, served by both workers

    sends: dict[str, list[float]] = {key: [] for key in CYCLE}
    publish_errors: list[str] = []
    stop, requests = asyncio.Event(), Requests()
    samples: list[tuple[float, float, float]] = []
    publisher_proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--publish", "--rate", str(args.rate), "--duration",
        str(args.duration), cwd=ROOT, env=server_env(env), stdout=asyncio.subprocess.PIPE)
    load_start, cpu_start = time.perf_counter(), (cpu_seconds(a), cpu_seconds(b))
    request_task = asyncio.create_task(requester([a, b], args.request_rate, session, stop, requests))

    async def read_publisher() -> None:
        assert publisher_proc.stdout is not None
        async for line in publisher_proc.stdout:
            word, _, key, *rest = line.decode().split()
            if word == "SENT":
                sends[key].append(float(rest[0]))
            else:
                publish_errors.append(line.decode().strip())

    async def sample() -> None:
        while True:
            samples.append((time.perf_counter() - load_start, rss_mib(a), rss_mib(b)))
            await asyncio.sleep(SAMPLE_EVERY)

    sampler = asyncio.create_task(sample())
    try:
        await asyncio.sleep(args.warmup)
        report["rss"]["warm"] = (rss_mib(a), rss_mib(b))
        print(f"warm after {args.warmup:.0f} s: RSS A {report['rss']['warm'][0]:.1f} MiB, "
              f"B {report['rss']['warm'][1]:.1f} MiB", flush=True)
        await asyncio.wait_for(asyncio.gather(read_publisher(), publisher_proc.wait()), args.duration + 120)
        stop.set()
        await request_task
        deadline = time.perf_counter() + DRAIN
        while time.perf_counter() < deadline and any(
                len(s.arrivals.get(key, [])) < len(sends[key]) for s in streams for key in s.keys):
            await asyncio.sleep(0.2)
        report["load_seconds"] = seconds = time.perf_counter() - load_start
        report["busy"] = ((cpu_seconds(a) - cpu_start[0]) / seconds, (cpu_seconds(b) - cpu_start[1]) / seconds)
        report["rss"]["end"] = (rss_mib(a), rss_mib(b))
    finally:
        sampler.cancel()
        stop.set()
        with contextlib.suppress(ProcessLookupError):
            publisher_proc.kill()
    warm = [s for s in samples if s[0] >= args.warmup]
    report["growth"] = (slope_per_hour([(t, x) for t, x, _ in warm]), slope_per_hour([(t, y) for t, _, y in warm]))
    report["ended_early"] = sum(s.exchange is not None and s.exchange.done.done() for s in streams)

    for stream in streams:  # every client goes: streams reset, sessions deleted
        if stream.exchange is not None:
            stream.exchange.close()
    for sid in [s.session_id for s in streams if s.session_id] + [session["Mcp-Session-Id"]]:
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await call(a.host, a.port, "DELETE", None, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY})
    deadline = time.perf_counter() + GROUPS_EMPTY_WITHIN
    prefix = env["MCP_TEST_REDIS_PREFIX"]
    while (left := {g: n for g, n in group_members(prefix).items() if g not in WORKER_GROUPS}) and (
            time.perf_counter() < deadline):
        await asyncio.sleep(0.5)
    report["groups_left"], report["worker_groups"] = left, {g: group_members(prefix).get(g, 0) for g in WORKER_GROUPS}
    report["rss"]["closed"] = (rss_mib(a), rss_mib(b))
    report.update(streams=streams, sends=sends, publish_errors=publish_errors, requests=requests)
    return report


def delivery(streams: list[Stream], sends: dict[str, list[float]]) -> dict[str, Any]:
    """Expected, received, lost and duplicated deliveries; latencies (ms) of the exact (stream, kind) pairs."""
    expected = received = duplicated = inexact = 0
    latencies: dict[str, list[float]] = {"legacy": [], "modern": []}
    for stream in streams:
        for key in stream.keys:
            got, sent = stream.arrivals.get(key, []), sends[key]
            expected += len(sent)
            received += min(len(got), len(sent))
            duplicated += max(0, len(got) - len(sent))
            if len(got) == len(sent):
                latencies[stream.kind].extend((arrival - stamp) * 1000 for arrival, stamp in zip(got, sent))
            else:
                inexact += 1
    return {"expected": expected, "received": received, "lost": expected - received, "duplicated": duplicated,
            "inexact": inexact, "latencies": latencies}


def print_report(report: dict[str, Any], workers: Any, args: argparse.Namespace) -> None:
    """The figures benchmarks/README.md quotes."""
    streams, rss = report["streams"], report["rss"]
    d = delivery(streams, report["sends"])
    lat, req = d["latencies"]["legacy"] + d["latencies"]["modern"], report["requests"]
    kinds = {k: sum(s.kind == k for s in streams) for k in ("legacy", "modern")}
    print(f"\nsoak: {report['load_seconds']:.0f} s of load, {len(streams)} streams ({kinds['legacy']} legacy GET, "
          f"{kinds['modern']} subscriptions/listen; half on each worker), {args.rate:g} notifications/s, "
          f"{args.request_rate:g} requests/s")
    print(f"notifications: {sum(map(len, report['sends'].values()))} published; deliveries expected {d['expected']}, "
          f"received {d['received']}, lost {d['lost']}, duplicated {d['duplicated']}, "
          f"unexpected {sum(s.unexpected for s in streams)}")
    print(f"delivery latency: p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms, max {max(lat, default=0):.1f} ms "
          f"({len(lat)} deliveries; {d['inexact']} (stream, kind) pairs with loss or duplicates left out); "
          + ", ".join(f"{k} p50 {pct(v, 50):.1f} p99 {pct(v, 99):.1f}" for k, v in d["latencies"].items()))
    ms = [s * 1000 for s in req.seconds]
    print(f"requests: {req.sent} sent, {req.ok} ok, {req.server_errors} 5xx, {len(req.other_errors)} other errors; "
          f"p50 {pct(ms, 50):.1f} ms, p99 {pct(ms, 99):.1f} ms")
    print("\n".join(f"  ! {error}" for error in (req.other_errors + report["open_failures"]
                                                  + report["publish_errors"])[:5]) or "  (no errors)")
    print(f"streams: {len(report['open_failures'])} failed to open, {report['ended_early']} ended before the end")
    for i, name in enumerate(("A", "B")):
        print(f"worker {name} RSS MiB: start {rss['start'][i]:.1f}, warm {rss['warm'][i]:.1f}, "
              f"end {rss['end'][i]:.1f}, after close {rss['closed'][i]:.1f}; "
              f"growth after warm-up {report['growth'][i]:+.1f} MiB/hour; CPU busy {report['busy'][i]:.0%}")
    left = report["groups_left"]
    print(f"Redis groups after every client closed: {sum(left.values())} members in {len(left)} stream groups "
          f"{json.dumps(left)[:300] if left else ''}; worker groups {report['worker_groups']}")
    for name, server in (("A", workers.a), ("B", workers.b)):
        text = server.log_path.read_text(errors="replace")
        print(f"worker {name} log {server.log_path}: {text.count('Traceback')} tracebacks, "
              f"{text.count('Could not leave channel group')} 'Could not leave channel group', "
              f"{text.count('Too many connections')} 'Too many connections'")


def main() -> int:
    """Services, two workers, the soak, the report; always 0 once it has printed."""
    args = parse_args()
    if args.publish:
        publisher(args.rate, args.duration)
        return 0
    if "CLOCK_MONOTONIC" not in time.get_clock_info("perf_counter").implementation:
        print("! perf_counter is not CLOCK_MONOTONIC here: latencies across processes mean nothing")
    print(f"python {sys.version.split()[0]}, daphne {version('daphne')}, channels {version('channels')}, "
          f"channels_redis {version('channels-redis')}, redis-py {version('redis')}; "
          f"load average {os.getloadavg()[0]:.2f} (other work on the machine skews every figure)")
    wall = time.perf_counter()
    with services() as env:
        server_pinned = pin({SERVER_CPU})
        try:
            with two_workers(env, keepalive="15", prefix="soak") as workers:
                load_pinned = pin({LOAD_CPU})
                where = "workers on CPU 0, clients and publisher on CPU 1" if server_pinned and load_pinned else "none"
                print(f"pinning: {where} (CPUs available {sorted(ALLOWED_CPUS)})\n{workers.describe()}", flush=True)
                report = asyncio.run(asyncio.wait_for(soak(workers.a, workers.b, env, args), args.duration + 600))
                print_report(report, workers, args)
        finally:
            pin(ALLOWED_CPUS)
    print(f"\ntotal time {time.perf_counter() - wall:.1f} s; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
