"""
Memory per idle connection, stream and session: RSS growth of a fresh server process; and the
reference-cycle garbage each tools/call leaves for the collector.

Every measurement starts from a *fresh* server process, so the heap has not been grown and freed
by earlier work (freed memory is reused and makes growth look smaller; that is also why nothing
is closed between two stacked measurements). A warm-up first makes every lazy allocation once
(imports, the ``sync_to_async`` thread, the SQLite connection, the first few dozen sessions'
one-off 1-1.5 MiB of heap), so the figures are the marginal cost of one more item. Per ASGI
server kind:

- bare consumer, process 1: N idle keep-alive connections (one tools/call each);
- bare consumer, process 2: N idle SSE streams (GET, each on its own connection, one comment
  written, then nothing); process 3: the same streams counted by ``tracemalloc``;
- django_mcp, one process: N legacy sessions created over ONE connection (initialize +
  initialized, so only the session's own cost is counted; on daphne in bursts, see
  :func:`_burst_done`), then one legacy GET SSE stream per session, each on its own connection
  (so a stream's cost includes its connection, as the bare consumer's does);
- django_mcp again, in another process: the same sessions and streams counted by ``tracemalloc``
  (the ``traced`` rows, Python memory only: the kernel's and the server's C buffers of a
  connection are not in them, so a stream reads less than its RSS).

The servers are ``memory_asgi.py``'s wrappers, which can run ``gc.collect()`` on request: without
it, RSS counts however much per-request cyclic garbage happens to be uncollected at the moment of
reading (±8 KiB per session at N=200 on daphne). With it (every ``COLLECT_EVERY`` items and before
each reading), the growth is what the items retain. RSS is read from ``/proc/PID/status`` (VmRSS)
and still moves in pages and allocator arenas: expect ±1-2 KiB per item at N=200.

Run alone (``python -m benchmarks.memory``), it measures idle *streams* only, per stream kind,
channel layer and server (issue 28: an idle stream should no longer own a channel-layer queue):

- ``get``: a legacy Streamable HTTP GET stream, one per legacy session (the sessions are made
  first and not counted), each on its own connection;
- ``listen``: a 2026-07-28 ``subscriptions/listen`` stream (tools list changes), each on its own
  connection, read up to its ``notifications/subscriptions/acknowledged`` message;

on the in-memory layer (the default) and with ``--layers memory,redis`` on ``channels_redis`` too
(127.0.0.1:6379, a key prefix of this run's own, its keys deleted at the end): the layer of a
multi-worker deployment, where a channel of a stream's own costs a queue and a waiting ``receive``
in the worker and group members in Redis. Each (server, layer, kind) runs in two fresh processes:
RSS in one, tracemalloc in the other, where the allocation sites the streams added are listed too
(``--top``, grouped by file or line). With Redis, what the server's keys there grew by is read
beside RSS (``MEMORY USAGE`` of every key under the process's own prefix).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import workload
from .servers import LOAD_CPU, Server, can_pin, have_uvicorn, stop_all

WARM_SESSIONS = 50
COLLECT_EVERY = 10
GARBAGE_CALLS = 200


@dataclass
class Growth:
    server: str  # daphne / uvicorn
    what: str
    count: int
    before_kib: int
    after_kib: int
    goal_kib: float | None = None

    @property
    def per_item_kib(self) -> float:
        return (self.after_kib - self.before_kib) / self.count


@dataclass
class Garbage:
    server: str
    what: str
    per_call: float  # objects found unreachable by gc.collect(), per tools/call


def _collect(client: workload.Client, pause: bool = False) -> int:
    spec = workload.Spec("GET", "/__bench__/gc" + ("?pause" if pause else ""), {}, expect=[])
    response = client.send(spec)
    if response.status != 200:
        raise RuntimeError(f"gc endpoint answered {response.status}")
    return int(response.body)


# daphne lets go of a finished request's application instance (the consumer, its scope and
# queues) only when its once-a-second check runs (daphne.server.Server.application_checker):
# read sooner, and up to a second's worth of finished requests counts as memory the idle items
# hold (at N=200 on daphne: 14.3 KiB per idle session read after 0.6 s; 7.5-10.4 after 2.1 s).
DAPHNE_REAP_SECONDS = 1.5


def _burst_done(server: Server, client: workload.Client) -> None:
    """
    Between bursts of ``COLLECT_EVERY`` sessions: collect, and on daphne let its once-a-second
    check free the finished requests first. Created unpaced, 200 sessions' 400 requests all wait
    for it at once (daphne's Twisted requests, input queues and headers, about 10 KiB each), and
    RSS keeps that peak: 19-20 KiB per idle session, against 0.9 KiB paced (2026-11-25).
    """
    _collect(client)
    if server.kind == "daphne":
        time.sleep(DAPHNE_REAP_SECONDS)


def _traced(client: workload.Client, query: str = "") -> bytes:
    spec = workload.Spec("GET", "/__bench__/traced" + (f"?{query}" if query else ""), {}, expect=[])
    response = client.send(spec)
    if response.status != 200:
        raise RuntimeError(f"traced endpoint answered {response.status}")
    return response.body


def traced_kib(server: Server, client: workload.Client, start: bool = False, snapshot: bool = False) -> int:
    """
    The Python memory the server's tracemalloc traces now, in KiB, once finished work is let go.
    ``start`` starts tracing; ``snapshot`` also keeps a snapshot there for :func:`grown_sites`.
    """
    time.sleep(DAPHNE_REAP_SECONDS if server.kind == "daphne" else 0.3)
    return int(_traced(client, "snapshot" if snapshot else "start" if start else "")) // 1024


def grown_sites(client: workload.Client, group: str) -> list[tuple[str, int, int]]:
    """Where the memory traced since the last ``snapshot`` was allocated: (file or file:line, bytes, blocks)."""
    return [(site, size, count) for site, size, count in json.loads(_traced(client, f"compare={group}"))]


def settled_rss(server: Server, client: workload.Client) -> int:
    """RSS once the server has finished the work just sent and collected: median of three reads."""
    time.sleep(DAPHNE_REAP_SECONDS if server.kind == "daphne" else 0.3)
    _collect(client)
    time.sleep(0.3)
    reads = []
    for _ in range(3):
        reads.append(server.rss_kib())
        time.sleep(0.1)
    return int(statistics.median(reads))


def garbage_per_call(server: Server, spec: workload.Spec) -> float:
    """Cyclic garbage per request: pause the collector, make the calls, count what one collection frees."""
    client = workload.Client(server.port)
    try:
        _collect(client, pause=True)
        for _ in range(GARBAGE_CALLS):
            problem = client.send(spec).problem(spec)
            if problem:
                raise RuntimeError(f"wrong answer while counting garbage: {problem}")
        return _collect(client) / GARBAGE_CALLS
    finally:
        client.close()


def _open_streams(server: Server, session_ids: list[str | None], gc_client: workload.Client):
    clients = []
    for i, session_id in enumerate(session_ids, 1):
        client = workload.Client(server.port)
        response = client.open_stream(workload.session_stream(session_id))
        if response.status != 200 or "text/event-stream" not in response.headers.get("content-type", ""):
            raise RuntimeError(f"GET stream refused: {response.status} {response.body[:200]!r}")
        clients.append(client)
        if i % COLLECT_EVERY == 0:
            _collect(gc_client)
    return clients


def _close(clients: list[workload.Client]) -> None:
    for client in clients:
        client.close()


def baseline_connections(server: Server, kind: str, n: int, ctl: workload.Client) -> tuple[list, list]:
    spec = workload.baseline_call()
    for _ in range(3):
        workload.check(server.port, spec)
    _close(_open_streams(server, [None] * 3, ctl))
    held: list[workload.Client] = []
    try:
        start = settled_rss(server, ctl)
        for i in range(1, n + 1):
            held.append(workload.Client(server.port))
            problem = held[-1].send(spec).problem(spec)
            if problem:
                raise RuntimeError(f"baseline answered wrongly: {problem}")
            if i % COLLECT_EVERY == 0:
                _collect(ctl)
        growth = Growth(kind, "bare consumer: idle keep-alive connection", n, start, settled_rss(server, ctl))
        # Last, so that its heap churn cannot make room for the measured items.
        return [growth], [Garbage(kind, "bare consumer tools/call", garbage_per_call(server, spec))]
    finally:
        _close(held)


def baseline_streams(server: Server, kind: str, n: int, ctl: workload.Client) -> tuple[list, list]:
    for _ in range(3):
        workload.check(server.port, workload.baseline_call())
    _close(_open_streams(server, [None] * 3, ctl))
    held: list[workload.Client] = []
    try:
        start = settled_rss(server, ctl)
        held = _open_streams(server, [None] * n, ctl)
        return [Growth(kind, "bare consumer: idle SSE stream (GET)", n, start, settled_rss(server, ctl))], []
    finally:
        _close(held)


def baseline_streams_traced(server: Server, kind: str, n: int, ctl: workload.Client) -> tuple[list, list]:
    """
    The bare consumer's idle SSE streams counted by tracemalloc, as ``django_mcp_traced`` counts
    ours: what the server itself (its connection and request objects, the application's input
    queue) keeps per stream in Python memory, beside which django_mcp's traced stream is read.
    """
    for _ in range(3):
        workload.check(server.port, workload.baseline_call())
    _close(_open_streams(server, [None] * 3, ctl))
    held: list[workload.Client] = []
    try:
        start = traced_kib(server, ctl, start=True)
        held = _open_streams(server, [None] * n, ctl)
        return [Growth(kind, "bare consumer: idle SSE stream (GET), traced", n, start, traced_kib(server, ctl))], []
    finally:
        _close(held)


def _warm_up(server: Server, ctl: workload.Client) -> list[str]:
    """Sessions, calls in both eras and a few streams, once, before anything is measured; the sessions."""
    # Sessions are created over the control connection: it is open anyway, so no connection is counted.
    warm = [workload.new_session(server.port, ctl) for _ in range(WARM_SESSIONS)]
    for spec in (workload.modern_call(), workload.legacy_call(warm[0])):
        workload.check(server.port, spec)
    _close(_open_streams(server, warm[:3], ctl))
    return warm


def django_mcp(server: Server, kind: str, n: int, ctl: workload.Client) -> tuple[list, list]:
    warm = _warm_up(server, ctl)
    held: list[workload.Client] = []
    try:
        start = settled_rss(server, ctl)
        sessions = []
        for i in range(1, n + 1):
            sessions.append(workload.new_session(server.port, ctl))
            if i % COLLECT_EVERY == 0:
                _burst_done(server, ctl)
        with_sessions = settled_rss(server, ctl)
        held = _open_streams(server, sessions, ctl)
        with_streams = settled_rss(server, ctl)
        # Last (streams still open), so that its heap churn cannot make room for the measured items.
        garbage = [Garbage(kind, "django_mcp 2026-07-28 tools/call", garbage_per_call(server, workload.modern_call())),
                   Garbage(kind, "django_mcp 2025-11-25 tools/call",
                           garbage_per_call(server, workload.legacy_call(warm[0])))]
    finally:
        _close(held)
    return [Growth(kind, "django_mcp: idle legacy session (initialize only)", n, start, with_sessions, 10),
            Growth(kind, "django_mcp: idle legacy GET SSE stream", n, with_sessions, with_streams, 20)], garbage


def django_mcp_traced(server: Server, kind: str, n: int, ctl: workload.Client) -> tuple[list, list]:
    """
    The same sessions and streams as :func:`django_mcp`, counted by tracemalloc (traced from after
    the warm-up): the Python memory they keep, without RSS's pages and high-water marks.
    """
    _warm_up(server, ctl)
    held: list[workload.Client] = []
    try:
        start = traced_kib(server, ctl, start=True)
        sessions = [workload.new_session(server.port, ctl) for _ in range(n)]
        with_sessions = traced_kib(server, ctl)
        held = _open_streams(server, sessions, ctl)
        with_streams = traced_kib(server, ctl)
    finally:
        _close(held)
    return [Growth(kind, "django_mcp: idle legacy session, traced", n, start, with_sessions, 10),
            Growth(kind, "django_mcp: idle legacy GET SSE stream, traced", n, with_sessions, with_streams, 20)], []


def run(kinds: list[str], n: int, baseline_env: dict, django_env: dict, log=print) -> tuple[list, list]:
    growths: list[Growth] = []
    garbage: list[Garbage] = []
    for kind in kinds:
        for label, app, env, measure in (
            ("baseline", "benchmarks.memory_asgi:baseline", baseline_env, baseline_connections),
            ("baseline", "benchmarks.memory_asgi:baseline", baseline_env, baseline_streams),
            ("baseline", "benchmarks.memory_asgi:baseline", baseline_env, baseline_streams_traced),
            ("django_mcp", "benchmarks.memory_asgi:django_mcp", django_env, django_mcp),
            ("django_mcp", "benchmarks.memory_asgi:django_mcp", django_env, django_mcp_traced),
        ):
            server = Server(kind, app, f"mem-{label}", env).start()
            ctl = workload.Client(server.port)
            try:
                log(f"  memory: {server}, N={n}")
                more_growths, more_garbage = measure(server, kind, n, ctl)
                growths += more_growths
                garbage += more_garbage
            finally:
                ctl.close()
                server.stop()
    return growths, garbage


# --- Idle streams per kind and channel layer (issue 28; ``python -m benchmarks.memory``) ---------

STREAM_KINDS = ("get", "listen")
LAYERS = ("memory", "redis")
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
LISTEN_ACK = b"notifications/subscriptions/acknowledged"
STREAM_LABELS = {"get": "legacy GET stream", "listen": "2026-07-28 subscriptions/listen stream"}


def listen_stream() -> workload.Spec:
    """A 2026-07-28 ``subscriptions/listen`` for tools list changes: a stream that then stays idle."""
    meta = {"io.modelcontextprotocol/protocolVersion": workload.MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": "l1", "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": meta}}
    return workload.Spec("POST", "/mcp", {
        "MCP-Protocol-Version": workload.MODERN, "Mcp-Method": "subscriptions/listen",
        "Accept": workload.ACCEPT_BOTH, "Content-Type": "application/json",
    }, json.dumps(body, separators=(",", ":")), expect=[])


def _open_listens(server: Server, count: int, gc_client: workload.Client) -> list[workload.Client]:
    """``count`` listen streams, each on its own connection, each read up to its acknowledgement."""
    clients = []
    for i in range(1, count + 1):
        client = workload.Client(server.port)
        response = client.open_stream(listen_stream())
        if response.status != 200 or "text/event-stream" not in response.headers.get("content-type", ""):
            raise RuntimeError(f"listen stream refused: {response.status} {response.body[:200]!r}")
        # Acknowledged once the stream hears its groups: only then is it the idle stream to count.
        received = response.body
        while LISTEN_ACK not in received:
            chunk = client.sock.recv(65536)
            if not chunk:
                raise RuntimeError(f"listen stream closed before its acknowledgement: {received[:200]!r}")
            received += chunk
        clients.append(client)
        if i % COLLECT_EVERY == 0:
            _collect(gc_client)
    return clients


def _prepare_streams(server: Server, stream: str, count: int, ctl: workload.Client,
                     paced: bool) -> Callable[[], list[workload.Client]]:
    """
    Make what the streams need before they are counted (a GET stream: a legacy session each, made
    over the control connection, so neither counts); return what opens the ``count`` streams.
    """
    if stream == "listen":
        return lambda: _open_listens(server, count, ctl)
    sessions = []
    for i in range(1, count + 1):
        sessions.append(workload.new_session(server.port, ctl))
        if paced and i % COLLECT_EVERY == 0:
            _burst_done(server, ctl)
    return lambda: _open_streams(server, sessions, ctl)


def _warm_up_streams(server: Server, ctl: workload.Client) -> None:
    """:func:`_warm_up`, and a few listen streams, so that both kinds' one-off costs come before counting."""
    _warm_up(server, ctl)
    _close(_open_listens(server, 3, ctl))


def redis_key_bytes(prefix: str) -> int:
    """
    What the keys under ``prefix`` take in Redis (``MEMORY USAGE``, every element counted): the
    server's groups and queued messages. Not ``used_memory``, which also moves with every client
    connection's buffers and with whatever else uses the same Redis.
    """
    import redis

    with redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_timeout=5, socket_connect_timeout=5) as client:
        return sum(client.memory_usage(key, samples=0) or 0 for key in client.scan_iter(match=f"{prefix}*", count=1000))


def _delete_redis_keys(prefix: str) -> int:
    """Delete the keys a run left under its own prefix (groups and channels of killed servers)."""
    import redis

    with redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_timeout=5, socket_connect_timeout=5) as client:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start:start + 500])
        return len(keys)


@dataclass
class StreamMemory:
    """What ``count`` idle streams of one kind added to a fresh server, on one channel layer."""

    server: str  # daphne / uvicorn
    stream: str  # get / listen
    layer: str  # memory / redis
    count: int
    rss_kib: tuple[int, int] = (0, 0)  # before, after
    traced_kib: tuple[int, int] = (0, 0)
    redis_bytes: tuple[int, int] | None = None
    # Allocation sites (file or file:line, bytes, blocks) that grew, from the traced process.
    sites: list[tuple[str, int, int]] = field(default_factory=list)
    # What either server logged while its streams opened: a logged traceback fills linecache, a
    # one-off that then counts as memory of the streams.
    logged: list[str] = field(default_factory=list)

    @property
    def rss_per_stream(self) -> float:
        return (self.rss_kib[1] - self.rss_kib[0]) / self.count

    @property
    def traced_per_stream(self) -> float:
        return (self.traced_kib[1] - self.traced_kib[0]) / self.count

    @property
    def linecache_per_stream(self) -> float:
        """Traced KiB per stream that ``linecache`` took: source lines read to log a traceback, a one-off."""
        return sum(size for site, size, _ in self.sites if site.endswith("/linecache.py")) / 1024 / self.count

    @property
    def redis_per_stream(self) -> float | None:
        """Bytes of Redis memory per stream (not KiB: a group member is about a hundred bytes)."""
        return None if self.redis_bytes is None else (self.redis_bytes[1] - self.redis_bytes[0]) / self.count


def _log_size(server: Server) -> int:
    return server.log_path.stat().st_size if server.log_path else 0


def _logged_since(server: Server, offset: int) -> list[str]:
    """The lines the server logged past ``offset`` that are not a traceback's body."""
    if server.log_path is None:
        return []
    with open(server.log_path, "rb") as log:
        log.seek(offset)
        text = log.read().decode("utf-8", "replace")
    return [f"{server.label}: {line}" for line in text.splitlines() if line.strip() and not line.startswith(" ")]


def idle_streams_rss(server: Server, result: StreamMemory, ctl: workload.Client) -> None:
    """RSS (and with Redis, the server's keys in Redis) before and after ``result.count`` idle streams."""
    _warm_up_streams(server, ctl)
    # Sessions paced as in :func:`django_mcp`, or daphne's backlog of finished requests leaves a
    # high-water mark that the streams then reuse.
    open_streams = _prepare_streams(server, result.stream, result.count, ctl, paced=True)
    prefix = server.env.get("MCP_TEST_REDIS_PREFIX")
    held: list[workload.Client] = []
    try:
        start = settled_rss(server, ctl)
        redis_start = redis_key_bytes(prefix) if prefix else None
        logged = _log_size(server)
        held = open_streams()
        result.rss_kib = (start, settled_rss(server, ctl))
        result.logged += _logged_since(server, logged)
        if redis_start is not None:
            result.redis_bytes = (redis_start, redis_key_bytes(prefix))
    finally:
        _close(held)


def idle_streams_traced(server: Server, result: StreamMemory, ctl: workload.Client, group: str) -> None:
    """tracemalloc before and after ``result.count`` idle streams, and where the growth was allocated."""
    _warm_up_streams(server, ctl)
    traced_kib(server, ctl, start=True)  # traced from here, as django_mcp_traced does
    open_streams = _prepare_streams(server, result.stream, result.count, ctl, paced=False)
    held: list[workload.Client] = []
    try:
        start = traced_kib(server, ctl, snapshot=True)
        logged = _log_size(server)
        held = open_streams()
        result.traced_kib = (start, traced_kib(server, ctl))
        result.logged += _logged_since(server, logged)
        result.sites = grown_sites(ctl, group)
    finally:
        _close(held)


def run_streams(servers: list[str], streams: list[str], layers: list[str], count: int, django_env: dict,
                redis_prefix: str, group: str = "filename", log=print) -> list[StreamMemory]:
    """
    Every (server, layer, stream kind): RSS on one fresh process, tracemalloc on another. With
    Redis, each process gets a key prefix of its own that starts with ``redis_prefix``.
    """
    results = []
    processes = 0
    for kind in servers:
        for layer in layers:
            for stream in streams:
                result = StreamMemory(kind, stream, layer, count)
                for label, measure in (("rss", idle_streams_rss),
                                       ("traced", lambda s, r, c: idle_streams_traced(s, r, c, group))):
                    env = dict(django_env)
                    processes += 1
                    if layer == "redis":
                        # A prefix per process: a stopped server's channels stay in Redis's groups
                        # until they expire, and the next process must not share them.
                        # (Of one width, so that no process's prefix starts another's.)
                        env.update({"MCP_TEST_CHANNEL_LAYER": "redis",
                                    "MCP_TEST_REDIS_PREFIX": f"{redis_prefix}_{processes:03d}"})
                    server = Server(kind, "benchmarks.memory_asgi:django_mcp", f"mem-{stream}-{layer}-{label}",
                                    env).start()
                    ctl = workload.Client(server.port)
                    try:
                        log(f"  memory: {server}, {STREAM_LABELS[stream]}, {layer} layer, {label}, N={count}")
                        measure(server, result, ctl)
                    finally:
                        ctl.close()
                        server.stop()
                results.append(result)
    return results


def _short(site: str, root: Path) -> str:
    """A site's path without the virtualenv's or the tree's prefix."""
    for marker in ("/site-packages/", "/lib/python3."):
        if marker in site:
            tail = site.split(marker, 1)[1]
            return tail if marker == "/site-packages/" else "stdlib/" + tail.split("/", 1)[1]
    prefix = str(root) + "/"
    return site[len(prefix):] if site.startswith(prefix) else site


def print_streams(results: list[StreamMemory], top: int, root: Path) -> None:
    """The per-stream table; then, per row, the ``top`` allocation sites that grew, per stream."""
    print("\nMemory per idle stream: RSS (VmRSS after gc.collect()) and tracemalloc growth of a fresh server "
          "process, KiB per stream; the server's keys in Redis (MEMORY USAGE), bytes per stream")
    # "linecache": traced KiB per stream that only a traceback logged meanwhile put there (see the ! lines).
    header = (f"{'server':9}{'stream':8}{'layer':8}{'N':>5}{'RSS KiB':>10}{'traced KiB':>12}{'linecache':>11}"
              f"{'Redis B':>10}")
    print(header + "\n" + "-" * len(header))
    for r in results:
        redis_part = "-" if r.redis_per_stream is None else f"{r.redis_per_stream:.0f}"
        print(f"{r.server:9}{r.stream:8}{r.layer:8}{r.count:>5}{r.rss_per_stream:>10.2f}"
              f"{r.traced_per_stream:>12.2f}{r.linecache_per_stream:>11.2f}{redis_part:>10}")
    for r in results:
        if r.logged:
            print(f"  ! {r.server} {r.stream} {r.layer}: the server logged {len(r.logged)} line(s) while the streams "
                  f"opened (a traceback's linecache then counts as stream memory); first: {r.logged[0][:160]}")
    if top <= 0:
        return
    for r in results:
        print(f"\n  top {top} sites per stream, {r.server} {r.stream} {r.layer} (bytes, blocks):")
        for site, size, blocks in r.sites[:top]:
            print(f"    {size / r.count:8.0f} B {blocks / r.count:6.2f}  {_short(site, root)}")


def _tree(root: Path) -> str:
    """The commit of the tree measured, and whether its django_mcp has changes not committed."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip()
    dirty = git("status", "--short", "django_mcp")
    return f"{git('log', '-1', '--format=%h') or '?'}" + (" + uncommitted changes in django_mcp" if dirty else "")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="daphne,uvicorn", help="comma-separated (default daphne,uvicorn)")
    parser.add_argument("--streams", default="get,listen", help="stream kinds: get, listen (default both)")
    parser.add_argument("--layers", default="memory",
                        help="channel layers: memory, redis (default memory; redis needs 127.0.0.1:6379)")
    parser.add_argument("--idle", type=int, default=200, help="idle streams per measurement (default 200)")
    parser.add_argument("--top", type=int, default=5, help="allocation sites listed per row (default 5; 0: none)")
    parser.add_argument("--group", choices=["filename", "lineno"], default="filename",
                        help="group the sites by file (default) or by line")
    parser.add_argument("--json", type=Path, help="also write the results there")
    args = parser.parse_args(argv)
    args.servers = [s for s in args.servers.split(",") if s]
    args.streams = [s for s in args.streams.split(",") if s]
    args.layers = [s for s in args.layers.split(",") if s]
    for name, chosen, known in (("--servers", args.servers, ("daphne", "uvicorn")),
                                ("--streams", args.streams, STREAM_KINDS), ("--layers", args.layers, LAYERS)):
        if not chosen or set(chosen) - set(known):
            parser.error(f"{name}: choose from {', '.join(known)}")
    if "uvicorn" in args.servers and not have_uvicorn():
        parser.error("uvicorn is not installed")
    return args


@contextlib.contextmanager
def _fresh_database() -> Iterator[dict]:
    """A migrated SQLite file of this run's own, deleted at the end; the servers' environment."""
    from tests.live import migrate

    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-memory-"))
    # As run.py measures django_mcp: installed by default, without the optional metrics app. (The
    # tasks app stays: without it, trees where tests/conformance_app declares task tools fail to start.)
    env = {"MCP_TEST_SQLITE": str(workdir / "bench.sqlite3"), "MCP_TEST_WITHOUT_METRICS": "1"}
    try:
        migrate(env)
        yield env
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Measure idle streams per kind, layer and server, and print the table (a measurement: exits 0)."""
    args = parse_args(argv)
    import django_mcp
    from tests.live import ROOT

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that atexit stops the servers
    # Hundreds of held sockets: lift the soft descriptor limit to the hard one.
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if can_pin():
        os.sched_setaffinity(0, {int(LOAD_CPU)})  # servers run on CPU 0
    print(f"django_mcp memory per idle stream: {args.servers} x {args.layers} x {args.streams}, N={args.idle}")
    print(f"  tree: {ROOT} at {_tree(ROOT)}; django_mcp imported from {Path(django_mcp.__file__).parent}")
    print(f"  load average before: {os.getloadavg()[0]:.2f}")
    started = time.monotonic()
    prefix = f"bench_mem_{os.getpid()}"
    try:
        with _fresh_database() as env:
            results = run_streams(args.servers, args.streams, args.layers, args.idle, env, prefix, args.group)
    finally:
        stop_all()
        if "redis" in args.layers:
            _delete_redis_keys(prefix + "_")
    print_streams(results, args.top, ROOT)
    if args.json:
        args.json.write_text(json.dumps([{**asdict(r), "rss_per_stream": r.rss_per_stream,
                                          "traced_per_stream": r.traced_per_stream,
                                          "linecache_per_stream": r.linecache_per_stream,
                                          "redis_per_stream": r.redis_per_stream} for r in results], indent=1))
    print(f"\ndone in {time.monotonic() - started:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
