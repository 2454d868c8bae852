"""
A restart's reconnection storm: N legacy clients open their sessions at the same moment against
one of two django_mcp workers, beside a trivial ASGI app on the same server software.

    cd /work/main && .venv/bin/python benchmarks/burst.py                  # 1,000 at once, ≈3 min
    .venv/bin/python benchmarks/burst.py --clients 5000 --runs 1           # the 5,000 row
    .venv/bin/python benchmarks/burst.py --servers daphne --eras streamable --runs 1   # a quick look

When a worker restarts, every client it held reconnects at once. Goal (issue 39): 1,000 legacy
clients started together against one worker of two have every session initialized and its stream
open within 2x the time the same clients take against a trivial ASGI app on the same server
software, on daphne and on uvicorn; 5,000 at once: none refused or lost, the time reported. A
measurement, not a test: it prints numbers and exits 0, whatever they are.

Each client does what a reconnecting client does, on its own connections (one request per
connection, ``benchmarks/delivery_clients.py``), all N started in the same loop pass:

- ``streamable`` (2025-11-25 Streamable HTTP): ``POST initialize``, ``POST
  notifications/initialized`` (202), then the GET stream (``Accept: text/event-stream``), open once
  its response head is in;
- ``sse`` (2024-11-05 HTTP+SSE, whose clients open their stream first): ``GET /sse`` until its
  ``endpoint`` event, ``POST initialize`` to that endpoint (202) until the answer arrives on the
  stream, then ``POST notifications/initialized`` (202).

``open`` is the time from the start until the last client finished (or ``--deadline``); p50 / p99
are the clients' own times. A client that fails or is not done by the deadline is counted with its
reason: none may be. Every request waits up to ``--timeout`` seconds.

The same clients run against, in turn (runs interleaved, so drift hits both alike):

- ``floor``: ``benchmarks/delivery_floor.py``, a plain ASGI app that answers the same requests from
  memory (no Django, no database, no channel layer), one process;
- ``django_mcp``: worker A of two (``tests.transports.workers.two_workers``) serving
  ``tests.asgi:application`` on a fresh PostgreSQL database (127.0.0.1:5432) and a Redis channel
  layer (127.0.0.1:6379), as ``benchmarks/delivery.py`` sets them up; worker B idles, as the
  worker that did not restart would.

Both listen with the backlog the deployment guide recommends (``--backlog``, default 4096: daphne
through its endpoint syntax ``-e tcp:port=…:backlog=N``, uvicorn with ``--backlog``), daphne with
``-v 0`` (no access log) for both. With two CPUs the servers run on CPU 0 and this client on
CPU 1. Also printed per burst: the server's CPU seconds (worker A's, or the floor's), and the
kernel's ``TcpExt ListenOverflows`` (connections a full accept queue dropped; each costs its client
a SYN retransmission, 1 s or more). ``--backlog 50`` shows daphne's default.

After each burst the streams are closed (streamable sessions are also DELETEd) and the script waits
until the server is idle again.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.delivery import (LOAD_CPU, SERVER_CPU, cpu_seconds, failure_reason, listen_overflows, pin,
                                 raise_nofile, services, settle)
from benchmarks.delivery_clients import SSE, Exchange, call, open_exchange
from tests.live import LiveServer
from tests.transports import workers
from tests.transports.workers import DaphneServer, UvicornServer

LEGACY, HTTP_SSE = "2025-11-25", "2024-11-05"
GOAL = 2.0
SERVERS = {"daphne": DaphneServer, "uvicorn": UvicornServer}
ERAS = ("streamable", "sse")
CLIENT_INFO = {"name": "burst-benchmark", "version": "1.0"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1000",
                        help="comma-separated client counts, e.g. 1000,5000 (default 1000)")
    parser.add_argument("--eras", default=",".join(ERAS), help="streamable, sse or both (default both)")
    parser.add_argument("--servers", default=",".join(SERVERS), help="daphne, uvicorn or both (default both)")
    parser.add_argument("--runs", type=int, default=2, help="bursts per count, era and target, interleaved (default 2)")
    parser.add_argument("--backlog", type=int, default=workers.BACKLOG,
                        help=f"the servers' listen backlog (default {workers.BACKLOG}; daphne's own is 50)")
    parser.add_argument("--deadline", type=float, default=120.0, help="seconds a burst may take (default 120)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds any one request may take (default 60)")
    args = parser.parse_args()
    try:
        args.counts = [int(x) for x in args.clients.split(",") if x.strip()]
    except ValueError:
        parser.error("--clients takes integers separated by commas")
    args.eras = [x.strip() for x in args.eras.split(",") if x.strip()]
    args.servers = [x.strip() for x in args.servers.split(",") if x.strip()]
    if not args.counts or min(args.counts) < 1 or args.runs < 1 or args.backlog < 1:
        parser.error("--clients, --runs and --backlog must be >= 1")
    if not set(args.eras) <= set(ERAS) or not args.eras:
        parser.error(f"--eras takes {', '.join(ERAS)}")
    if not set(args.servers) <= set(SERVERS) or not args.servers:
        parser.error(f"--servers takes {', '.join(SERVERS)}")
    return args


# --- one client ----------------------------------------------------------------------------------


@dataclass
class Client:
    """One reconnecting client: its stream, once open, and how long it took."""
    stream: Exchange | None = None
    session_id: str | None = None
    seconds: float = 0.0
    finished_at: float = 0.0


async def open_streamable(host: str, port: int, client: Client, timeout: float) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}}
    reply = await call(host, port, "POST", init, timeout=timeout)
    client.session_id = reply.headers.get("mcp-session-id")
    if reply.status != 200 or not client.session_id:
        raise RuntimeError(f"initialize: {reply.status}")
    headers = {"Mcp-Session-Id": client.session_id, "MCP-Protocol-Version": LEGACY}
    done = await call(host, port, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers,
                      timeout=timeout)
    if done.status != 202:
        raise RuntimeError(f"notifications/initialized: {done.status}")
    client.stream = await open_exchange(host, port, "GET", None, {"Accept": SSE, **headers}, timeout=timeout)
    if client.stream.status != 200:
        raise RuntimeError(f"GET stream: {client.stream.status}")


async def open_http_sse(host: str, port: int, client: Client, timeout: float) -> None:
    client.stream = stream = await open_exchange(host, port, "GET", None, {"Accept": SSE}, timeout=timeout,
                                                 path="/sse")
    if stream.status != 200:
        raise RuntimeError(f"GET /sse: {stream.status}")
    endpoint = (await stream.wait_message(lambda m: m.get("event") == "endpoint", timeout))["data"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": HTTP_SSE, "capabilities": {}, "clientInfo": CLIENT_INFO}}
    accepted = await call(host, port, "POST", init, timeout=timeout, path=endpoint)
    if accepted.status != 202:
        raise RuntimeError(f"POST initialize: {accepted.status}")
    await stream.wait_message(lambda m: m.get("id") == 1 and "result" in m, timeout)
    done = await call(host, port, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                      timeout=timeout, path=endpoint)
    if done.status != 202:
        raise RuntimeError(f"notifications/initialized: {done.status}")


OPENERS = {"streamable": open_streamable, "sse": open_http_sse}


# --- one burst -----------------------------------------------------------------------------------


@dataclass
class Burst:
    """What one burst against one target came to."""
    target: str
    era: str
    clients: int
    seconds: float  # until the last client was done (or the deadline)
    done: list[float]  # each finished client's own seconds
    failures: collections.Counter[str]
    overflows: int
    cpu: float  # the server's CPU seconds over the burst

    @property
    def complete(self) -> bool:
        return not self.failures and len(self.done) == self.clients


async def burst(server: LiveServer, era: str, count: int, args: argparse.Namespace, target: str) -> Burst:
    opener = OPENERS[era]
    clients = [Client() for _ in range(count)]

    async def run(client: Client) -> None:
        began = time.perf_counter()
        try:
            await opener(server.host, server.port, client, args.timeout)
        except BaseException:
            if client.stream is not None:
                client.stream.close()
            raise
        client.finished_at = time.perf_counter()
        client.seconds = client.finished_at - began

    overflows, cpu = listen_overflows(), cpu_seconds(server.pid)
    started = time.perf_counter()
    tasks = [asyncio.create_task(run(client)) for client in clients]
    finished, pending = await asyncio.wait(tasks, timeout=args.deadline)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    failures = collections.Counter[str]()
    for task in tasks:
        if task in pending:
            failures["not done by the deadline"] += 1
        elif task.exception() is not None:
            failures[failure_reason(task.exception())] += 1  # type: ignore[arg-type]
    ok = [client for client, task in zip(clients, tasks) if task in finished and task.exception() is None]
    done = [client.seconds for client in ok]
    seconds = max((client.finished_at - started for client in ok), default=0.0) if not pending else args.deadline
    result = Burst(target, era, count, seconds, done, failures, listen_overflows() - overflows,
                   cpu_seconds(server.pid) - cpu)
    await close(server, clients, era)
    return result


async def close(server: LiveServer, clients: list[Client], era: str) -> None:
    """Close every stream (an HTTP+SSE session ends with it), DELETE the streamable sessions, wait for quiet."""
    for client in clients:
        if client.stream is not None:
            client.stream.close()
    if era == "streamable":
        gate = asyncio.Semaphore(100)

        async def delete(session_id: str) -> None:
            async with gate:
                with contextlib.suppress(Exception):
                    await call(server.host, server.port, "DELETE", None,
                               {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})

        await asyncio.gather(*(delete(c.session_id) for c in clients if c.session_id))
    await settle(server.pid)


# --- servers -------------------------------------------------------------------------------------


@contextlib.contextmanager
def servers_of(kind: str, env: dict[str, str], backlog: int) -> Iterator[tuple[LiveServer, LiveServer]]:
    """(the floor, worker A of two django_mcp workers) on ``kind``, listening with ``backlog``."""
    server_class = type(f"{SERVERS[kind].__name__}{backlog}", (SERVERS[kind],), {"backlog": backlog})
    floor = server_class(app="benchmarks.delivery_floor:app", env={**env, "DJANGO_SETTINGS_MODULE": None},
                         name=f"burst-floor-{kind}")
    pinned = pin({SERVER_CPU})  # the servers inherit CPU 0 …
    try:
        with floor, workers.two_workers(env, keepalive="15", prefix=f"burst-{kind}", server=server_class) as pair:
            pin({LOAD_CPU})  # … and this client moves to CPU 1
            yield floor, pair.a
    finally:
        if pinned:
            pin({SERVER_CPU, LOAD_CPU})


# --- report --------------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def describe(b: Burst) -> str:
    failed = "" if b.complete else "  failed: " + ", ".join(f"{n} x {why}" for why, n in b.failures.most_common())
    return (f"{b.clients:6d} {b.era:10} {b.target:10} open {b.seconds:6.2f} s ({len(b.done)}/{b.clients})  "
            f"p50/p99 {quantile(b.done, 0.5):5.2f}/{quantile(b.done, 0.99):5.2f} s  "
            f"cpu {b.cpu:5.2f} s  overflows {b.overflows}{failed}")


def summary(kind: str, results: list[Burst]) -> list[str]:
    lines = []
    keys = sorted({(b.clients, b.era) for b in results}, key=lambda k: (k[0], ERAS.index(k[1])))
    for clients, era in keys:
        runs = {t: [b for b in results if (b.clients, b.era, b.target) == (clients, era, t)]
                for t in ("floor", "django_mcp")}
        floor_s = statistics.median(b.seconds for b in runs["floor"])
        ours_s = statistics.median(b.seconds for b in runs["django_mcp"])
        ratio = ours_s / floor_s if floor_s else float("nan")
        lost = sum(b.clients - len(b.done) for b in runs["django_mcp"])
        verdict = "goal met" if ratio <= GOAL and not lost else f"goal NOT met (<= {GOAL:g}x, none lost)"
        lines.append(f"{kind:8} {era:10} {clients:6d} | floor {floor_s:6.2f} s | django_mcp {ours_s:6.2f} s | "
                     f"{ratio:5.2f}x | lost {lost:5d} | {verdict}")
    return lines


async def main_async(args: argparse.Namespace, env: dict[str, str]) -> list[str]:
    table: list[str] = []
    for kind in args.servers:
        with servers_of(kind, env, args.backlog) as (floor, worker_a):
            print(f"\n{kind}: floor {floor.url}, django_mcp worker A {worker_a.url} (backlog {args.backlog})",
                  flush=True)
            results = []
            for count in args.counts:
                for era in args.eras:
                    for _ in range(args.runs):
                        for target, server in (("floor", floor), ("django_mcp", worker_a)):
                            result = await burst(server, era, count, args, target)
                            print("  " + describe(result), flush=True)
                            results.append(result)
            table += summary(kind, results)
    return table


def main() -> None:
    args = parse_args()
    soft, hard = raise_nofile()
    print(f"burst: {', '.join(map(str, args.counts))} clients at once, eras {', '.join(args.eras)}, "
          f"servers {', '.join(args.servers)}, {args.runs} runs; open files {soft}/{hard}")
    started = time.perf_counter()
    with services() as env:
        table = asyncio.run(main_async(args, env))
    print(f"\nmedian over runs; goal: django_mcp within {GOAL:g}x the floor, none lost")
    print("server   era        clients |  floor open   |  django_mcp open  | ratio | lost  |")
    print("\n".join(table))
    print(f"\ntotal time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
