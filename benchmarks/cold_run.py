"""
The cold-session part of ``run.py``: django_mcp against the MCP Python SDK's server (see cold.py).

Fresh processes, all pinned to CPU 0 and started together before timing: for scale, a plain ASGI
callable answering fixed bodies (``plain_cold_asgi.py``, the server's own floor) and a bare Channels
consumer answering the same (``baseline_cold_asgi.py``); django_mcp serving the peer's one tool
(``cold_asgi.py``) on every ASGI server kind on the run's SQLite database, again on PostgreSQL when
``--postgres`` gave an environment for it, django_mcp serving the test app's 35 tools
(``tests.asgi``, SQLite) to show what a longer listing costs, and the SDK peer (``sdk_asgi.py``)
on uvicorn only (it needs the lifespan daphne does not run). On uvicorn, django_mcp and the peer
also serve ``echo`` as an ``async def`` (``BENCH_ASYNC_TOOL``): the same comparison without the
worker-thread hop both pay for a sync tool. Each answers one checked cold session before timing;
one that fails is left out and reported. Then, as in the throughput part, a short warm-up and
``--repeat`` interleaved rounds over every (concurrency, target) point.
"""

from __future__ import annotations

import statistics

from . import cold
from .servers import LOAD_CPU, Server, pinned, sdk_peer, sdk_version

GOAL = 2.0  # the project's goal: at least twice the SDK's cold sessions per second
SDK, SDK_ASYNC = "MCP SDK peer", "MCP SDK peer, async tool"
PLAIN, BARE = "plain ASGI app", "bare Channels consumer"
SQLITE, POSTGRES, MANY_TOOLS = "django_mcp, SQLite", "django_mcp, PostgreSQL", "django_mcp, SQLite, 35 tools"
ASYNC = "django_mcp, SQLite, async tool"
# The rows that serve the peer's one sync tool: the goal is read on them.
LIKE_THE_PEER = (SQLITE, POSTGRES)
# Which peer row a row is compared with.
PEER_OF = {ASYNC: SDK_ASYNC}


def labels(postgres: bool) -> list[str]:
    """The django_mcp rows of the table, in order."""
    return [SQLITE] + ([POSTGRES] if postgres else []) + [MANY_TOOLS]


def start(kinds: list[str], django_env: dict, pg_env: dict | None, log) -> tuple[dict, dict]:
    """Start every target; return ({(kind, label): server} for those that pass, {label: answer sizes})."""
    wanted: list[tuple[str, str, Server]] = []
    for kind in kinds:
        # The floor: what five requests on one connection cost this server with no consumer at all.
        wanted.append((kind, PLAIN, Server(kind, "benchmarks.plain_cold_asgi:application", "cold-plain",
                                           {"DJANGO_SETTINGS_MODULE": None})))
        # The same answers from a stock Channels consumer: what one costs before any MCP work.
        wanted.append((kind, BARE, Server(kind, "benchmarks.baseline_cold_asgi:application", "cold-bare",
                                          {"DJANGO_SETTINGS_MODULE": None})))
        wanted.append((kind, SQLITE, Server(kind, "benchmarks.cold_asgi:application", "cold-sqlite", django_env)))
        if pg_env is not None:
            wanted.append((kind, POSTGRES, Server(kind, "benchmarks.cold_asgi:application", "cold-postgres", pg_env)))
        wanted.append((kind, MANY_TOOLS, Server(kind, "tests.asgi:application", "cold-sqlite-35", django_env)))
    if "uvicorn" in kinds and sdk_version():
        wanted.append(("uvicorn", ASYNC, Server("uvicorn", "benchmarks.cold_asgi:application", "cold-sqlite-async",
                                                {**django_env, "BENCH_ASYNC_TOOL": "1"})))
        wanted.append(("uvicorn", SDK, sdk_peer()))
        wanted.append(("uvicorn", SDK_ASYNC, sdk_peer(env={"BENCH_ASYNC_TOOL": "1"}, label="sdk-async")))
    targets, sizes = {}, {}
    for kind, label, server in wanted:
        try:
            server.start()
        except RuntimeError as exc:
            log(f"  ! cold sessions, {label} on {kind}: did not start, left out: {exc}")
            continue
        problem, body_sizes = cold.check(server.port)
        sizes.setdefault(label, body_sizes)
        if problem:
            log(f"  ! cold sessions, {label} on {kind}: wrong answer before timing, left out: {problem}")
            server.stop()
            continue
        targets[(kind, label)] = server
    log("  cold sessions: started " + ", ".join(str(s) for s in targets.values()))
    return targets, sizes


def timed(server: Server, conns: int, duration: float) -> cold.Result:
    """One measured point, with the server's own CPU time around it."""
    cpu = server.cpu_seconds()
    result = cold.run(pinned([], LOAD_CPU), server.port, conns, duration)
    result.server_cpu_s = server.cpu_seconds() - cpu
    return result


def run(args, kinds: list[str], django_env: dict, pg_env: dict | None, log=print) -> tuple[dict, dict]:
    """Measure every target; return ({(kind, label, c): [Result per repetition]}, answer sizes)."""
    targets, sizes = start(kinds, django_env, pg_env, log)
    results: dict = {key + (c,): [] for key in targets for c in args.levels}
    try:
        warm = min(1.0, args.duration / 2)  # discarded: first sessions, lazy imports, DB connections
        for server in targets.values():
            cold.run(pinned([], LOAD_CPU), server.port, max(args.levels), warm)
        for rep in range(1, args.repeat + 1):
            for conns in args.levels:
                for (kind, label), server in targets.items():
                    r = timed(server, conns, args.duration)
                    results[(kind, label, conns)].append(r)
                    log(f"  rep {rep}/{args.repeat} {kind:7} c={conns:<3} cold {label:31} {r.rate:7,.0f} sessions/s"
                        f"  p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_session:6.0f} us/session {r.busy:4.0%} busy"
                        + (f"  failed {r.failed} errors {r.errors}" if r.failed or r.errors else ""))
    finally:
        for server in targets.values():
            server.stop()
    return results, sizes


def _median(runs: list, key) -> float:
    return statistics.median(key(r) for r in runs)


def print_table(results: dict, sizes: dict, kinds: list[str], levels: list[int], repeat: int,
                postgres: bool) -> None:
    """The cold-session table, the goal lines against the SDK, and any failure."""
    version = sdk_version()
    print(f"\nCold sessions/s: initialize, notifications/initialized, tools/list, tools/call echo, DELETE on "
          f"one keep-alive connection per client (median of {repeat}; vs SDK = django_mcp / MCP SDK "
          f"{version or '(not installed)'} on the same server and c; own us = CPU us/sess above the plain "
          f"ASGI app's, what the application itself spends)")
    header = (f"{'server':8}{'target':31}{'c':>4}{'sessions/s':>11}{'spread':>8}{'p99 ms':>8}{'CPU us/sess':>12}"
              f"{'own us':>8}{'busy':>6}{'client':>8}{'vs SDK':>9}{'vs bare':>9}")
    print(header + "\n" + "-" * len(header))
    summary = []
    for kind in kinds:
        for conns in levels:
            bare = results.get((kind, BARE, conns))
            plain = results.get((kind, PLAIN, conns))
            floor = _median(plain, lambda r: r.cpu_us_per_session) if plain else None
            rows = [PLAIN, BARE] + labels(postgres) + ([ASYNC, SDK, SDK_ASYNC] if kind == "uvicorn" else [])
            for label in rows:
                runs = results.get((kind, label, conns))
                if not runs:
                    print(f"{kind:8}{label:31}{conns:>4}{'n/a':>11}")
                    continue
                rate = _median(runs, lambda r: r.rate)
                spread = (max(r.rate for r in runs) - min(r.rate for r in runs)) / 2 / rate \
                    if rate and len(runs) > 1 else 0
                ratio = f"{'':>9}"
                peer = results.get((kind, PEER_OF.get(label, SDK), conns))
                if label not in (SDK, SDK_ASYNC, PLAIN, BARE) and peer:
                    peer_rate = _median(peer, lambda r: r.rate)
                    value = rate / peer_rate if peer_rate else 0.0
                    ratio = f"{value:>8.2f}x"
                    if label in LIKE_THE_PEER or label in PEER_OF:
                        summary.append((kind, label, conns, value))
                if label not in (BARE, PLAIN) and bare:
                    bare_rate = _median(bare, lambda r: r.rate)
                    ratio += f"{rate / bare_rate if bare_rate else 0.0:>8.2f}x"
                cpu = _median(runs, lambda r: r.cpu_us_per_session)
                own = f"{cpu - floor:>8,.0f}" if floor is not None and label != PLAIN else f"{'':>8}"
                print(f"{kind:8}{label:31}{conns:>4}{rate:>11,.0f}{'±' + format(spread, '.0%') if spread else '':>8}"
                      f"{_median(runs, lambda r: r.p99_ms):>8.1f}{cpu:>12,.0f}{own}"
                      f"{_median(runs, lambda r: r.busy):>6.0%}{_median(runs, lambda r: r.client_busy):>8.0%}{ratio}")
    print("  answer bytes per step (initialize/initialized/tools/list/tools/call/DELETE): " + "; ".join(
        f"{label}: {'/'.join(str(n) for n in body)}" for label, body in sizes.items()))
    print(f"\nGoal: cold sessions/s >= {GOAL:g}x the MCP SDK peer's on the same ASGI server, serving the same one "
          "tool (the peer runs on uvicorn only)")
    for kind, label, conns, value in summary:
        verdict = "ok" if value >= GOAL else "BELOW"
        if label in PEER_OF:
            verdict = "(for comparison: an async tool on both sides)"
        print(f"  {kind:8}{label:31} c={conns:<3} {value:5.2f}x  {verdict}")
    for (kind, label, conns), runs in sorted(results.items()):
        peer = results.get((kind, SDK, conns))
        if label in (BARE, PLAIN) and peer:
            what = "the bare Channels consumer" if label == BARE else "the plain ASGI app"
            print(f"  (for scale: {what}, fixed answers and no MCP work, on {kind} at "
                  f"c={conns}: {_median(runs, lambda r: r.rate) / _median(peer, lambda r: r.rate):.2f}x the SDK peer)")
    for (kind, label, conns), runs in sorted(results.items()):
        plain, peer = results.get((kind, PLAIN, conns)), results.get((kind, SDK, conns))
        if label == SQLITE and plain and peer:
            floor = _median(plain, lambda r: r.cpu_us_per_session)
            ours = _median(runs, lambda r: r.cpu_us_per_session) - floor
            theirs = _median(peer, lambda r: r.cpu_us_per_session) - floor
            less = theirs / ours if ours > 0 else 0.0
            print(f"  (own CPU per session above the plain ASGI app's {floor:,.0f} us on {kind} at c={conns}: "
                  f"django_mcp {ours:,.0f} us, the SDK peer {theirs:,.0f} us, {less:.2f}x less)")
    if not summary:
        print("  n/a: no SDK peer measured" + ("" if version else " (mcp not installed)"))
    for (kind, label, conns), runs in results.items():
        for r in runs:
            if r.failed or r.errors:
                print(f"  ! {kind} {label} c={conns}: failed checks {r.failed or 0}, {r.errors} socket errors or "
                      f"timeouts in a timed run; first: {r.first_failure or '-'}")
            if r.client_busy > 0.85:
                print(f"  ! {kind} {label} c={conns}: the cold-session client used {r.client_busy:.0%} of its core; "
                      "it, not the server, may be the limit")
