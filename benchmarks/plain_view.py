"""
The plain Django view (``django_mcp.views.McpView``) under WSGI and under Django's own ASGI handler,
against the Channels endpoint and the MCP SDK's server, in one run (see benchmarks/README.md,
"Plain view (WSGI and Django's ASGI handler)").

    .venv/bin/python benchmarks/plain_view.py              # 3 interleaved repetitions, 5 s per point, ~8 min
    .venv/bin/python benchmarks/plain_view.py --quick      # 1 repetition, 2 s per point: a smoke run, ~1.5 min
    .venv/bin/python benchmarks/plain_view.py --quick --profile 5   # then where each server's time goes (py-spy)

Starts on 127.0.0.1 (free ports, loopback only), each server pinned to CPU 0, the load generator
(wrk) on CPU 1, all on one fresh SQLite database migrated as run.py's:

- the plain view under gunicorn, one sync worker, and under gunicorn, one gthread worker with
  ``servers.GTHREAD_THREADS`` threads (``plain_wsgi.py``: Django's WSGI handler);
- the plain view under uvicorn (httptools and uvloop when installed) running Django's own ASGI
  handler (``plain_asgi.py``: ``get_asgi_application()``, no Channels routing);
- the Channels endpoint (``tests.asgi``: ``django_mcp.asgi.application`` routes ``/mcp`` to the
  consumer before Django) on daphne and on uvicorn, as run.py serves it;
- the MCP SDK's server (``sdk_asgi.py``, run.py's peer) on uvicorn, which answers a 2026-07-28 call
  statelessly (one POST, no session) and a 2025-11-25 call in a session.

All django_mcp servers run ``tests.settings`` without the optional metrics, tasks and views apps (as
run.py's), so the same site and the same ``echo`` tool; the plain-view servers with the URLconf of
``plain_urls.py``: ``tests.urls`` (``McpView`` at ``/mcp``) and a floor view, a Django view that
answers the same bytes without MCP through the same middleware. Each django_mcp server is timed with
the 2026-07-28 stateless ``tools/call echo`` and the same call in a 2025-11-25 session (one session
per server, opened before timing), each response checked as run.py checks it, and the plain-view
servers with the floor; ``--async-tool`` adds the same two calls to ``echo_async`` (and to the SDK's
async twin, ``BENCH_ASYNC_TOOL=1``). Prints requests/second per endpoint, call and concurrency, the
ratios against the Channels endpoint on daphne and against the SDK server for the same call, and
each plain view against its floor. A measurement, not a test: it exits 0 once it has printed,
whatever the numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadgen, plain_profile, workload
from benchmarks.run import _version, bench_django_env, generator, median_of, setup_process, timed, timing_arguments
from benchmarks.servers import (GTHREAD_THREADS, GUNICORN_KINDS, LOAD_CPU, Server, can_pin, have_uvicorn, pinned,
                                sdk_peer, sdk_version, stop_all)
from tests.live import migrate

PLAIN_SYNC = "plain view, gunicorn sync"
PLAIN_GTHREAD = f"plain view, gunicorn gthread x{GTHREAD_THREADS}"
PLAIN_UVICORN = "plain view, uvicorn Django ASGI"
CHANNELS_DAPHNE = "Channels endpoint, daphne"
CHANNELS_UVICORN = "Channels endpoint, uvicorn"
SDK = "MCP SDK server, uvicorn"

MODERN = "2026-07-28 stateless"
LEGACY = "2025-11-25 session"
MODERN_ASYNC = "2026-07-28, async tool"
LEGACY_ASYNC = "2025-11-25, async tool"
# The same POST to a Django view that answers django_mcp's bytes without any MCP (plain_urls.py):
# what the project, its middleware and the server cost, on the plain-view servers.
FLOOR = "floor: Django view, no MCP"

# Ratios are taken against these, for the same call at the same concurrency.
REFERENCE = CHANNELS_DAPHNE


@dataclass
class Target:
    """One server under test and the calls it is timed with: {mode: Spec}."""

    name: str
    server: Server
    keep_alive: bool = True  # False: a gunicorn sync worker, which closes the connection after each answer
    floor: str | None = None  # the path of this server's floor view (plain_urls.py), if it has one
    specs: dict = field(default_factory=dict)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    timing_arguments(parser, ", which cannot drive gunicorn's sync worker")
    parser.add_argument("--async-tool", action="store_true",
                        help="also time the same calls to an async tool (echo_async; the SDK's async twin)")
    parser.add_argument("--no-middleware", action="store_true",
                        help="run the plain-view servers without the project's middleware (Django's handler alone)")
    parser.add_argument("--profile", type=float, default=0, metavar="S",
                        help="after timing, sample each django_mcp server with py-spy for S seconds at c=1 "
                             "(the 2026-07-28 call, and the floor view) and print where its time goes")
    args = parser.parse_args()
    args.duration = args.duration or (2.0 if args.quick else 5.0)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.levels = [int(c) for c in args.concurrency.split(",")]
    return args


# --- set-up: answers on fresh connections, for a server that closes each one -------------------

def send_once(port: int, spec: workload.Spec) -> workload.Response:
    """``spec`` on a connection of its own (a gunicorn sync worker answers one request per connection)."""
    client = workload.Client(port)
    try:
        return client.send(spec)
    finally:
        client.close()


def wait_answering(port: int, spec: workload.Spec, timeout: float = 60.0) -> str | None:
    """
    Send ``spec`` until the server answers it. A gunicorn master listens before its worker has
    loaded Django: the first connections wait in its backlog, or are reset by a worker that fails
    to boot. The last problem, or None once a right answer came.
    """
    deadline = time.monotonic() + timeout
    problem: str | None = "no answer"
    while time.monotonic() < deadline:
        try:
            problem = send_once(port, spec).problem(spec)
        except OSError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            return None
        time.sleep(0.2)
    return problem


def open_session(port: int) -> str:
    """A legacy session, initialized as ``workload.new_session`` does, each request on its own connection."""
    spec = workload.initialize()
    response = send_once(port, spec)
    session_id = response.headers.get("mcp-session-id")
    if response.problem(spec) or not session_id:
        raise RuntimeError(f"initialize failed: {response.problem(spec) or 'no Mcp-Session-Id'}")
    done = send_once(port, workload.initialized(session_id))
    if done.status != 202:
        raise RuntimeError(f"notifications/initialized got {done.status}")
    return session_id


def check(target: Target, spec: workload.Spec, times: int = 3) -> str | None:
    """As ``workload.check``: over one keep-alive connection, or each on its own for a sync worker."""
    if target.keep_alive:
        return workload.check(target.server.port, spec, times)
    for _ in range(times):
        try:
            problem = send_once(target.server.port, spec).problem(spec)
        except OSError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            return problem
    return None


def start_target(target: Target, async_tool: bool, sdk_async: Server | None = None) -> bool:
    """Start the server, open its session, check every call; False (and why, printed) if it is left out."""
    try:
        target.server.start()
    except (RuntimeError, OSError) as exc:
        print(f"  ! {target.name}: did not start, left out: {exc}")
        return False
    problem = wait_answering(target.server.port, workload.modern_call())
    if problem:
        print(f"  ! {target.name}: no right answer within 60 s, left out: {problem}\n{target.server.log_tail()}")
        target.server.stop()
        return False
    try:
        session_id = open_session(target.server.port)
    except (RuntimeError, OSError) as exc:
        print(f"  ! {target.name}: could not open a legacy session, its session call left out: {exc}")
        session_id = None
    candidates = {MODERN: (target.server, workload.modern_call())}
    if target.floor:
        candidates[FLOOR] = (target.server, dataclasses.replace(workload.modern_call(), path=target.floor))
    if session_id:
        candidates[LEGACY] = (target.server, workload.legacy_call(session_id, numbered=True))
    if async_tool and target.name != SDK:
        candidates[MODERN_ASYNC] = (target.server, workload.modern_call("echo_async"))
        if session_id:
            candidates[LEGACY_ASYNC] = (target.server, workload.legacy_call(session_id, numbered=True,
                                                                             tool="echo_async"))
    if sdk_async is not None:  # the SDK's async twin: its own process, its own session
        candidates[MODERN_ASYNC] = (sdk_async, workload.modern_call())
        try:
            candidates[LEGACY_ASYNC] = (sdk_async, workload.legacy_call(open_session(sdk_async.port), numbered=True))
        except (RuntimeError, OSError) as exc:
            print(f"  ! {target.name} {LEGACY_ASYNC}: could not open a session, left out: {exc}")
    for mode, (server, spec) in candidates.items():
        problem = check(target, spec) if server is target.server else workload.check(server.port, spec)
        if problem:
            print(f"  ! {target.name} {mode}: wrong answer before timing, left out: {problem}")
            continue
        target.specs[mode] = (server, spec)
    print(f"  started {target.name}: {target.server}" + (f", session {session_id[:12]}…" if session_id else "")
          + (f"; async twin {sdk_async}" if sdk_async else ""))
    return bool(target.specs)


def targets(args: argparse.Namespace, django_env: dict, use_wrk: bool) -> list[Target]:
    """The servers, started and checked, in table order."""
    planned: list[Target] = []
    plain_env = {**django_env, "DJANGO_SETTINGS_MODULE": "benchmarks.plain_settings"}
    if args.no_middleware:
        plain_env["BENCH_PLAIN_MIDDLEWARE"] = "none"
    if use_wrk:
        planned.append(Target(PLAIN_SYNC, Server("gunicorn-sync", "benchmarks.plain_wsgi:application", "plain-sync",
                                                 plain_env), keep_alive=False, floor="/floor"))
    else:
        print(f"  ! {PLAIN_SYNC}: left out: the stdlib load generator does not reconnect after "
              "'Connection: close', which a sync worker sends after every answer (install wrk)")
    planned.append(Target(PLAIN_GTHREAD, Server("gunicorn-gthread", "benchmarks.plain_wsgi:application",
                                                "plain-gthread", plain_env), floor="/floor"))
    if have_uvicorn():
        planned.append(Target(PLAIN_UVICORN, Server("uvicorn", "benchmarks.plain_asgi:application", "plain-asgi",
                                                    plain_env), floor="/floor-async"))
    planned.append(Target(CHANNELS_DAPHNE, Server("daphne", "tests.asgi:application", "channels", django_env)))
    if have_uvicorn():
        planned.append(Target(CHANNELS_UVICORN, Server("uvicorn", "tests.asgi:application", "channels", django_env)))
    started = []
    for target in planned:
        if start_target(target, args.async_tool):
            started.append(target)
    if have_uvicorn() and sdk_version():
        twin = None
        if args.async_tool:
            try:
                twin = sdk_peer(env={"BENCH_ASYNC_TOOL": "1"}, label="sdk-async").start()
            except (RuntimeError, OSError) as exc:
                print(f"  ! {SDK} async twin: did not start, left out: {exc}")
        target = Target(SDK, sdk_peer())
        if start_target(target, args.async_tool, twin):
            started.append(target)
    else:
        print(f"  ! {SDK}: left out (needs the mcp package and uvicorn)")
    return started


# --- timing -------------------------------------------------------------------------------------

def measure(args: argparse.Namespace, started: list[Target], generate) -> dict:
    """{(target name, mode, c): [Result, ...]}, interleaved as run.py does."""
    points = [(target, mode, server, spec) for target in started for mode, (server, spec) in target.specs.items()]
    results: dict = {(target.name, mode, c): [] for target, mode, _, _ in points for c in args.levels}
    warm = min(1.0, args.duration / 2)
    for target, mode, server, spec in points:  # warm-up (discarded), at the highest concurrency
        try:
            generate(spec, server.port, max(args.levels), warm)
        except RuntimeError as exc:
            print(f"  ! warm-up of {target.name} {mode} failed: {exc}")
    for rep in range(1, args.repeat + 1):
        for conns in args.levels:
            for target, mode, server, spec in points:
                try:
                    r = timed(generate, server, spec, conns, args.duration)
                except (RuntimeError, OSError) as exc:  # wrk failed, or the server died: a hole, not a crash
                    print(f"  ! rep {rep} c={conns} {target.name} {mode}: not measured: {exc}")
                    continue
                results[(target.name, mode, conns)].append(r)
                print(f"  rep {rep}/{args.repeat} c={conns:<3} {target.name:32} {mode:23} {r.rps:8,.0f} rps  "
                      f"p50 {r.p50_ms:6.2f} p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_request:5.0f} us/req "
                      f"{r.busy:4.0%} busy" + (f"  bad {r.bad} errors {r.errors}" if r.bad or r.errors else ""))
    return results


def profile_all(args: argparse.Namespace, started: list[Target], generate) -> list:
    """[(target name, mode, Profile or the reason it is missing)], the 2026-07-28 call and the floor, at c=1."""
    why = plain_profile.can_trace()
    if why:
        return [("(all)", "", why)]
    profiles = []
    rate = 500
    seconds = max(1, round(args.profile))  # py-spy samples whole seconds
    for target in started:
        if target.name == SDK:
            continue
        for mode in (MODERN, FLOOR):
            if mode not in target.specs:
                continue
            server, spec = target.specs[mode]

            def drive(duration: float, server=server, spec=spec) -> loadgen.Result:
                return timed(generate, server, spec, 1, duration)

            try:
                parts, load = plain_profile.record(plain_profile.profiled_pid(server), seconds, rate,
                                                   pinned([], LOAD_CPU), drive)
            except (RuntimeError, OSError) as exc:
                profiles.append((target.name, mode, str(exc)))
                continue
            # The requests served while py-spy sampled: the load's rate over the sampled seconds.
            profiles.append((target.name, mode, plain_profile.Profile(
                parts, rate, seconds, load.rps * seconds, load.cpu_us_per_request)))
            print(f"  profiled {target.name} {mode}: {load.rps:,.0f} rps under py-spy")
    return profiles


def print_profiles(profiles: list, seconds: float) -> None:
    print(f"\nWhere the time goes (py-spy --gil, {seconds:g} s at c=1 per row; us of GIL-held time per request "
          "charged to the innermost frame of a part, see plain_profile.py; 'outside the GIL' is the server's "
          "CPU per request (/proc) minus the samples: system calls, thread switches, C code)")
    for name, mode, profile in profiles:
        if isinstance(profile, str):
            print(f"  {name} {mode}: not profiled: {profile}")
            continue
        outside = profile.cpu_us_per_request - profile.gil_us_per_request
        print(f"  {name}, {mode}: CPU {profile.cpu_us_per_request:,.0f} us/req, GIL-held "
              f"{profile.gil_us_per_request:,.0f}, outside the GIL {outside:,.0f}")
        for part, _ in profile.parts.most_common():
            us = profile.us_per_request(part)
            if us >= 5:
                print(f"      {us:6,.0f} us  {part}")


def rps(results: dict, name: str, mode: str, conns: int) -> float | None:
    runs = results.get((name, mode, conns))
    return median_of(runs, lambda r: r.rps) if runs else None


def print_table(results: dict, started: list[Target], levels: list[int], repeat: int) -> None:
    modes = [m for m in (MODERN, LEGACY, MODERN_ASYNC, LEGACY_ASYNC, FLOOR) if any(m in t.specs for t in started)]
    print(f"\nThroughput, tools/call echo (median of {repeat}; 'vs daphne': req/s / the Channels endpoint's on "
          f"daphne, same call and c; 'vs SDK': req/s / the MCP SDK server's, same call and c)")
    header = (f"{'endpoint':33}{'call':24}{'c':>4}{'req/s':>9}{'spread':>8}{'p50 ms':>8}{'p99 ms':>8}"
              f"{'CPU us/req':>11}{'busy':>6}{'vs daphne':>10}{'vs SDK':>8}")
    print(header + "\n" + "-" * len(header))
    for mode in modes:
        for conns in levels:
            # The floor answers without MCP: no ratio against an MCP server.
            reference, peer = ((None, None) if mode == FLOOR else
                               (rps(results, REFERENCE, mode, conns), rps(results, SDK, mode, conns)))
            for target in started:
                runs = results.get((target.name, mode, conns))
                if not runs:
                    continue
                rate = median_of(runs, lambda r: r.rps)
                spread = ((max(r.rps for r in runs) - min(r.rps for r in runs)) / 2 / rate
                          if rate and len(runs) > 1 else 0)
                versus = "".join(f"{(rate / base if base else 0):>{width}.2f}x" if base else f"{'-':>{width + 1}}"
                                 for base, width in ((reference, 9), (peer, 7)))
                print(f"{target.name:33}{mode:24}{conns:>4}{rate:>9,.0f}"
                      f"{'±' + format(spread, '.0%') if spread else '':>8}"
                      f"{median_of(runs, lambda r: r.p50_ms):>8.2f}{median_of(runs, lambda r: r.p99_ms):>8.1f}"
                      f"{median_of(runs, lambda r: r.cpu_us_per_request):>11.0f}"
                      f"{median_of(runs, lambda r: r.busy):>6.0%}{versus}")
        print()
    floors = [t for t in started if FLOOR in t.specs and MODERN in t.specs]
    if floors:
        print("Against the floor: the 2026-07-28 call through the plain view against the floor view (same server, "
              "same middleware, no MCP): req/s ratio, and server CPU per request, view minus floor (what "
              "django_mcp adds on this server)")
        for target in floors:
            for conns in levels:
                view, floor = results.get((target.name, MODERN, conns)), results.get((target.name, FLOOR, conns))
                if not view or not floor:
                    continue
                floor_rps = median_of(floor, lambda r: r.rps)
                ratio = median_of(view, lambda r: r.rps) / floor_rps if floor_rps else 0.0
                floor_cpu = median_of(floor, lambda r: r.cpu_us_per_request)
                view_cpu = median_of(view, lambda r: r.cpu_us_per_request)
                print(f"  {target.name:33} c={conns:<3} {ratio:5.2f}x the floor's req/s; "
                      f"CPU {view_cpu:5.0f} - {floor_cpu:5.0f} = {view_cpu - floor_cpu:+5.0f} us/req")
    low, high = min(levels), max(levels)
    if high > low:
        print(f"Concurrency: req/s and p50 at c={high} against c={low}, per endpoint and call")
        for target in started:
            for mode in target.specs:
                a, b = results.get((target.name, mode, low)), results.get((target.name, mode, high))
                if not a or not b:
                    continue
                ra, rb = median_of(a, lambda r: r.rps), median_of(b, lambda r: r.rps)
                pa, pb = median_of(a, lambda r: r.p50_ms), median_of(b, lambda r: r.p50_ms)
                note = ""
                if target.name == PLAIN_SYNC:
                    note = (f"  (one request at a time: the other {high - 1} connections wait in the listen "
                            "backlog, and each answer closes its connection)")
                print(f"  {target.name:33}{mode:24} req/s x{(rb / ra if ra else 0):4.2f}  "
                      f"p50 {pa:6.2f} -> {pb:6.2f} ms{note}")
    for (name, mode, conns), runs in results.items():
        for r in runs:
            if r.bad or r.errors:
                print(f"  ! {name} {mode} c={conns}: {r.bad} wrong answers, {r.errors} socket errors in a timed run")


def main() -> int:
    args = parse_args()
    setup_process()
    started_at = time.monotonic()
    use_wrk = args.loadgen == "wrk" or (args.loadgen == "auto" and loadgen.have_wrk())
    name, generate = generator(args)
    print(f"plain view benchmark: {args.repeat} repetition(s) x {args.duration:g} s per point, "
          f"concurrency {args.levels}")
    print(f"  cpus: {os.cpu_count()}; pinning: " + ("server CPU 0 (gunicorn's master and worker), load CPU 1 "
                                                   "(taskset)" if can_pin() else "none (taskset or a second CPU "
                                                                                 "missing)"))
    print(f"  load generator: {name}")
    print(f"  load average before: {os.getloadavg()[0]:.2f}" + (
        "  (other work is running on this machine: req/s will be noisy; CPU us/req is steadier)"
        if os.getloadavg()[0] > 1.0 else ""))
    print(f"  gunicorn: one worker, sync or gthread with {GTHREAD_THREADS} threads (worker classes "
          f"{', '.join(GUNICORN_KINDS.values())})")
    print("  plain-view servers: benchmarks.plain_settings (tests.settings, URLconf benchmarks.plain_urls), "
          + ("WITHOUT the project's middleware (--no-middleware)" if args.no_middleware else
             "with the project's middleware (sessions, common, CSRF, authentication, messages)"))
    print("  versions: " + ", ".join(f"{dist} {_version(dist)}" for dist in
                                     ("django", "channels", "daphne", "gunicorn", "uvicorn", "httptools", "uvloop",
                                      "mcp"))
          + f", python {sys.version.split()[0]}")

    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-bench-"))
    django_env = bench_django_env(workdir)  # as run.py's django_mcp servers
    print(f"  migrating a fresh SQLite database: {django_env['MCP_TEST_SQLITE']}")
    migrate(django_env)
    results: dict = {}
    started: list[Target] = []
    profiles: list = []
    try:
        started = targets(args, django_env, use_wrk)
        results = measure(args, started, generate)
        profiles = profile_all(args, started, generate) if args.profile else []
    finally:
        stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    print_table(results, started, args.levels, args.repeat)
    if args.profile:
        print_profiles(profiles, args.profile)
    print(f"\ndone in {time.monotonic() - started_at:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
