"""
What the tool admin costs a call: django_mcp with it off, on, and on with a rate limit, in one run
(see benchmarks/README.md, "Tool admin cost").

    .venv/bin/python benchmarks/tool_admin.py --quick   # 1 repetition, 2 s per point, ~2 min
    .venv/bin/python benchmarks/tool_admin.py           # 3 interleaved repetitions, 5 s per point, ~6 min

For each ASGI server (daphne; uvicorn, with uvloop and httptools when installed), five processes
of the test app (``tests.asgi:application``) pinned to CPU 0, driven from CPU 1 by wrk (or the
stdlib generator) exactly as ``run.py`` drives them:

- core: ``django_mcp.tool_admin``, ``django_mcp.call_log`` and ``django_mcp.query_tools`` not in
  ``INSTALLED_APPS`` (``MCP_TEST_WITHOUT_TOOL_ADMIN=1``): no hook asked, no observer, the tool run
  directly;
- baseline: the apps installed, the tool admin off (no ``MCP_TEST_TOOL_ADMIN``);
- A0: ``MCP_TEST_TOOL_ADMIN=1`` with ``MCP_TEST_CALL_LOG=0``: the tool admin without its call log, so
  that A - A0 is what the call log alone costs a call;
- A: ``MCP_TEST_TOOL_ADMIN=1``: the per-worker snapshot of the ``McpTool`` rows consulted on every
  call and listing, and the call log (``McpToolCall``), written in batches by a background task;
  ``echo_async``'s row has no restriction;
- B: A with a rate limit on ``echo_async`` that never trips (``--rate``, default 1000000/min), set
  in the database before the server starts, so every call also counts itself in Django's cache.

The request: the 2026-07-28 stateless ``tools/call`` of ``echo_async`` (``workload.modern_call``),
at each concurrency, and a ``tools/list`` in the same envelope at concurrency 1 (baseline and A).
Prints req/s, median and p99 latency and server CPU per request per variant, and A/baseline and
B/baseline. Then checks that A's call log lost nothing: the rows written against the calls
answered; and runs A once more on an expired snapshot of the tool rows (``--no-expiry`` skips
the 30 s wait this needs). A measurement, not a test: it exits 0 once it has printed, whatever
the numbers.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadgen, tool_admin_drain, workload
from benchmarks.run import _version, generator, median_of, setup_process, timed
from benchmarks.servers import LOAD_CPU, Server, can_pin, have_uvicorn, pinned, stop_all
from django_mcp.conf import DEFAULTS
from django_mcp.call_log.log import BATCH_SIZE, FLUSH_SECONDS
from tests.live import ROOT, migrate, server_env

TOOL = "echo_async"
CORE = "core: apps not installed"
BASELINE = "baseline: tool admin off"
NOLOG = "A0: tool admin, log off"
ADMIN = "A: tool admin + call log"
LIMITED = "B: A + rate limit"
VARIANTS = (CORE, BASELINE, NOLOG, ADMIN, LIMITED)
CALL, LIST = "tools/call", "tools/list"
# The request kinds, and the variants each is measured on: a listing never meets a rate limit.
REQUESTS = {CALL: VARIANTS, LIST: (CORE, BASELINE, ADMIN)}
# How old a worker's snapshot of the tool rows may grow (tests/settings.py keeps the default).
SNAPSHOT_SECONDS = DEFAULTS["TOOL_POLICY_CACHE_SECONDS"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 repetition, 2 s per point (smoke run)")
    parser.add_argument("--duration", type=float, help="seconds per measured point (default 5, quick 2)")
    parser.add_argument("--repeat", type=int, help="interleaved repetitions, median reported (default 3, quick 1)")
    parser.add_argument("--concurrency", default="1,32", help="tools/call connection counts (default 1,32)")
    parser.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto",
                        help="load generator (auto: wrk if installed, else the stdlib one)")
    parser.add_argument("--rate", default="1000000/min", help="variant B's rate limit on echo_async (never reached)")
    parser.add_argument("--no-expiry", action="store_true",
                        help=f"skip the run on an expired snapshot (it waits {SNAPSHOT_SECONDS:g} s for it)")
    args = parser.parse_args()
    args.duration = args.duration or (2.0 if args.quick else 5.0)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.levels = [int(c) for c in args.concurrency.split(",")]
    return args


# --- requests ------------------------------------------------------------------------------------

def call_spec() -> workload.Spec:
    """The measured call: run.py's ``django_mcp 2026-07-28, async tool`` request."""
    return workload.modern_call(TOOL)


def list_spec() -> workload.Spec:
    """tools/list in the same 2026-07-28 stateless envelope as ``workload.modern_call``, without ``Mcp-Name``."""
    call = json.loads(call_spec().body)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": call["params"]["_meta"]}}
    headers = {**call_spec().headers, "Mcp-Method": "tools/list"}
    headers.pop("Mcp-Name")
    # The whole listing (35 tools, about 8 KiB) is one page: echo_async must be on it.
    return workload.Spec("POST", "/mcp", headers, json.dumps(body, separators=(",", ":")),
                         expect=['"tools":[', f'"name":"{TOOL}"'])


# --- databases -----------------------------------------------------------------------------------

def variant_env(variant: str, databases: dict[tuple[str, str], Path], kind: str) -> dict[str, str | None]:
    """The server's environment overrides. Baseline and A share A's file: the baseline writes no row."""
    db = databases[("B", kind)] if variant == LIMITED else databases[("A", kind)]
    return {"MCP_TEST_SQLITE": str(db), "MCP_TEST_DATABASE": None,
            "MCP_TEST_TOOL_ADMIN": None if variant in (CORE, BASELINE) else "1",
            "MCP_TEST_CALL_LOG": "0" if variant == NOLOG else None,
            # The feature apps left out of INSTALLED_APPS (tests/settings.py): no hook, no observer.
            "MCP_TEST_WITHOUT_TOOL_ADMIN": "1" if variant == CORE else None}


def django_command(env: dict, *command: str) -> str:
    """``python -m django COMMAND`` with a server's environment; its output, or RuntimeError."""
    out = subprocess.run([sys.executable, "-m", "django", *command], cwd=ROOT, env=server_env(env),
                         capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"manage.py {command[0]} failed ({out.returncode}): {out.stdout[-2000:]}{out.stderr[-2000:]}")
    return out.stdout


SET_RATE = """
from django_mcp.sites import get_default_site
from django_mcp.tool_admin.models import McpTool
from django_mcp.tool_admin.policies import site_name_of
rows = McpTool.objects.filter(site=site_name_of(get_default_site()), name={tool!r})
print(rows.update(rate_limit={rate!r}), *rows.values_list("site", "name", "rate_limit", "enabled").get())
"""


def set_rate_limit(env: dict, rate: str) -> str:
    """Make the tool rows as an operator would (``mcp_sync_tools``), then give echo_async its limit."""
    synced = django_command(env, "mcp_sync_tools").strip()
    # The last line: Django 5.2's shell may print a line about its automatic imports first.
    updated = django_command(env, "shell", "-c", SET_RATE.format(tool=TOOL, rate=rate)).strip().splitlines()[-1].split()
    if not updated or updated[0] != "1":
        raise RuntimeError(f"the row of {TOOL} was not updated: {updated}")
    return f"{synced} Row {' '.join(updated[1:])}"


def count(db: Path, sql: str) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as conn:
        return conn.execute(sql).fetchone()[0]


def call_rows(db: Path) -> int:
    return count(db, "SELECT count(*) FROM django_mcp_mcptoolcall")


def settled_rows(db: Path, timeout: float = 30.0) -> int:
    """
    The call-log rows once the server's background task has written what it queued. It writes every
    FLUSH_SECONDS (or at BATCH_SIZE entries), so a count that stays put for four periods is final.
    """
    quiet = 4 * FLUSH_SECONDS
    last, since = call_rows(db), time.monotonic()
    deadline = since + timeout
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(FLUSH_SECONDS / 2)
        rows = call_rows(db)
        if rows != last:
            last, since = rows, time.monotonic()
    return last


# --- the run -------------------------------------------------------------------------------------

@dataclass
class Ledger:
    """What variant A's server answered to tools/call, as the load generators counted it."""

    answered: int = 0  # successful answers counted (checks, warm-up, timed windows)
    in_flight: int = 0  # at most this many more ran: one per connection when a generator stopped
    runs: int = 0  # load-generator runs, the warm-up included


@dataclass
class Check:
    """The exact call-log check on one A server."""

    kind: str
    before: Ledger
    rows_before: int
    conns: int
    window: int  # good answers in the timed window
    late: int  # good answers after it (the requests in flight at the deadline)
    bad: int
    errors: int
    rows: int  # call-log rows written during the check
    warnings: list[str]


def start_servers(kinds: list[str], databases: dict, ledgers: dict) -> dict:
    """Start every variant on every server kind; return {(kind, request, variant): (server, spec)}."""
    points = {}
    specs = {CALL: call_spec(), LIST: list_spec()}
    for kind in kinds:
        for variant in VARIANTS:
            label = {CORE: "core", BASELINE: "base", NOLOG: "nolog", ADMIN: "admin", LIMITED: "limited"}[variant]
            try:
                server = Server(kind, "tests.asgi:application", f"tooladmin-{label}",
                                variant_env(variant, databases, kind)).start()
            except RuntimeError as exc:
                print(f"  ! {variant} on {kind}: did not start, left out: {exc}")
                continue
            for request, variants in REQUESTS.items():
                if variant not in variants:
                    continue
                # The first request of an A or B server also reads (and syncs) its tool rows.
                problem = workload.check(server.port, specs[request])
                if problem:
                    print(f"  ! {variant} {request} on {kind}: wrong answer before timing, left out: {problem}")
                    continue
                if variant == ADMIN and request == CALL:
                    ledgers[kind].answered += 3  # workload.check's three calls, all good
                points[(kind, request, variant)] = (server, specs[request])
            print(f"  started {server}: {variant}")
    return points


def measure(args, points: dict, generate, ledgers: dict) -> dict:
    """Warm-up, then ``--repeat`` interleaved rounds; return {(kind, request, variant, c): [Result]}."""
    levels = {CALL: args.levels, LIST: [1]}
    order = [(request, conns, kind, variant) for request in REQUESTS for conns in levels[request]
             for (kind, req, variant) in points if req == request]
    results: dict = {(kind, request, variant, conns): [] for request, conns, kind, variant in order}

    def note(kind: str, request: str, variant: str, conns: int, result: loadgen.Result) -> None:
        if variant == ADMIN and request == CALL:
            ledger = ledgers[kind]
            ledger.answered += result.requests
            ledger.in_flight += conns
            ledger.runs += 1

    warm = min(1.0, args.duration / 2)  # discarded: lazy imports, the first snapshot, DB connections
    for (kind, request, variant), (server, spec) in points.items():
        conns = max(levels[request])
        note(kind, request, variant, conns, generate(spec, server.port, conns, warm))
    # Interleaved: each repetition visits every point once, so drift (thermal, noisy neighbours)
    # spreads over all variants instead of biasing whichever ran last.
    for rep in range(1, args.repeat + 1):
        for request, conns, kind, variant in order:
            server, spec = points[(kind, request, variant)]
            # A round lasts longer than a snapshot of the tool rows: without this one untimed request,
            # every timed run of A and B would start with an expired snapshot, which all requests
            # in flight then read again at once (see expiry()). One request reads it alone.
            if not workload.check(server.port, spec, times=1) and variant == ADMIN and request == CALL:
                ledgers[kind].answered += 1
            r = timed(generate, server, spec, conns, args.duration)
            note(kind, request, variant, conns, r)
            results[(kind, request, variant, conns)].append(r)
            print(f"  rep {rep}/{args.repeat} {kind:7} {request} c={conns:<3} {variant:25} {r.rps:8,.0f} rps  "
                  f"p50 {r.p50_ms:6.2f} ms  p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_request:5.0f} us/req "
                  f"{r.busy:4.0%} busy" + (f"  bad {r.bad} errors {r.errors}" if r.bad or r.errors else ""))
    return results


def check_call_log(args, points: dict, databases: dict, ledgers: dict) -> list[Check]:
    """
    On each A server, a last load run whose every answer is read (``tool_admin_drain``), so the
    calls answered are known exactly, between two settled counts of the call-log rows.
    """
    checks = []
    conns = max(args.levels)
    for kind, ledger in ledgers.items():
        if (kind, CALL, ADMIN) not in points:
            continue
        server, spec = points[(kind, CALL, ADMIN)]
        db = databases[("A", kind)]
        before = settled_rows(db)
        result, late_good, late_bad = tool_admin_drain.run(pinned([], LOAD_CPU), spec, server.port, conns,
                                                           args.duration)
        rows = settled_rows(db) - before
        log = Path(server.log_path).read_text(errors="replace") if server.log_path else ""
        warnings = [line for line in log.splitlines() if "call-log" in line or "Could not record" in line]
        checks.append(Check(kind, Ledger(**vars(ledger)), before, conns, result.requests, late_good,
                            result.bad + late_bad, result.errors, rows, warnings))
    return checks


def expiry(args, points: dict, generate, log=print) -> dict:
    """
    Each A server once more at the highest concurrency, its snapshot of the tool rows older than
    ``SNAPSHOT_SECONDS``: what a worker under load goes through every ``TOOL_POLICY_CACHE_SECONDS``.
    Returns {kind: Result}.
    """
    conns = max(args.levels)
    # The snapshots were read at or before the last request to an A server (the call-log check).
    log(f"  waiting {SNAPSHOT_SECONDS + 1:g} s for the A servers' snapshots of the tool rows to expire")
    time.sleep(SNAPSHOT_SECONDS + 1)
    results = {}
    for (kind, request, variant), (server, spec) in points.items():
        if request == CALL and variant == ADMIN:
            results[kind] = r = timed(generate, server, spec, conns, args.duration)
            log(f"  expired snapshot {kind:7} c={conns:<3} {r.rps:8,.0f} rps  p50 {r.p50_ms:6.2f} ms  "
                f"p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_request:5.0f} us/req")
    return results


# --- output --------------------------------------------------------------------------------------

def paired(runs: list[loadgen.Result], base: list[loadgen.Result]) -> tuple[float, float, float]:
    """
    (req/s ratio, CPU ratio, extra CPU us/req) against the baseline, each the median over the rounds
    of that round's figure. A variant and its baseline run seconds apart in a round, so another
    process's burst of work on the machine tends to hit both; across rounds it need not.
    """
    return (statistics.median(r.rps / b.rps if b.rps else 0.0 for r, b in zip(runs, base)),
            statistics.median(b.cpu_us_per_request / r.cpu_us_per_request if r.cpu_us_per_request else 0.0
                              for r, b in zip(runs, base)),
            statistics.median(r.cpu_us_per_request - b.cpu_us_per_request for r, b in zip(runs, base)))


def print_table(results: dict, kinds: list[str], levels: list[int], repeat: int) -> list[str]:
    """The table; returns the summary lines (ratios against the baseline)."""
    print(f"\nTool admin cost (median of {repeat}; against the baseline on the same server, request and c, each the "
          "median of the rounds' own figures: ratio req/s = variant / baseline, ratio CPU = baseline CPU us/req / "
          "variant's, +us/req = variant's CPU us/req - baseline's)")
    header = (f"{'server':8}{'request':11}{'c':>4}  {'variant':26}{'req/s':>9}{'spread':>8}{'p50 ms':>8}"
              f"{'p99 ms':>8}{'CPU us/req':>11}{'busy':>6}{'ratio req/s':>13}{'ratio CPU':>11}{'+us/req':>9}")
    print(header + "\n" + "-" * len(header))
    summary = []
    for kind in kinds:
        for request, variants in REQUESTS.items():
            for conns in (levels if request == CALL else [1]):
                base = results.get((kind, request, BASELINE, conns))
                ratios = []
                for variant in variants:
                    runs = results.get((kind, request, variant, conns))
                    if not runs:
                        print(f"{kind:8}{request:11}{conns:>4}  {variant:26}{'n/a':>9}")
                        continue
                    rps = median_of(runs, lambda r: r.rps)
                    cpu = median_of(runs, lambda r: r.cpu_us_per_request)
                    spread = (max(r.rps for r in runs) - min(r.rps for r in runs)) / 2 / rps if rps and len(runs) > 1 else 0
                    compared = ""
                    if variant != BASELINE and base:
                        ratio, cpu_ratio, extra = paired(runs, base)
                        compared = f"{ratio:>12.3f}x{cpu_ratio:>10.3f}x{extra:>+9.0f}"
                        name = variant.split(":")[0]
                        ratios.append(f"{name}/baseline {ratio:.3f}x (CPU {cpu_ratio:.3f}x, {extra:+.0f} us)")
                    print(f"{kind:8}{request:11}{conns:>4}  {variant:26}{rps:>9,.0f}"
                          f"{'±' + format(spread, '.0%') if spread else '':>8}{median_of(runs, lambda r: r.p50_ms):>8.2f}"
                          f"{median_of(runs, lambda r: r.p99_ms):>8.1f}{cpu:>11.0f}{median_of(runs, lambda r: r.busy):>6.0%}"
                          f"{compared}")
                if ratios:
                    summary.append(f"  {kind:8}{request} c={conns:<3} " + "   ".join(ratios))
    return summary


def print_log_alone(results: dict, kinds: list[str], levels: list[int]) -> None:
    """A against A0, round by round: what writing the call log adds to a call, and nothing else."""
    print("\nThe call log alone: A against A0 (the same tool admin without its log), paired per round")
    for kind in kinds:
        for conns in levels:
            logged, unlogged = results.get((kind, CALL, ADMIN, conns)), results.get((kind, CALL, NOLOG, conns))
            if not logged or not unlogged:
                continue
            ratio, cpu_ratio, extra = paired(logged, unlogged)
            rounds = [r.rps / b.rps for r, b in zip(logged, unlogged) if b.rps]
            print(f"  {kind:8}tools/call c={conns:<3} A/A0 {ratio:.3f}x (CPU {cpu_ratio:.3f}x, {extra:+.0f} us/req); "
                  f"the rounds' A/A0: {min(rounds):.3f}x to {max(rounds):.3f}x")


def print_expiry(expired: dict, results: dict, levels: list[int]) -> None:
    conns = max(levels)
    print(f"\nSnapshot expiry under load: A at c={conns}, its snapshot of the tool rows older than "
          f"{SNAPSHOT_SECONDS:g} s (the timed runs above each began with a fresh one)")
    for kind, r in expired.items():
        fresh = results.get((kind, CALL, ADMIN, conns)) or []
        base = results.get((kind, CALL, BASELINE, conns)) or []
        compared = "" if not fresh or not base else (
            f"; timed runs: A p99 {median_of(fresh, lambda x: x.p99_ms):.1f} ms, "
            f"{median_of(fresh, lambda x: x.cpu_us_per_request):.0f} us/req; "
            f"baseline p99 {median_of(base, lambda x: x.p99_ms):.1f} ms")
        print(f"  {kind:8}{r.rps:8,.0f} req/s  p50 {r.p50_ms:.2f} ms  p99 {r.p99_ms:.1f} ms  "
              f"{r.cpu_us_per_request:.0f} us/req{compared}")


def print_checks(checks: list[Check]) -> None:
    print(f"\nCall log of variant A (McpToolCall rows, written in batches: every {FLUSH_SECONDS:g} s or "
          f"{BATCH_SIZE} entries)")
    if not checks:
        print("  no A server ran tools/call: nothing to check")
    for c in checks:
        b = c.before
        extra = c.rows_before - b.answered
        consistent = 0 <= extra <= b.in_flight
        print(f"  {c.kind}: timed part: {c.rows_before:,} rows for {b.answered:,} successful calls counted (checks, "
              f"warm-up and {b.runs - 1} timed runs); {extra:+,} rows: requests still in flight when a run stopped, "
              f"which the server ran and logged but the load generator no longer read (at most "
              f"{b.in_flight:,}: {'consistent' if consistent else 'INCONSISTENT'})")
        answered = c.window + c.late
        verdict = "equal: the log lost nothing" if c.rows == answered and not c.bad and not c.errors else "NOT EQUAL"
        print(f"  {c.kind}: exact check, c={c.conns}, every answer read: {answered:,} successful calls answered "
              f"({c.window:,} in the window + {c.late} after it), {c.rows:,} rows written: {verdict}"
              + (f"; {c.bad} wrong answers, {c.errors} socket errors" if c.bad or c.errors else ""))
        for line in c.warnings[:5]:
            print(f"    server log: {line}")
    print("  SQLite: the call log's batches are the only writes to the database file here (one server "
          "process, nothing else writing), so they compete with no other writer for its lock. With "
          "several workers sharing a database, or an application that writes too, they would.")


def main() -> int:
    args = parse_args()
    started = time.monotonic()
    kinds = ["daphne"] + (["uvicorn"] if have_uvicorn() else [])
    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-tooladmin-"))
    databases = {(letter, kind): workdir / f"{letter}-{kind}.sqlite3" for letter in "AB" for kind in kinds}
    # One rate-limited database serves every B server: the limit's counters live in each process's cache.
    for kind in kinds[1:]:
        databases[("B", kind)] = databases[("B", kinds[0])]
    try:
        print(f"django_mcp tool admin benchmark: {args.repeat} repetition(s) x {args.duration:g} s per point, "
              f"tools/call {TOOL} at c={args.levels}, tools/list at c=1")
        # Before setup_process() pins this process (and so its children) to the load core: the
        # migrations run side by side on both cores.
        print(f"  migrating {len(set(databases.values()))} fresh SQLite databases in {workdir}")
        fresh = {db: variant_env(LIMITED if letter == "B" else ADMIN, databases, kind)
                 for (letter, kind), db in databases.items()}
        with concurrent.futures.ThreadPoolExecutor() as pool:
            list(pool.map(migrate, fresh.values()))
        b_env = variant_env(LIMITED, databases, kinds[0])
        print(f"  variant B's database: {set_rate_limit(b_env, args.rate)}")
        setup_process()
        name, generate = generator(args)
        print(f"  cpus: {os.cpu_count()}; pinning: " + ("server CPU 0, load CPU 1 (taskset)" if can_pin()
                                                       else "none (taskset or a second CPU missing)"))
        print(f"  load generator: {name}")
        print(f"  load average before: {os.getloadavg()[0]:.2f}" + (
            "  (other work is running on this machine: req/s will be noisy; CPU us/req is steadier)"
            if os.getloadavg()[0] > 1.0 else ""))
        print("  servers: daphne" + (", uvicorn" if have_uvicorn() else "; uvicorn not installed, skipped"))
        print("  versions: " + ", ".join(f"{dist} {_version(dist)}" for dist in
                                         ("django", "channels", "daphne", "uvicorn", "httptools", "uvloop"))
              + f", python {sys.version.split()[0]}")
        ledgers = {kind: Ledger() for kind in kinds}
        points = start_servers(kinds, databases, ledgers)
        for kind in kinds:
            tools = count(databases[("A", kind)], "SELECT count(*) FROM django_mcp_mcptool")
            print(f"  {kind} A: {tools} tool rows (made by migrate's post_migrate, synced again by the first request)")
        results = measure(args, points, generate, ledgers)
        checks = check_call_log(args, points, databases, ledgers)
        expired = {} if args.no_expiry else expiry(args, points, generate)
    finally:
        stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    summary = print_table(results, kinds, args.levels, args.repeat)
    print("\nRatios against the baseline (req/s; CPU: baseline's CPU us/req / variant's, and the difference)")
    print("\n".join(summary))
    print_log_alone(results, kinds, args.levels)
    for (kind, request, variant, conns), runs in results.items():
        busy = median_of(runs, lambda r: r.busy)
        if variant == BASELINE and conns > 1 and busy < 0.85:
            print(f"  ! {kind} baseline at c={conns} used only {busy:.0%} of its core: something else limited it, "
                  "so the req/s ratios flatter the variants; the CPU ratios do not")
        for r in runs:
            if r.bad or r.errors:
                print(f"  ! {kind} {request} {variant} c={conns}: {r.bad} wrong answers, {r.errors} socket errors")
    if expired:
        print_expiry(expired, results, args.levels)
    print_checks(checks)
    print(f"\ndone in {time.monotonic() - started:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
