"""
django_mcp against a bare Channels consumer, side by side in one run (see benchmarks/README.md).

    .venv/bin/python benchmarks/run.py            # 3 interleaved repetitions, 5 s per point
    .venv/bin/python benchmarks/run.py --quick    # 1 repetition, 2 s per point: a smoke run

Starts on 127.0.0.1 (free ports, loopback only) for each ASGI server (daphne; uvicorn if it is
importable): the bare consumer of ``baseline_asgi.py`` and django_mcp's ``tests.asgi``, all pinned
to CPU 0, and drives them from CPU 1 with wrk (or the stdlib generator in ``loadgen.py``). Prints
requests/second of tools/call per server, mode and concurrency, the ratio of each django_mcp mode to
the bare consumer on the same server, then memory per idle stream/session. On uvicorn the MCP
Python SDK's server (``sdk_asgi.py``) runs beside them as a peer: its legacy-session tools/call, and
cold sessions per second (``cold.py``) of django_mcp against it. ``--postgres`` adds django_mcp on a
fresh PostgreSQL database to the cold-session table. A measurement, not a test: it exits 0 once it
has printed, whatever the numbers. See README.md for how to read it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import cold_run, loadgen, memory, pg, workload
from benchmarks.servers import LOAD_CPU, Server, can_pin, have_uvicorn, pinned, sdk_peer, sdk_version, stop_all
from tests.live import migrate

BASELINE = "bare Channels AsyncConsumer"
MODERN = "django_mcp 2026-07-28 stateless"
MODERN_ASYNC = "django_mcp 2026-07-28, async tool"
LEGACY = "django_mcp 2025-11-25 session"
LEGACY_ASYNC = "django_mcp 2025-11-25, async tool"
SDK_LEGACY = "MCP SDK peer 2025-11-25 session"
MODERN_METRICS = "django_mcp 2026-07-28, async, metrics"
LEGACY_METRICS = "django_mcp 2025-11-25, async, metrics"
OURS = (MODERN, MODERN_ASYNC, LEGACY, LEGACY_ASYNC, MODERN_METRICS, LEGACY_METRICS)
# The same async call on a second server with the optional metrics app (django_mcp.metrics)
# installed: what the metrics cost a request, against the twin without them.
METRICS_TWINS = {MODERN_METRICS: MODERN_ASYNC, LEGACY_METRICS: LEGACY_ASYNC}
# The goals (issue "Legacy sessions at stateless speed"), for the async tool, where what is measured
# is the framework's own cost: mode -> least req/s ratio to the bare consumer (at c=1, at higher c).
GOALS = {MODERN_ASYNC: (0.85, 0.8), LEGACY_ASYNC: (0.7, 0.7)}
# A sync tool hops to a thread per call: its rate against the async twin's, at the highest c.
SYNC_GOAL = 0.6
SYNC_TWINS = {MODERN: MODERN_ASYNC, LEGACY: LEGACY_ASYNC}


def timing_arguments(parser: argparse.ArgumentParser, loadgen_help: str = "") -> None:
    """The options every timing script shares: --quick, --duration, --repeat, --concurrency, --loadgen."""
    parser.add_argument("--quick", action="store_true", help="1 repetition, 2 s per point (smoke run)")
    parser.add_argument("--duration", type=float, help="seconds per measured point (default 5, quick 2)")
    parser.add_argument("--repeat", type=int, help="interleaved repetitions, median reported (default 3, quick 1)")
    parser.add_argument("--concurrency", default="1,32", help="comma-separated connection counts (default 1,32)")
    parser.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto",
                        help="load generator (auto: wrk if installed, else the stdlib one" + loadgen_help + ")")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    timing_arguments(parser)
    parser.add_argument("--idle", type=int, default=200, help="idle streams/sessions for memory (default 200)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-session measurement")
    parser.add_argument("--postgres", action="store_true",
                        help="also measure django_mcp's cold sessions on a fresh PostgreSQL database (127.0.0.1:5432)")
    args = parser.parse_args()
    args.duration = args.duration or (2.0 if args.quick else 5.0)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.levels = [int(c) for c in args.concurrency.split(",")]
    return args


def bench_django_env(workdir: Path) -> dict[str, str]:
    """
    The environment of the benchmarks' django_mcp servers: tests.settings on a SQLite file in
    ``workdir``, without the optional metrics, tasks and views apps.
    """
    return {"MCP_TEST_SQLITE": str(workdir / "bench.sqlite3"), "MCP_TEST_WITHOUT_METRICS": "1",
            "MCP_TEST_WITHOUT_TASKS": "1", "MCP_TEST_WITHOUT_UI": "1"}


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def setup_process() -> None:
    # A SIGTERM must still stop our servers (atexit only runs on a normal exit or SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Hundreds of held sockets for the memory part: lift the soft descriptor limit to the hard one.
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    # The orchestrator idles during timing, but keep it off the server's core all the same.
    if can_pin():
        os.sched_setaffinity(0, {int(LOAD_CPU)})


def generator(args: argparse.Namespace):
    use_wrk = args.loadgen == "wrk" or (args.loadgen == "auto" and loadgen.have_wrk())
    if args.loadgen == "wrk" and not loadgen.have_wrk():
        sys.exit("--loadgen wrk: wrk is not installed (apt-get install -y wrk)")
    run = loadgen.run_wrk if use_wrk else loadgen.run_python
    prefix = pinned([], LOAD_CPU)
    return ("wrk (Lua script, 1 thread)" if use_wrk else "python asyncio raw sockets (stdlib)"), (
        lambda spec, port, conns, duration: run(prefix, spec, port, conns, duration))


def mirror_our_body(server: Server, baseline_env: dict) -> None:
    """Make the baseline answer django_mcp's real bytes for the modern echo call (same size)."""
    if "BENCH_BASELINE_RESPONSE" in baseline_env:
        return
    client = workload.Client(server.port)
    try:
        response = client.send(workload.modern_call())
    finally:
        client.close()
    if response.problem(workload.modern_call()):
        print("  ! django_mcp's answer is not the expected one; the baseline keeps its built-in body")
        return
    baseline_env["BENCH_BASELINE_RESPONSE"] = response.body.decode()
    print(f"  response body: {len(response.body)} bytes from both servers (legacy mode: its own, shorter)")


def start_throughput_servers(kinds: list[str], django_env: dict, baseline_env: dict) -> dict:
    """Start both servers on each kind; return {(kind, mode): (server, spec)} for the modes that answer."""
    modes = {}
    for kind in kinds:
        ours = Server(kind, "tests.asgi:application", "django_mcp", django_env).start()
        mirror_our_body(ours, baseline_env)
        bare = Server(kind, "benchmarks.baseline_asgi:application", "baseline", baseline_env).start()
        session_id = workload.new_session(ours.port)
        for mode, server, spec in ((BASELINE, bare, workload.baseline_call()),
                                   (MODERN, ours, workload.modern_call()),
                                   # The same call to an async echo: no hop to the sync thread, so
                                   # what remains is the framework's own cost.
                                   (MODERN_ASYNC, ours, workload.modern_call("echo_async")),
                                   (LEGACY, ours, workload.legacy_call(session_id, numbered=True)),
                                   (LEGACY_ASYNC, ours, workload.legacy_call(session_id, numbered=True,
                                                                             tool="echo_async"))):
            problem = workload.check(server.port, spec)
            if problem:
                print(f"  ! {mode} on {kind}: wrong answer before timing, left out: {problem}")
                continue
            modes[(kind, mode)] = (server, spec)
        metered = Server(kind, "tests.asgi:application", "django_mcp+metrics",
                         {**django_env, "MCP_TEST_WITHOUT_METRICS": "0"}).start()
        metered_session = workload.new_session(metered.port)
        for mode, spec in ((MODERN_METRICS, workload.modern_call("echo_async")),
                           (LEGACY_METRICS, workload.legacy_call(metered_session, numbered=True, tool="echo_async"))):
            problem = workload.check(metered.port, spec)
            if problem:
                print(f"  ! {mode} on {kind}: wrong answer before timing, left out: {problem}")
                continue
            modes[(kind, mode)] = (metered, spec)
        print(f"  started {ours}, {metered} and {bare}; legacy sessions {session_id}, {metered_session}")
        if kind == "uvicorn" and sdk_version():
            start_peer(kind, modes)
    return modes


def start_peer(kind: str, modes: dict) -> None:
    """The SDK peer, in a legacy session like django_mcp's, with wrk's request checked the same way."""
    try:
        peer = sdk_peer(kind).start()
        spec = workload.legacy_call(workload.new_session(peer.port), numbered=True)
    except (RuntimeError, OSError) as exc:
        print(f"  ! {SDK_LEGACY} on {kind}: did not start or open a session, left out: {exc}")
        return
    problem = workload.check(peer.port, spec)
    if problem:
        print(f"  ! {SDK_LEGACY} on {kind}: wrong answer before timing, left out: {problem}")
        peer.stop()
        return
    modes[(kind, SDK_LEGACY)] = (peer, spec)
    print(f"  started {peer}")


def timed(generate, server: Server, spec, conns: int, duration: float) -> loadgen.Result:
    """One measured point, with the server's own CPU time around it."""
    cpu = server.cpu_seconds()
    result = generate(spec, server.port, conns, duration)
    result.server_cpu_s = server.cpu_seconds() - cpu
    return result


def throughput(args, kinds, django_env, baseline_env, generate) -> dict:
    modes = start_throughput_servers(kinds, django_env, baseline_env)
    results: dict = {key + (c,): [] for key in modes for c in args.levels}
    try:
        # Warm-up (discarded): every mode once at the highest concurrency.
        warm = min(1.0, args.duration / 2)
        for (kind, mode), (server, spec) in modes.items():
            generate(spec, server.port, max(args.levels), warm)
        # Interleaved: each repetition visits every point once, so drift (thermal, noisy
        # neighbours) spreads over all points instead of biasing whichever ran last.
        for rep in range(1, args.repeat + 1):
            for conns in args.levels:
                for (kind, mode), (server, spec) in modes.items():
                    r = timed(generate, server, spec, conns, args.duration)
                    results[(kind, mode, conns)].append(r)
                    print(f"  rep {rep}/{args.repeat} {kind:7} c={conns:<3} {mode:32} {r.rps:8,.0f} rps  "
                          f"p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_request:5.0f} us/req {r.busy:4.0%} busy"
                          + (f"  bad {r.bad} errors {r.errors}" if r.bad or r.errors else ""))
    finally:
        for server in {id(s): s for s, _ in modes.values()}.values():
            server.stop()
    return results


def median_of(runs: list, key) -> float:
    return statistics.median(key(r) for r in runs)


def print_throughput(results: dict, kinds: list[str], levels: list[int], repeat: int) -> None:
    print(f"\nThroughput, tools/call echo (median of {repeat}; ratios are django_mcp / bare consumer on the "
          f"same server and c; vs SDK: django_mcp's legacy session / the SDK peer's, req/s)")
    header = (f"{'server':8}{'mode':33}{'c':>4}{'req/s':>9}{'spread':>8}{'p99 ms':>8}{'CPU us/req':>11}"
              f"{'busy':>6}{'ratio req/s':>13}{'ratio CPU':>11}{'vs SDK':>9}")
    print(header + "\n" + "-" * len(header))
    summary, peer_summary = [], []
    for kind in kinds:
        for conns in levels:
            bare = results.get((kind, BASELINE, conns))
            peer = results.get((kind, SDK_LEGACY, conns))
            for mode in (BASELINE, *OURS) + ((SDK_LEGACY,) if kind == "uvicorn" else ()):
                runs = results.get((kind, mode, conns))
                if not runs:
                    print(f"{kind:8}{mode:33}{conns:>4}{'n/a':>9}")
                    continue
                rps = median_of(runs, lambda r: r.rps)
                cpu = median_of(runs, lambda r: r.cpu_us_per_request)
                spread = (max(r.rps for r in runs) - min(r.rps for r in runs)) / 2 / rps if rps and len(runs) > 1 else 0
                ratios = ""
                if mode != BASELINE and bare:
                    bare_rps = median_of(bare, lambda r: r.rps)
                    bare_cpu = median_of(bare, lambda r: r.cpu_us_per_request)
                    ratio = rps / bare_rps if bare_rps else 0.0
                    ratios = f"{ratio:>12.2f}x{(bare_cpu / cpu if cpu else 0.0):>10.2f}x"
                    if mode in GOALS:  # the goals are set for the async tool
                        summary.append((kind, mode, conns, ratio))
                if mode in (LEGACY, LEGACY_ASYNC) and peer and median_of(peer, lambda r: r.rps):
                    versus = rps / median_of(peer, lambda r: r.rps)
                    ratios = f"{ratios:<24}{versus:>8.2f}x"
                    peer_summary.append((kind, mode, conns, versus))
                print(f"{kind:8}{mode:33}{conns:>4}{rps:>9,.0f}{'±' + format(spread, '.0%') if spread else '':>8}"
                      f"{median_of(runs, lambda r: r.p99_ms):>8.1f}{cpu:>11.0f}"
                      f"{median_of(runs, lambda r: r.busy):>6.0%}{ratios}")
    print("\nGoals: tools/call of the async tool against the bare Channels consumer on the same ASGI server")
    for kind, mode, conns, ratio in summary:
        goal = GOALS[mode][0 if conns == 1 else 1]
        verdict = "ok" if ratio >= goal else "BELOW GOAL"
        print(f"  {kind:8}{mode:33} c={conns:<3} {ratio:5.2f}x  >= {goal:.2f}x {verdict}")
    top = max(levels)
    print(f"Goal: a sync tool's req/s at >= {SYNC_GOAL:.2f}x its async twin's at c={top} (a thread hop per call)")
    for kind in kinds:
        for sync, twin in SYNC_TWINS.items():
            if results.get((kind, sync, top)) and results.get((kind, twin, top)):
                twin_rps = median_of(results[(kind, twin, top)], lambda r: r.rps)
                ratio = median_of(results[(kind, sync, top)], lambda r: r.rps) / twin_rps if twin_rps else 0.0
                print(f"  {kind:8}{sync:33} c={top:<3} {ratio:5.2f}x  {'ok' if ratio >= SYNC_GOAL else 'BELOW GOAL'}")
    print("Metrics: the async call with django_mcp.metrics installed against the same server without it "
          "(req/s ratio; server CPU per request, with minus without)")
    for kind in kinds:
        for conns in levels:
            for metered, twin in METRICS_TWINS.items():
                with_runs, without_runs = results.get((kind, metered, conns)), results.get((kind, twin, conns))
                if not with_runs or not without_runs:
                    continue
                without_rps = median_of(without_runs, lambda r: r.rps)
                ratio = median_of(with_runs, lambda r: r.rps) / without_rps if without_rps else 0.0
                extra = (median_of(with_runs, lambda r: r.cpu_us_per_request)
                         - median_of(without_runs, lambda r: r.cpu_us_per_request))
                print(f"  {kind:8}{metered:33} c={conns:<3} {ratio:5.2f}x req/s  {extra:+6.1f} us CPU/request")
    if peer_summary:
        print(f"Peer: django_mcp's legacy session / {SDK_LEGACY} (MCP SDK {sdk_version()}, its sync tool run "
              "in a worker thread by anyio.to_thread), req/s")
        for kind, mode, conns, versus in peer_summary:
            print(f"  {kind:8}{mode:33} c={conns:<3} {versus:5.2f}x")
    for (kind, mode, conns), runs in results.items():
        busy = median_of(runs, lambda r: r.busy)
        if mode == BASELINE and conns > 1 and busy < 0.85:
            print(f"  ! {kind} bare consumer at c={conns} used only {busy:.0%} of its core: something else (the "
                  "load generator, or another process) limited it, so the req/s ratio flatters django_mcp; "
                  "the CPU ratio does not")
        for r in runs:
            if r.bad or r.errors:
                print(f"  ! {kind} {mode} c={conns}: {r.bad} wrong answers, {r.errors} socket errors in a timed run")


def print_memory(growths: list[memory.Growth], garbage: list[memory.Garbage]) -> None:
    print("\nMemory: RSS growth of a fresh server process per idle item (VmRSS after gc.collect(), KiB); the "
          "'traced' rows count Python memory with tracemalloc instead (KiB)")
    header = f"{'server':8}{'what':52}{'N':>5}{'before':>10}{'after':>10}{'KiB each':>10}  goal"
    print(header + "\n" + "-" * len(header))
    for g in growths:
        goal = ""
        if g.goal_kib is not None:
            goal = f"<= {g.goal_kib:g} KiB {'ok' if g.per_item_kib <= g.goal_kib else 'OVER'}"
        print(f"{g.server:8}{g.what:52}{g.count:>5}{g.before_kib:>10,}{g.after_kib:>10,}"
              f"{g.per_item_kib:>10.1f}  {goal}")
    if garbage:
        print(f"\nReference-cycle garbage: objects gc.collect() frees per call ({memory.GARBAGE_CALLS} calls, "
              "collector paused)")
        for item in garbage:
            print(f"  {item.server:8}{item.what:42}{item.per_call:8.1f}")


def main() -> int:
    args = parse_args()
    setup_process()
    started = time.monotonic()
    kinds = ["daphne"] + (["uvicorn"] if have_uvicorn() else [])
    name, generate = generator(args)
    print(f"django_mcp benchmark: {args.repeat} repetition(s) x {args.duration:g} s per point, "
          f"concurrency {args.levels}")
    print(f"  cpus: {os.cpu_count()}; pinning: " + ("server CPU 0, load CPU 1 (taskset)" if can_pin()
                                                   else "none (taskset or a second CPU missing)"))
    print(f"  load generator: {name}" + ("" if loadgen.have_wrk() else " (wrk not installed; "
                                         "its own CPU cost may cap the fastest servers)"))
    print(f"  load average before: {os.getloadavg()[0]:.2f}" + (
        "  (other work is running on this machine: req/s will be noisy; CPU us/req is steadier)"
        if os.getloadavg()[0] > 1.0 else ""))
    print("  servers: daphne" + (", uvicorn" if have_uvicorn() else "; uvicorn not installed, skipped"))
    print("  peer: " + (f"MCP Python SDK {sdk_version()} (benchmarks/sdk_asgi.py), on uvicorn" if sdk_version() and
                        have_uvicorn() else "skipped (needs the mcp package and uvicorn)"))
    print("  versions: " + ", ".join(f"{dist} {_version(dist)}" for dist in
                                     ("django", "channels", "daphne", "uvicorn", "h11", "httptools", "uvloop",
                                      "mcp"))
          + f", python {sys.version.split()[0]}")

    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-bench-"))
    # django_mcp as a project installs it by default: without the optional metrics app (the
    # "metrics" modes add it on a server of their own), tasks app or views app (django_mcp.ui).
    django_env = bench_django_env(workdir)
    print(f"  migrating a fresh SQLite database: {django_env['MCP_TEST_SQLITE']}")
    migrate(django_env)
    # The baseline runs on its own minimal settings (see baseline_asgi.py); the first django_mcp
    # server started tells it which bytes to answer.
    baseline_env: dict = {"DJANGO_SETTINGS_MODULE": None}

    cold_results, sizes = {}, {}
    try:
        results = throughput(args, kinds, django_env, baseline_env, generate)
        if not args.no_cold:
            with contextlib.ExitStack() as stack:
                pg_env = stack.enter_context(pg.fresh_database()) if args.postgres else None
                cold_results, sizes = cold_run.run(args, kinds, django_env, pg_env)
        growths, garbage = ([], []) if args.no_memory else memory.run(kinds, args.idle, baseline_env,
                                                                      django_env, log=print)
    finally:
        stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    print_throughput(results, kinds, args.levels, args.repeat)
    if not args.no_cold:
        cold_run.print_table(cold_results, sizes, kinds, args.levels, args.repeat, args.postgres)
    if growths:
        print_memory(growths, garbage)
    print("\nListing cost (tools/list latency vs table size): skipped, not trivial here: it needs a "
          "site whose tool/resource table can be grown, which tests.asgi does not offer.")
    print(f"\ndone in {time.monotonic() - started:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
