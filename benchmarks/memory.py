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
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from . import workload
from .servers import Server

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


def traced_kib(server: Server, client: workload.Client, start: bool = False) -> int:
    """The Python memory the server's tracemalloc traces now, in KiB, once finished work is let go."""
    time.sleep(DAPHNE_REAP_SECONDS if server.kind == "daphne" else 0.3)
    spec = workload.Spec("GET", "/__bench__/traced" + ("?start" if start else ""), {}, expect=[])
    response = client.send(spec)
    if response.status != 200:
        raise RuntimeError(f"traced endpoint answered {response.status}")
    return int(response.body) // 1024


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
