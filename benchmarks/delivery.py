"""
Cross-worker delivery of ``notifications/tools/list_changed`` at scale: readiness, latency, loss,
duplicates, Redis commands and worker CPU per announcement, beside a floor.

    cd /work/main && .venv/bin/python benchmarks/delivery.py          # 100 listeners, ≈1 min
    .venv/bin/python benchmarks/delivery.py --mode modern --runs 1 --listeners 20   # a quick look
    .venv/bin/python benchmarks/delivery.py --listeners 1000,5000 \\
        --triggers 20 --interval-ms 250                                # issue 28's big rows, ≈7 min

Goal (issue 28, "Push at scale"): a notification reaches every listener of both protocol eras at
100, 1,000 and 5,000 listeners per worker, nothing lost or duplicated, with latency close to what
the client and the machine cost anyway (the floor), and with Redis commands and worker CPU per
announcement that do not grow with the listeners. A measurement, not a test: it prints numbers and
exits 0, whatever they are.

Setup: a fresh PostgreSQL database (127.0.0.1:5432, user postgres; created with psycopg, migrated
with ``tests.live.migrate``, dropped at the end) and a unique Redis channel-layer prefix
(127.0.0.1:6379; its keys are deleted at the end). For each ``--listeners`` count, two fresh daphne
workers (uvicorn with ``--server uvicorn``) serve ``tests.asgi:application`` on them
(``tests.transports.workers.two_workers``, bound to 127.0.0.1), so a count that chokes a worker does
not spoil the next, and beside them a fresh floor (``delivery_floor.py``: a plain ASGI app, one
process) on the same server software unless ``--floor-server`` names another: what the floor
measures is what the client and that server cost anyway, so the ratios hold the server constant
(before issue 39 the floor always ran on uvicorn, which put daphne's own write path, a third of a
daphne worker's CPU per announcement, on django_mcp's side of the ratio). With two CPUs the workers
and the floor inherit CPU 0 and this script then moves to CPU 1.

File descriptors: every stream is one connection, so this script raises its soft ``RLIMIT_NOFILE``
to the hard limit before starting anything; the workers and the floor are started with
``subprocess.Popen`` (``tests.live.LiveServer``), which keeps the
parent's resource limits across fork and exec, so they inherit the raised limit (the header prints
each one's ``Max open files`` from ``/proc``). The hard limit itself is not raised (that needs
root): with 5,000 listeners each process needs a little over 5,000.

Per listener count, run and mode, ``N`` streams are opened on worker A, at most
``--open-concurrency`` (100) at a time, and the phase goes on with those that are open after
``--ready-timeout`` (60 s) (the rest are cancelled and counted with the reasons they failed):

- ``legacy`` (2025-11-25): one session each (initialize, notifications/initialized), holding its GET
  stream (``Accept: text/event-stream``, ``Mcp-Session-Id``); open once the GET's response head is in;
- ``modern`` (2026-07-28): one ``subscriptions/listen`` POST stream each with
  ``{"toolsListChanged": true}``; open once its acknowledgement has arrived.

``ready`` is the time from the first connect until the last stream was open (or the deadline).
One warm-up trigger is sent and awaited on every stream, then ``--triggers`` 2026-07-28
``tools/call test_trigger_tool_change`` requests go to worker B, ``--interval-ms`` apart, each on
its own connection; the tool calls ``anotify_list_changed("tools")``. Every stream's list_changed
arrivals are stamped in this process as their bytes arrive (GC off while measuring). A stream's
k-th arrival belongs to the k-th trigger; latency = arrival - the moment the trigger request was
written. ``delivered/sent`` counts every arrival against listeners x triggers (streams that never
opened count as lost); streams with more or fewer than ``--triggers`` arrivals count as
duplicated / lost and are left out of the latencies. Right after, the same listeners and triggers
are run against the floor (listeners and triggers both on the floor's one process), unless
``--no-floor``.

Around the announcement phase (from just before the first trigger until every arrival is in or
``DRAIN`` has passed, plus ``GRACE``), this script reads:

- Redis's own ``INFO commandstats``: the ``calls`` of every command summed, after minus before,
  divided by the triggers. ``INFO`` itself is left out (these readings are INFO calls). The server
  is shared, so anything else using Redis at the time is counted too: run it on an idle machine.
  ``INFO cpu`` and ``INFO stats`` (network bytes in + out) give Redis's CPU and traffic per
  announcement the same way. channels_redis's ``group_send`` stores one message per receiving
  process (naming all its channels in ``__asgi_channel__``), so the command count hardly moves
  with the listeners while the bytes and the receiving worker's work do;
- each worker's CPU time (user + system, all threads, ``/proc/<pid>/stat``), per announcement; the
  floor's likewise;
- this script's own CPU over the same wall time (``client busy``): near 100% means the client,
  not the server, set the pace;
- the kernel's ``TcpExt ListenOverflows`` over the opening phase (connections a full accept
  backlog dropped: the client's connect then waits for a SYN retransmit, 1 s or more);
- new tracebacks, Redis read timeouts, ``Too many connections`` and channels_redis's "channels
  over capacity" lines in each worker's log during the phase (``LOG_SIGNS``).

Afterwards the streams are closed (legacy sessions are also DELETEd) and the script waits until
worker A is idle again before the next phase.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import importlib.metadata
import math
import os
import resource
import socket
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.delivery_clients import SSE, Exchange, call, open_exchange
from benchmarks.servers import can_pin
from tests.live import LiveServer, migrate
from tests.transports.workers import UvicornServer, two_workers

MODERN, LEGACY = "2026-07-28", "2025-11-25"
LIST_CHANGED = "notifications/tools/list_changed"
ACK = "notifications/subscriptions/acknowledged"
TRIGGER_TOOL = "test_trigger_tool_change"
WAIT = 15.0  # any single request, head or message
DRAIN = 10.0  # after the last trigger (and for the warm-up), at least this long for missing notifications
GRACE = 0.5  # then how long to keep listening for late duplicates
SETTLE = 30.0  # after closing, at most this long for worker A to go idle
SERVER_CPU, LOAD_CPU = 0, 1
ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listeners", default="100",
                        help="comma-separated stream counts held on worker A, e.g. 100,1000,5000 (default 100)")
    parser.add_argument("--triggers", type=int, default=50, help="tools/call triggers per run on worker B (default 50)")
    parser.add_argument("--interval-ms", type=float, default=50.0, help="between trigger sends (default 50)")
    parser.add_argument("--runs", type=int, default=2, help="runs per count and mode, interleaved (default 2)")
    parser.add_argument("--mode", choices=["legacy", "modern", "both"], default="both")
    parser.add_argument("--ready-timeout", type=float, default=60.0,
                        help="seconds to wait for all streams to open; go on with those open (default 60)")
    parser.add_argument("--open-concurrency", type=int, default=100,
                        help="streams being opened at once (default 100)")
    parser.add_argument("--drain", type=float, default=None,
                        help="seconds to wait for missing notifications after the last trigger "
                             "(default max(10, listeners / 250)); later arrivals count as lost")
    parser.add_argument("--no-floor", action="store_true", help="skip the plain-ASGI floor")
    parser.add_argument("--server", choices=["daphne", "uvicorn"], default="daphne",
                        help="what serves the two django_mcp workers (default daphne, the README's setup)")
    parser.add_argument("--floor-server", choices=["same", "daphne", "uvicorn"], default="same",
                        help="what serves the floor (default: the workers' server, so that the ratios hold the "
                             "server software constant; uvicorn was the floor's server before issue 39)")
    args = parser.parse_args()
    try:
        args.counts = [int(x) for x in args.listeners.split(",") if x.strip()]
    except ValueError:
        parser.error("--listeners takes integers separated by commas")
    if (not args.counts or min(args.counts) < 1 or min(args.triggers, args.runs, args.open_concurrency) < 1
            or args.interval_ms < 0 or args.ready_timeout <= 0):
        parser.error("--listeners, --triggers, --runs and --open-concurrency must be >= 1, --interval-ms >= 0, "
                     "--ready-timeout > 0")
    return args


# --- services, limits and probes -----------------------------------------------------------------


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


def raise_nofile() -> tuple[int, int]:
    """Soft RLIMIT_NOFILE up to the hard limit (children started later inherit it); returns (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 1 << 20, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def max_open_files(pid: int | None) -> str:
    """A process's soft ``Max open files``, as the kernel sees it."""
    with contextlib.suppress(OSError, TypeError):
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
            if line.startswith("Max open files"):
                return line.split()[3]
    return "?"


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process so far, all its threads (``/proc/<pid>/stat`` fields 14, 15)."""
    if pid is None:
        return math.nan
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def listen_overflows() -> int:
    """The kernel's TcpExt ListenOverflows (all sockets): SYNs dropped because an accept queue was full."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/net/netstat").read_text().splitlines()
        names, values = (line.split() for line in lines if line.startswith("TcpExt:"))
        return int(values[names.index("ListenOverflows")])
    return 0


class RedisProbe:
    """``INFO commandstats`` and ``INFO cpu`` of the channel layer's Redis, read with redis-py."""

    def __init__(self) -> None:
        import redis

        self.client = redis.Redis(host="127.0.0.1", port=6379, socket_timeout=10, socket_connect_timeout=5)

    def read(self) -> dict[str, float]:
        """Calls per command (``info`` left out: it is this probe's own), plus ``:cpu`` seconds, ``:clients``
        and ``:bytes`` (network in + out; includes these INFO replies, a few KB per reading)."""
        stats = {name.removeprefix("cmdstat_"): float(value["calls"])
                 for name, value in self.client.info("commandstats").items()}
        stats.pop("info", None)
        cpu = self.client.info("cpu")
        stats[":cpu"] = float(cpu["used_cpu_user"] + cpu["used_cpu_sys"])
        stats[":clients"] = float(self.client.info("clients")["connected_clients"])
        net = self.client.info("stats")
        stats[":bytes"] = float(net["total_net_input_bytes"] + net["total_net_output_bytes"])
        return stats

    def close(self) -> None:
        self.client.close()


def log_size(path: Path | None) -> int:
    with contextlib.suppress(OSError, TypeError):
        return path.stat().st_size  # type: ignore[union-attr]
    return 0


#: What a worker log says when delivery suffers: Redis read timeouts, an exhausted connection pool,
#: and channels_redis dropping a group message for a process whose queue is full (logged at INFO).
LOG_SIGNS = {"tracebacks": "Traceback", "Redis timeouts": "Timeout reading",
             "'Too many connections'": "Too many connections", "'over capacity'": "channels over capacity in group"}


def log_news(path: Path | None, since: int) -> dict[str, int]:
    """How often each of ``LOG_SIGNS`` was written to a worker log after byte ``since``."""
    text = ""
    with contextlib.suppress(OSError, TypeError), open(path, "rb") as log:  # type: ignore[arg-type]
        log.seek(since)
        text = log.read().decode(errors="replace")
    return {name: text.count(sign) for name, sign in LOG_SIGNS.items()}


class Target(NamedTuple):
    host: str
    port: int


@dataclass
class Side:
    """What a phase runs against: where listeners connect, where triggers go, and whose CPU to read."""
    name: str  # "django_mcp" or "floor"
    listen: Target
    trigger: Target
    pids: dict[str, int | None]  # label -> pid, e.g. {"A": ..., "B": ...} or {"floor": ...}
    logs: dict[str, Path | None]
    redis: RedisProbe | None


# --- listeners and triggers ----------------------------------------------------------------------


def modern_request(request_id: Any, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request: the ``_meta`` envelope and the mirrored headers."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "delivery-benchmark", "version": "1.0"}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}, headers


class Tally:
    """All list_changed arrivals of a phase, counted, so waiting needs no pass over every listener."""
    total = 0


@dataclass
class Listener:
    tally: Tally
    arrivals: list[float] = field(default_factory=list)
    stream: Exchange | None = None
    session_id: str | None = None
    opened_at: float = 0.0

    def on_message(self, now: float, message: dict[str, Any]) -> None:
        if message.get("method") == LIST_CHANGED:
            self.arrivals.append(now)
            self.tally.total += 1


async def open_listener(target: Target, mode: str, index: int, tally: Tally) -> Listener:
    listener = Listener(tally)
    host, port = target
    try:
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
            listener.stream = await open_exchange(host, port, "POST", message, headers,
                                                  on_message=listener.on_message)
        stream = listener.stream
        if stream.status != 200 or stream.content_type != SSE:
            raise RuntimeError(f"{mode} stream: {stream.status} {stream.content_type}")
        if mode == "modern":
            await stream.wait_message(lambda m: m.get("method") == ACK, WAIT)
    except BaseException:  # including the cancellation at the ready deadline: no half-open stream stays
        if listener.stream is not None:
            listener.stream.close()
        raise
    listener.opened_at = time.perf_counter()
    return listener


async def close_listeners(target: Target, listeners: list[Listener], concurrency: int) -> float:
    """Close every stream and DELETE the legacy sessions; returns the seconds it took."""
    started = time.perf_counter()
    for listener in listeners:
        if listener.stream is not None:
            listener.stream.close()
    sessions = [l.session_id for l in listeners if l.session_id]
    gate = asyncio.Semaphore(concurrency)

    async def delete(session_id: str) -> None:
        async with gate:
            with contextlib.suppress(Exception):
                await call(target.host, target.port, "DELETE", None,
                           {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})

    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(delete(s) for s in sessions)), 120)
    return time.perf_counter() - started


async def trigger(target: Target, request_id: str) -> tuple[float | None, float | None]:
    """(send time, seconds to the response) of one tools/call; (None, None) if it failed."""
    message, headers = modern_request(request_id, "tools/call", {"name": TRIGGER_TOOL, "arguments": {}})
    try:
        reply = await call(target.host, target.port, "POST", message, headers)
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


async def settle(pid: int | None, timeout: float = SETTLE) -> float:
    """Wait until ``pid`` used under 5% of a CPU over 0.5 s (it has finished closing streams); seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        before = cpu_seconds(pid)
        await asyncio.sleep(0.5)
        if not cpu_seconds(pid) - before > 0.025:  # also ends on NaN (no such process)
            break
    return time.perf_counter() - started


def failure_reason(exc: BaseException) -> str:
    text = str(exc).split("\n")[0][:70]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --- one phase -----------------------------------------------------------------------------------


async def open_all(target: Target, mode: str, count: int, args: argparse.Namespace, tally: Tally
                   ) -> tuple[list[Listener], collections.Counter[str], float, float]:
    """Open ``count`` streams, ``--open-concurrency`` at a time, until ``--ready-timeout``.

    Returns the open listeners, the failures by reason (``not open by the deadline`` for those
    cancelled), the seconds until the last one opened, and when opening started."""
    gate = asyncio.Semaphore(args.open_concurrency)

    async def opened(index: int) -> Listener:
        async with gate:
            return await open_listener(target, mode, index, tally)

    started = time.perf_counter()
    tasks = [asyncio.create_task(opened(i)) for i in range(count)]
    done, pending = await asyncio.wait(tasks, timeout=args.ready_timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    listeners, failures = [], collections.Counter[str]()
    for task in tasks:
        if task in pending:
            failures["not open by the deadline"] += 1
        elif task.exception() is not None:
            failures[failure_reason(task.exception())] += 1  # type: ignore[arg-type]
        else:
            listeners.append(task.result())
    ready = max((l.opened_at for l in listeners), default=started) - started
    return listeners, failures, ready, started


async def run_phase(side: Side, mode: str, count: int, args: argparse.Namespace) -> dict[str, Any]:
    tally = Tally()
    logs = {name: log_size(path) for name, path in side.logs.items()}  # the phase's errors, opening included
    overflows = listen_overflows()
    listeners, failures, ready, started = await open_all(side.listen, mode, count, args, tally)
    open_times = sorted(l.opened_at - started for l in listeners)
    overflows = listen_overflows() - overflows
    # 5,000 streams may need more than 10 s to hear one announcement
    drain = args.drain if args.drain is not None else max(DRAIN, count / 250)
    sends: list[float | None] = []
    rtts: list[float] = []
    usage: dict[str, float] = {}
    try:
        await asyncio.sleep(0.2)
        await trigger(side.trigger, "warm-up")
        warmed = await wait_until(lambda: tally.total >= len(listeners) and all(l.arrivals for l in listeners), drain)
        await asyncio.sleep(0.2)
        warm_heard = sum(bool(l.arrivals) for l in listeners)
        for listener in listeners:
            listener.arrivals.clear()
        tally.total = 0

        gc.collect()
        gc.freeze()
        gc.disable()
        redis_before = side.redis.read() if side.redis else {}
        cpu_before = {name: cpu_seconds(pid) for name, pid in side.pids.items()}
        client_before, wall_before = own_cpu(), time.perf_counter()
        start = time.perf_counter() + 0.02
        tasks = []
        for i in range(args.triggers):
            await asyncio.sleep(max(0.0, start + i * args.interval_ms / 1000 - time.perf_counter()))
            tasks.append(asyncio.create_task(trigger(side.trigger, f"trigger-{i}")))
        finished, unfinished = await asyncio.wait(tasks, timeout=WAIT + 5)
        for task in unfinished:  # trigger() gives up after WAIT itself; this is only a backstop
            task.cancel()
        done = [task.result() if task in finished else (None, None) for task in tasks]
        sends = [sent for sent, _ in done]
        rtts = [seconds for _, seconds in done if seconds is not None]
        expected = args.triggers * len(listeners)
        await wait_until(lambda: tally.total >= expected and all(len(l.arrivals) >= args.triggers for l in listeners),
                         drain)
        await asyncio.sleep(GRACE)
        usage = {f"cpu {name}": cpu_seconds(pid) - cpu_before[name] for name, pid in side.pids.items()}
        usage["client busy"] = (own_cpu() - client_before) / (time.perf_counter() - wall_before)
        redis_after = side.redis.read() if side.redis else {}
    finally:
        gc.enable()
        gc.unfreeze()
        closing = await close_listeners(side.listen, listeners, args.open_concurrency)
    settled = await settle(next(iter(side.pids.values())))
    stats = summarize(listeners, count, sends, args)
    calls = {k: redis_after[k] - redis_before.get(k, 0) for k in redis_after if not k.startswith(":")}
    stats.update(
        side=side.name, mode=mode, count=count, ready=ready, opened=len(listeners), failures=failures,
        open_p50=pct(open_times, 50), open_p99=pct(open_times, 99), overflows=overflows, warm_heard=warm_heard,
        warmed=warmed, rtt_ms=[s * 1000 for s in rtts], usage=usage, closing=closing, settled=settled,
        redis_calls=sum(calls.values()) if side.redis else None,
        redis_top=sorted(((v, k) for k, v in calls.items() if v > 0), reverse=True)[:8],
        redis_cpu=redis_after.get(":cpu", math.nan) - redis_before.get(":cpu", math.nan),
        redis_clients=redis_before.get(":clients"),
        redis_bytes=redis_after.get(":bytes", math.nan) - redis_before.get(":bytes", math.nan),
        log_news={name: log_news(path, logs[name]) for name, path in side.logs.items()},
    )
    return stats


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarize(listeners: list[Listener], count: int, sends: list[float | None], args: argparse.Namespace
              ) -> dict[str, Any]:
    n = args.triggers
    counts = [len(l.arrivals) for l in listeners]
    exact = [l for l in listeners if len(l.arrivals) == n]
    per_trigger = [[(l.arrivals[k] - sent) * 1000 for l in exact] for k, sent in enumerate(sends) if sent is not None]
    latencies = [x for row in per_trigger for x in row]
    return {
        "sent": count * n, "received": sum(counts), "exact": len(exact),
        "lost": sum(max(0, n - c) for c in counts) + (count - len(listeners)) * n,
        "dup": sum(max(0, c - n) for c in counts), "failed_triggers": sum(s is None for s in sends),
        "latencies": latencies, "negative": sum(x < 0 for x in latencies),
    }


# --- output --------------------------------------------------------------------------------------


def progress(s: dict[str, Any], run: int, triggers: int) -> str:
    """One phase as it finishes, with everything that explains an odd row."""
    lat = s["latencies"]
    usage = s["usage"]
    cpus = ", ".join(f"{k} {v * 1000 / triggers:.1f} ms/ann" for k, v in usage.items() if k.startswith("cpu "))
    line = (f"  {s['count']:>5} {s['mode']:<6} run {run} {s['side']:<10} ready {s['ready']:5.1f} s "
            f"({s['opened']}/{s['count']}; per stream p50 {s['open_p50']:.2f} p99 {s['open_p99']:.2f} s)  "
            f"delivered {s['received']}/{s['sent']} dup {s['dup']}  "
            f"p50/p99/max {pct(lat, 50):.1f}/{pct(lat, 99):.1f}/{max(lat, default=math.nan):.1f} ms  "
            f"{cpus}, client busy {usage.get('client busy', math.nan):.0%}")
    notes = []
    if s["failures"]:
        notes.append("not open: " + "; ".join(f"{n} x {why}" for why, n in s["failures"].most_common(3)))
    if s["overflows"]:
        notes.append(f"{s['overflows']} listen-queue overflows while opening")
    if not s["warmed"]:
        notes.append(f"warm-up heard on {s['warm_heard']} of {s['opened']} streams")
    if s["exact"] != s["opened"]:
        notes.append(f"latencies from the {s['exact']} of {s['opened']} streams that heard every trigger once")
    if s["negative"]:
        notes.append(f"{s['negative']} arrivals before their trigger was sent (misattributed)")
    if s["failed_triggers"]:
        notes.append(f"{s['failed_triggers']} triggers failed")
    heard = s["received"] / s["opened"] if s["opened"] else 0  # announcements a stream heard, on average
    if s["opened"] and heard < triggers - 0.5:
        cpus = ", ".join(f"{k} {v * 1000 / heard:.0f} ms" for k, v in usage.items() if k.startswith("cpu ") and heard)
        notes.append(f"only {heard:.1f} of {triggers} announcements heard per stream by the end of the drain: "
                     f"per announcement heard, {cpus}")
    if s["redis_calls"] is not None:
        top = ", ".join(f"{k} {v / triggers:.1f}" for v, k in s["redis_top"])
        notes.append(f"Redis {s['redis_calls'] / triggers:.1f} cmds/ann ({top}), "
                     f"Redis CPU {s['redis_cpu'] * 1000 / triggers:.2f} ms/ann, "
                     f"{s['redis_bytes'] / 1024 / triggers:.1f} KiB/ann in+out, {s['redis_clients']:.0f} clients")
    for name, signs in s["log_news"].items():
        if any(signs.values()):
            notes.append(f"worker {name} log: " + ", ".join(f"{n} {sign}" for sign, n in signs.items() if n))
    notes.append(f"trigger rtt p50 {pct(s['rtt_ms'], 50):.1f} ms; closing {s['closing']:.1f} s, "
                 f"settling {s['settled']:.1f} s")
    return line + "\n" + "\n".join(f"        {note}" for note in notes)


def table(rows: list[tuple[int, dict[str, Any], dict[str, Any] | None]], triggers: int) -> str:
    """Issue 28's table: one row per (listeners, era, run), django_mcp beside its floor."""
    head = (f"{'listeners':>9} {'era':<6} {'run':>3} | {'ready s (open)':>21} | {'delivered/sent':>15} {'dup':>4} | "
            f"{'p50/p99/max ms':>20} | {'floor p50/p99/max':>20} | {'p99/floor':>9} | "
            f"{'Redis cmds/ann':>14} {'KiB/ann':>7} | {'A CPU ms/ann':>12} | {'B CPU ms/ann':>12} | "
            f"{'floor CPU ms/ann':>16}")
    out = [head, "-" * len(head)]

    def triple(lat: list[float]) -> str:
        return f"{pct(lat, 50):.1f}/{pct(lat, 99):.1f}/{max(lat, default=math.nan):.1f}"

    for run, s, floor in rows:
        lat = s["latencies"]
        ready = f"{s['ready']:.1f} ({s['opened']}/{s['count']})"
        usage = s["usage"]
        flat = floor["latencies"] if floor else []
        ratio = pct(lat, 99) / pct(flat, 99) if floor and flat and lat else math.nan
        redis = "-" if s["redis_calls"] is None else f"{s['redis_calls'] / triggers:.1f}"
        kib = "-" if s["redis_calls"] is None else f"{s['redis_bytes'] / 1024 / triggers:.1f}"
        floor_cpu = floor["usage"].get("cpu floor", math.nan) * 1000 / triggers if floor else math.nan
        out.append(f"{s['count']:>9} {s['mode']:<6} {run:>3} | {ready:>21} | "
                   f"{str(s['received']) + '/' + str(s['sent']):>15} {s['dup']:>4} | {triple(lat):>20} | "
                   f"{triple(flat) if floor else '-':>20} | {ratio:>9.2f} | {redis:>14} {kib:>7} | "
                   f"{usage.get('cpu A', math.nan) * 1000 / triggers:>12.1f} | "
                   f"{usage.get('cpu B', math.nan) * 1000 / triggers:>12.1f} | {floor_cpu:>16.1f}")
    return "\n".join(out)


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def event_loop_runner() -> Callable[..., Any]:
    """uvloop's run when installed (less client CPU per stream event), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run
    return uvloop.run


async def measure_count(count: int, django: Side, floor: Side | None, modes: list[str], args: argparse.Namespace,
                        rows: list[tuple[int, dict[str, Any], dict[str, Any] | None]]) -> None:
    for run in range(1, args.runs + 1):
        for mode in modes:
            stats = await run_phase(django, mode, count, args)
            print(progress(stats, run, args.triggers), flush=True)
            floor_stats = None
            if floor is not None:
                floor_stats = await run_phase(floor, mode, count, args)
                print(progress(floor_stats, run, args.triggers), flush=True)
            rows.append((run, stats, floor_stats))


def main() -> int:
    args = parse_args()
    modes = ["legacy", "modern"] if args.mode == "both" else [args.mode]
    wall = time.perf_counter()
    soft, hard = raise_nofile()
    print(f"delivery: {args.counts} listeners on worker A ({args.server}), {args.triggers} triggers on worker B every "
          f"{args.interval_ms:g} ms, {args.runs} run(s) of {', '.join(modes)}, opening {args.open_concurrency} at a "
          f"time within {args.ready_timeout:g} s{'' if args.no_floor else ', each beside the floor'}")
    print(f"python {sys.version.split()[0]}, daphne {version('daphne')}, channels {version('channels')}, "
          f"channels_redis {version('channels-redis')}, redis-py {version('redis')}, psycopg {version('psycopg')}, "
          f"uvicorn {version('uvicorn')}, httptools {version('httptools')}, uvloop {version('uvloop')} "
          f"(uvicorn's speed-ups, and this client's loop)")
    ports = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    print(f"RLIMIT_NOFILE soft {soft} hard {hard}; ephemeral ports {ports[0]}-{ports[1]}")
    if max(args.counts) + 1000 > soft:
        print(f"  ! {max(args.counts)} streams need about {max(args.counts) + 1000} descriptors per process")
    rows: list[tuple[int, dict[str, Any], dict[str, Any] | None]] = []
    runner = event_loop_runner()
    probe = RedisProbe()
    server = UvicornServer if args.server == "uvicorn" else LiveServer
    floor_kind = args.server if args.floor_server == "same" else args.floor_server
    floor_class = UvicornServer if floor_kind == "uvicorn" else LiveServer
    with services() as env:
        try:
            for count in args.counts:
                server_pinned = pin({SERVER_CPU})  # the workers and the floor inherit CPU 0 ...
                try:
                    with contextlib.ExitStack() as stack:
                        workers = stack.enter_context(two_workers(env, keepalive="15", prefix=f"delivery-{count}",
                                                                  server=server))
                        floor_server = None if args.no_floor else stack.enter_context(floor_class(
                            app="benchmarks.delivery_floor:app", env={**env, "DJANGO_SETTINGS_MODULE": None},
                            name=f"delivery-floor-{count}"))
                        load_pinned = pin({LOAD_CPU})  # ... and this process moves to CPU 1
                        where = ("workers and the floor on CPU 0, this script on CPU 1"
                                 if server_pinned and load_pinned and can_pin() else "none")
                        limits = ", ".join(f"{name} {max_open_files(pid)}" for name, pid in
                                           (("A", workers.a.pid), ("B", workers.b.pid),
                                            ("floor", floor_server.pid if floor_server else None)))
                        print(f"\n{count} listeners: pinning {where}; Max open files {limits}\n{workers.describe()}"
                              + (f"\nfloor on {floor_kind}: {floor_server.url}" if floor_server else ""))
                        django = Side("django_mcp", Target(workers.a.host, workers.a.port),
                                      Target(workers.b.host, workers.b.port), {"A": workers.a.pid, "B": workers.b.pid},
                                      {"A": workers.a.log_path, "B": workers.b.log_path}, probe)
                        floor: Side | None = None
                        if floor_server is not None:
                            floor = Side("floor", Target(floor_server.host, floor_server.port),
                                         Target(floor_server.host, floor_server.port), {"floor": floor_server.pid},
                                         {}, None)
                        budget = args.runs * len(modes) * 2 * (args.ready_timeout + 240 + args.triggers)
                        try:
                            runner(asyncio.wait_for(measure_count(count, django, floor, modes, args, rows), budget))
                        except (asyncio.TimeoutError, OSError, RuntimeError) as exc:  # keep the rows so far
                            print(f"  ! {count} listeners stopped: {exc!r}")
                finally:
                    pin(ALLOWED_CPUS)
        finally:
            probe.close()

    print(f"\nissue 28's table ({args.triggers} triggers {args.interval_ms:g} ms apart; latencies in ms over the "
          f"streams that heard every trigger once; CPU and Redis per announcement):")
    print(table(rows, args.triggers))
    print(f"\ntotal time {time.perf_counter() - wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
