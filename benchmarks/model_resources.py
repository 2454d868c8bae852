"""
Model resources on PostgreSQL: does a page of ``resources/list`` or one ``resources/read`` cost the
same at 1,000, 10,000 and 100,000 rows? (See benchmarks/README.md, "Model resources".)

    .venv/bin/python benchmarks/model_resources.py [--sizes 1000,10000,100000] [--reads 1000]

One daphne server (``tests.live.LiveServer``) serves the site ``tests.catalogue.sites.site`` from a
fresh PostgreSQL database on 127.0.0.1:5432. One client, one keep-alive connection, one request at
a time, every request a 2026-07-28 stateless POST (``_meta`` envelope, ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` headers). For each table size of ``tests.catalogue.models.Entry`` it
times, after an untimed warm-up:

1. ``resources/list`` from the first page, following ``nextCursor`` to the end, every entry checked
   to be listed once and in order; the whole listing is repeated until ``--min-list-requests``
   requests were made, so that each size has as many samples;
2. ``resources/read`` of ``--reads`` random rows, ``catalogue://entry/<pk>``, each answer checked;
3. the baseline, one request after each of the others: ``resources/read`` of ``test://static-text``,
   a static resource on the same site (the same method and path through the server, no SQL).

Before the entries, the same for ``Volume`` (``--volumes``: relations, an ordering by title, Django's
view permission) as a user authenticated by the test app's API key.

SQL statements are counted by PostgreSQL, not by the server: see ``model_resources_log.py``. Each
phase's statements are also replayed through psycopg (the database's share of a request) and the
deepest page's query is EXPLAINed (the plan shows whether a page reads the whole table).

A measurement, not a test: it exits 0 once it has printed, whatever the numbers, and skips (exit 0,
with the reason) when PostgreSQL or psycopg is missing. The database is dropped at the end.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import pg, workload
from benchmarks.model_resources_log import StatementLog, Unavailable, explain, replay, shape
from tests.live import ROOT, LiveServer, server_env

SITE = "tests.catalogue.sites.site"
# tests.testapp's static text resource, registered on the catalogue site too: no SQL behind it.
STATIC_URI = "test://static-text"
READER = "bench-reader"  # the API key of tests.testapp.authentication is "<username>-key"
WARM_UP = 20


def parse_args() -> argparse.Namespace:
    """The command line; sizes as increasing lists of ints."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="entry table sizes (default 1000,10000,100000)")
    parser.add_argument("--reads", type=int, default=1000, help="random rows read per size (default 1000)")
    parser.add_argument("--min-list-requests", type=int, default=1000,
                        help="repeat the whole listing until this many resources/list requests (default 1000)")
    parser.add_argument("--volumes", default="1000,10000",
                        help="volume table sizes, listed as a user with the view permission; 0 skips "
                        "(default 1000,10000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random rows read (default 1)")
    args = parser.parse_args()
    args.sizes = _sizes(args.sizes)
    args.volumes = _sizes(args.volumes)
    return args


def _sizes(text: str) -> list[int]:
    """Increasing table sizes; each size adds rows to the previous one (0 and blanks dropped)."""
    return sorted({int(s.replace("_", "")) for s in text.split(",") if s.strip() and int(s.replace("_", ""))})


# --- requests ---------------------------------------------------------------------------------


def modern(method: str, params: dict | None, request_id: int, name: str | None = None,
           headers: dict | None = None) -> workload.Spec:
    """A stateless 2026-07-28 POST: the ``_meta`` envelope and the headers that mirror it."""
    meta = {"io.modelcontextprotocol/protocolVersion": workload.MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    head = {"MCP-Protocol-Version": workload.MODERN, "Mcp-Method": method, "Accept": workload.ACCEPT_BOTH,
            "Content-Type": "application/json", **(headers or {})}
    if name is not None:
        head["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    return workload.Spec("POST", "/mcp", head, json.dumps(body, separators=(",", ":")), expect=[])


@dataclass
class Phase:
    """The timed requests of one phase, with the statements PostgreSQL logged for each."""

    label: str
    times: list[float] = field(default_factory=list)  # seconds per request, client side
    queries: list[int] = field(default_factory=list)  # statements per request
    kinds: list[str] = field(default_factory=list)  # "first" page of a listing, or "next"
    statements: list[str] = field(default_factory=list)
    backends: set[int] = field(default_factory=set)  # PostgreSQL pids: the server's connections used
    wrong: int = 0
    first_wrong: str = ""
    passes: int = 0
    rows: int = 0  # rows of the model listed or read
    replay_s: float | None = None
    plan: str = ""

    def fail(self, text: str) -> None:
        self.wrong += 1
        self.first_wrong = self.first_wrong or text

    @property
    def requests(self) -> int:
        return len(self.times)

    def ms(self, q: float | None = None) -> float:
        """Mean (``q`` None) or the ``q`` quantile (nearest rank) of the time per request, in ms."""
        if not self.times:
            return 0.0
        if q is None:
            return statistics.fmean(self.times) * 1000
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    def sql_per_request(self, kind: str | None = None) -> float:
        counts = [n for n, k in zip(self.queries, self.kinds, strict=True) if kind is None or k == kind]
        return statistics.fmean(counts) if counts else 0.0

    def db_ms(self) -> float | None:
        return None if self.replay_s is None or not self.requests else self.replay_s / self.requests * 1000


class Runner:
    """One keep-alive connection to the server, and the statement log read after every answer."""

    def __init__(self, port: int, log: StatementLog | None) -> None:
        self.client = workload.Client(port, timeout=60.0)
        self.log = log
        self.next_id = 1

    def begin(self, phase: Phase) -> Phase:
        """Start a phase's window: whatever was logged before it (set-up, replays) is not its."""
        if self.log is not None:
            self.log.take()
        return phase

    def call(self, phase: Phase | None, method: str, params: dict | None = None, name: str | None = None,
             headers: dict | None = None, kind: str = "next") -> dict | None:
        """Send one request; its ``result`` when it is a 200 with one, else None (and the phase told)."""
        self.next_id += 1
        spec = modern(method, params, self.next_id, name, headers)
        started = time.perf_counter()
        response = self.client.send(spec)
        elapsed = time.perf_counter() - started
        # The statements of a request are logged before they run, so all are there by now.
        statements = self.log.take() if self.log is not None and phase is not None else []
        try:
            result = json.loads(response.body)["result"] if response.status == 200 else None
        except (ValueError, KeyError):
            result = None
        if phase is not None:
            phase.times.append(elapsed)
            phase.queries.append(len(statements))
            phase.kinds.append(kind)
            phase.statements += [s.sql for s in statements]
            phase.backends.update(s.pid for s in statements if s.pid is not None)
            if result is None:
                phase.fail(f"{method} {name or ''}: status {response.status}, body {response.body[:300]!r}")
        return result


# --- phases ----------------------------------------------------------------------------------


def list_once(runner: Runner, phase: Phase | None, headers: dict | None, max_pages: int | None = None,
              static: Phase | None = None) -> list[str]:
    """
    One pass over ``resources/list``, following ``nextCursor`` to the end; the URIs, in order.
    ``static``: a static read after every page, timed into that phase (the interleaved baseline).
    """
    uris: list[str] = []
    cursor = None
    while True:
        result = runner.call(phase, "resources/list", {"cursor": cursor} if cursor else {}, headers=headers,
                             kind="next" if cursor else "first")
        if static is not None:
            static_read(runner, static, headers)
        if result is None:
            return uris
        uris += [item["uri"] for item in result.get("resources", [])]
        cursor = result.get("nextCursor")
        if not cursor or (max_pages is not None and len(uris) >= max_pages * 100):
            return uris


def row_uris(uris: list[str], prefix: str) -> list[str]:
    """The rows among listed URIs (not the ``$schema`` resource nor other models)."""
    return [uri for uri in uris if uri.startswith(prefix + "/") and uri[len(prefix) + 1:].isdigit()]


def listing(runner: Runner, table: dict, pks: list[int], min_requests: int, headers: dict | None,
            static: Phase) -> Phase:
    """Whole listings until ``min_requests`` requests; each must list every row once, in order."""
    phase = runner.begin(Phase("resources/list"))
    expected = [f"{table['prefix']}/{pk}" for pk in pks]  # both models here list in primary-key order
    while not phase.wrong and (phase.passes == 0 or phase.requests < min_requests):
        listed = row_uris(list_once(runner, phase, headers, static=static), table["prefix"])
        phase.passes += 1
        phase.rows += len(listed)
        if listed != expected:
            phase.fail(f"pass {phase.passes} listed {len(listed)} rows ({len(set(listed))} distinct), "
                       f"expected {len(expected)} in primary-key order")
    return phase


def reads(runner: Runner, table: dict, pks: list[int], count: int, rng: random.Random,
          headers: dict | None, static: Phase) -> Phase:
    """``count`` random rows read by URI, each followed by a static read; each answer must be that row."""
    phase = runner.begin(Phase("resources/read"))
    chosen = rng.sample(pks, count) if count <= len(pks) else rng.choices(pks, k=count)
    for pk in chosen:
        uri = f"{table['prefix']}/{pk}"
        result = runner.call(phase, "resources/read", {"uri": uri}, name=uri, headers=headers)
        static_read(runner, static, headers)
        if result is None:
            continue
        content = (result.get("contents") or [{}])[0]
        if content.get("uri") != uri or json.loads(content.get("text") or "{}").get("id") != pk:
            phase.fail(f"read {uri}: another answer: {str(result)[:300]}")
    phase.rows = len(chosen)
    return phase


def static_read(runner: Runner, phase: Phase | None, headers: dict | None) -> None:
    """
    One request of the baseline: the same method through the same server, for a resource with no
    SQL behind it. Interleaved with the measured requests, so that other work on the machine
    slows both alike and the ratio between them holds.
    """
    result = runner.call(phase, "resources/read", {"uri": STATIC_URI}, name=STATIC_URI, headers=headers)
    if phase is not None and result is not None and not (result.get("contents") or [{}])[0].get("text"):
        phase.fail(f"read {STATIC_URI}: no text: {str(result)[:300]}")


def warm_up(runner: Runner, table: dict, pks: list[int], headers: dict | None) -> None:
    """Untimed: the server's pool threads open their connections, the code paths get warm."""
    for _ in range(WARM_UP):
        static_read(runner, None, headers)
    list_once(runner, None, headers, max_pages=5)
    for pk in pks[:: max(1, len(pks) // WARM_UP)][:WARM_UP]:
        uri = f"{table['prefix']}/{pk}"
        runner.call(None, "resources/read", {"uri": uri}, name=uri, headers=headers)


# --- data ------------------------------------------------------------------------------------


def setup_job(env: dict, job: dict) -> dict:
    """Run one job of ``model_resources_setup.py`` against the benchmark database."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.model_resources_setup", json.dumps(job)], cwd=ROOT,
                         env=server_env(env), capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"set-up job {job} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def grow(env: dict, bench, job: dict) -> tuple[dict, list[int]]:
    """Add rows with a set-up job; VACUUM ANALYZE the table; return its description and sorted pks."""
    from psycopg import sql

    table = setup_job(env, job)
    # A bulk-loaded table has no statistics yet; autovacuum would analyze it at some moment during
    # the timing and maybe change the plans. Do it now, once.
    bench.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table["table"])))
    pks = [row[0] for row in bench.execute(sql.SQL("SELECT {} FROM {} ORDER BY 1").format(
        sql.Identifier(table["pk_column"]), sql.Identifier(table["table"]))).fetchall()]
    return table, pks


def finish(phase: Phase, table: dict, replayer, bench) -> None:
    """Replay the phase's statements (the database's share) and EXPLAIN its last query of the table."""
    if phase.statements:
        phase.replay_s = replay(replayer, phase.statements)
    needle = f'FROM "{table["table"]}"'
    own = [sql for sql in phase.statements if needle in sql]
    if own:
        # A listing's last page is short: its next-to-last is a full page as deep into the table.
        deep = own[-2] if phase.passes and len(own) > 1 else own[-1]
        try:
            phase.plan = explain(bench, deep)
        except Exception as exc:  # a statement EXPLAIN cannot take: say so, the timing stands
            phase.plan = f"(no plan: {exc})"


@dataclass
class Size:
    rows: int
    phases: list[Phase]


def measure_model(runner: Runner, env: dict, bench, replayer, args, jobs: list[tuple[int, dict]],
                  headers: dict | None, rng: random.Random) -> list[Size]:
    """For each (size, job): grow the table, warm up, then the timed phases (the baseline interleaved)."""
    results = []
    for rows, job in jobs:
        table, pks = grow(env, bench, job)
        if len(pks) != rows:
            print(f"  ! {table['table']}: {len(pks):,} rows, expected {rows:,}")
        warm_up(runner, table, pks, headers)
        static = runner.begin(Phase("static read (baseline)"))
        phases = [static, listing(runner, table, pks, args.min_list_requests, headers, static),
                  reads(runner, table, pks, args.reads, rng, headers, static)]
        for phase in phases:
            finish(phase, table, replayer, bench)
            print(f"  {table['table']} {rows:>9,} rows  {phase.label:24} {phase.requests:6,} requests  "
                  f"{phase.ms():7.2f} ms mean  {phase.sql_per_request():5.2f} SQL/request"
                  + (f"  ! {phase.wrong} wrong" if phase.wrong else ""))
        results.append(Size(len(pks), phases))
    return results


# --- output ----------------------------------------------------------------------------------


def print_table(title: str, sizes: list[Size], counted: bool) -> None:
    print(f"\n{title}")
    header = (f"{'rows':>9}  {'phase':24}{'requests':>9}{'passes':>7}{'mean ms':>9}{'p50 ms':>8}{'p95 ms':>8}"
              f"{'SQL/req':>9}{'min-max':>9}{'conns':>7}{'DB ms/req':>11}{'vs static':>11}")
    print(header + "\n" + "-" * len(header))
    for size in sizes:
        static = size.phases[0].ms()
        for phase in size.phases:
            sql = (f"{phase.sql_per_request():9.2f}{f'{min(phase.queries)}-{max(phase.queries)}':>9}"
                   f"{len(phase.backends):>7}") if counted and phase.queries else f"{'n/a':>9}{'':>16}"
            db = phase.db_ms()
            print(f"{size.rows:>9,}  {phase.label:24}{phase.requests:>9,}{phase.passes or '':>7}{phase.ms():>9.2f}"
                  f"{phase.ms(0.5):>8.2f}{phase.ms(0.95):>8.2f}{sql}{'' if db is None else f'{db:.3f}':>11}"
                  f"{(phase.ms() / static if static else 0):>10.2f}x")


def print_statements(sizes: list[Size]) -> None:
    """Per phase, how many statements of each kind a request sent, and the deepest query's plan."""
    print("\n  SQL per request by statement (literals and column lists elided); plan: EXPLAIN ANALYZE of the last "
          "read, or of the listing's next-to-last (deepest full) page:")
    for size in sizes:
        for phase in size.phases:
            if not phase.requests:
                continue
            print(f"  {size.rows:>9,} {phase.label}:")
            for text, n in Counter(shape(sql) for sql in phase.statements).most_common():
                print(f"    {n / phase.requests:6.3f}  {text[:150]}{'…' if len(text) > 150 else ''}")
            if not phase.statements:
                print("     0      (none)")
            if phase.plan:
                print(f"            plan: {phase.plan}")


def print_flatness(sizes: list[Size], counted: bool) -> None:
    """The ratios that matter: the largest table against the smallest."""
    if len(sizes) < 2:
        return
    small, large = sizes[0], sizes[-1]
    print(f"  Largest / smallest table ({large.rows:,} / {small.rows:,} rows, "
          f"{large.rows / small.rows:,.0f}x the rows):")
    for index, name in ((1, "resources/list"), (2, "resources/read")):
        a, b = small.phases[index], large.phases[index]
        if not (a.requests and b.requests):
            continue
        line = (f"    {name:15} time per request {b.ms() / a.ms():5.2f}x mean, {b.ms(0.5) / a.ms(0.5):5.2f}x p50; "
                f"over the static read {a.ms() / small.phases[0].ms():.2f}x -> {b.ms() / large.phases[0].ms():.2f}x")
        if index == 1:
            line += f"; rows a page {a.rows / a.requests:.1f} -> {b.rows / b.requests:.1f}"
        if counted:
            line += f"; SQL per request {a.sql_per_request():.3f} -> {b.sql_per_request():.3f}"
            if index == 1:
                line += (f" (first pages {a.sql_per_request('first'):.2f} -> {b.sql_per_request('first'):.2f}, "
                         f"later pages {a.sql_per_request('next'):.3f} -> {b.sql_per_request('next'):.3f})")
        if a.db_ms() and b.db_ms():
            line += f"; DB time {b.db_ms() / a.db_ms():.2f}x"
        print(line)
    for size in sizes:
        for phase in size.phases:
            if phase.wrong:
                print(f"  ! {size.rows:,} rows, {phase.label}: {phase.wrong} wrong answers; first: {phase.first_wrong}")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


# --- main ------------------------------------------------------------------------------------


def unavailable() -> str | None:
    """Why PostgreSQL cannot be used here, or None."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (the `postgres` or `test` extra)"
    try:
        psycopg.connect(pg.ADMIN_DSN, autocommit=True).close()
    except psycopg.Error as exc:
        return f"PostgreSQL ({pg.ADMIN_DSN}) does not answer: {str(exc).strip()}"
    return None


def open_log(admin, database: str) -> StatementLog | None:
    try:
        log = StatementLog(admin, database)
        log.enable()
    except Unavailable as exc:
        print(f"  ! SQL statements not counted: {exc}")
        return None
    except Exception as exc:  # psycopg.Error from ALTER DATABASE: not a superuser
        print(f"  ! SQL statements not counted: cannot set log_statement on the database: {exc}")
        return None
    print(f"  SQL counted by PostgreSQL: ALTER DATABASE {database} SET log_statement = 'all', then the "
          f"statements of that database read back from {log.describe()} after every answer"
          + (f" ({log.note})" if log.note else ""))
    return log


def run(args, env: dict) -> None:
    import psycopg

    database = env["MCP_TEST_PG_NAME"]
    env = {**env, "MCP_TEST_SITE": SITE}
    dsn = pg.ADMIN_DSN.replace("dbname=postgres", f"dbname={database}")
    with psycopg.connect(pg.ADMIN_DSN, autocommit=True) as admin:
        log = open_log(admin, database)
        print(f"  PostgreSQL {admin.info.server_version // 10000}.{admin.info.server_version % 100}; "
              f"daphne {_version('daphne')}, Django {_version('django')}, psycopg {_version('psycopg')}, "
              f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}")
        # bench: set-up, EXPLAIN, primary keys. replayer: binds values on the client as Django's
        # backend does. Neither is logged: a logged replay would double what the run adds to the log.
        with psycopg.connect(dsn, autocommit=True) as bench, \
                psycopg.connect(dsn, autocommit=True, cursor_factory=psycopg.ClientCursor) as replayer:
            bench.execute("SET log_statement = 'none'")
            replayer.execute("SET log_statement = 'none'")
            with LiveServer(env=env, args=["-v", "0"], name="model-resources") as server:
                print(f"  server: {server.url} ({SITE}), log {server.log_path}")
                runner = Runner(server.port, log)
                rng = random.Random(args.seed)
                volumes = []
                if args.volumes:
                    # Volumes first, while the entry table is empty, then emptied again: each model's
                    # listing holds its own rows only (plus the site's few static resources).
                    steps = zip(args.volumes, [0, *args.volumes], strict=False)
                    jobs = [(n, {"volumes": n - before, "user": READER}) for n, before in steps]
                    volumes = measure_model(runner, env, bench, replayer, args, jobs,
                                               {"X-Api-Key": f"{READER}-key"}, rng)
                    setup_job(env, {"clear_volumes": True})
                jobs = [(n, {"entries": n - before}) for n, before in zip(args.sizes, [0, *args.sizes], strict=False)]
                entries = measure_model(runner, env, bench, replayer, args, jobs, None, rng)
                runner.client.close()
    report(args, entries, volumes, log is not None)


def report(args, entries: list[Size], volumes: list[Size], counted: bool) -> None:
    how = ("SQL/req: statements PostgreSQL logged for the benchmark database per request (log_statement = 'all'); "
           "conns: the server's database connections (backend pids) that sent them" if counted
           else "SQL/req: not counted (see above)")
    print(f"\n{how}; min-max: fewest and most of one request. DB ms/req: the same statements replayed through "
          "psycopg, per request. vs static: mean time per request over the static read's at the same size.")
    print_table("Entry (tests.catalogue: fields \"__all__\", ordered by pk, AllowAny, anonymous; 100 rows a page)",
                entries, counted)
    print_flatness(entries, counted)
    print_statements(entries)
    if volumes:
        print_table(f"Volume (VolumeResource: ordered by title, select_related writer, prefetch tags, Django's view "
                    f"permission; as {READER} via X-Api-Key)", volumes, counted)
        print_flatness(volumes, counted)
        print_statements(volumes)


def main() -> int:
    args = parse_args()
    # A SIGTERM must still stop the server and drop the database (finally blocks run on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    reason = unavailable()
    if reason:
        print(f"model resources benchmark skipped: {reason}")
        return 0
    started = time.monotonic()
    print(f"django_mcp model resources on PostgreSQL: entry sizes {args.sizes}, volume sizes {args.volumes or 'none'}, "
          f"{args.reads} random reads, >= {args.min_list_requests} list requests per size")
    with pg.fresh_database() as env:
        if env is None:
            print("model resources benchmark skipped: no database (see above)")
            return 0
        run(args, env)
    print(f"\ndone in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
