"""
What a question through the model query tool (``query_models``, django_mcp.model_resources.query)
costs against the same question asked of the ORM directly, measured in the same run. See
benchmarks/README.md, "Model queries' cost".

    .venv/bin/python benchmarks/model_query.py --quick     # ≈1 min, SQLite and PostgreSQL
    .venv/bin/python benchmarks/model_query.py             # ≈3 min
    .venv/bin/python benchmarks/model_query.py --database sqlite --loans 20000

The example project (``example_project.settings``) on a fresh database: migrated, its demo data
(``manage.py mcp_demo_data``), then ``--loans`` more loans (default 2,000) of generated borrowers
spread over its 247 books, so that the table is not a handful of rows. The question is the
librarian's "loans per author"::

    {"model": "loan", "group_by": ["book__author__name"], "aggregates": {"loans": {"function": "count"}},
     "order_by": ["-loans"]}

asked three ways, as the librarian (who holds ``library.view_loan``, so ``LoanResource.get_queryset``
filters nothing):

(a) the ORM directly: ``list(Loan.objects.values("book__author__name").annotate(loans=Count("pk"))
    .order_by("-loans"))``, the baseline;
(b) the tool's own work, as ``ModelQueryTool.call`` does it minus the permission checks: the
    catalog, the parser, then ``tool.answer(plan, ctx)`` (compiler, ``guarded``, the query, the
    answer's rows and text table), on this thread;
(c) a whole call in process: ``McpClient().call_tool("query_models", document)`` after
    ``force_authenticate(librarian)`` (2026-07-28, sync, as a Django ``TestCase`` calls it): the
    ASGI consumer, the dispatcher, the hooks of the example's installed apps, the permission
    checks, the tool, the JSON; and the same with ``acall_tool`` (async: no event loop started per call).

Then parts of (b) and (c) on their own: the path floor (``acall_tool`` of the example's
``search_books`` finding nothing: the same client, consumer, hooks and call log around a tool that
does next to nothing), the validation (catalog and parser), the permission checks a call makes
(the tool's own through the site, then read permission of every model the query touches, as
``call`` asks them), each variant's queryset made and compiled to SQL without running it, and each
variant's SQL statement alone (executed on a cursor and fetched, no ORM): the database's share.

Every answer is checked against the ORM's (author → loans). Times are per operation, one at a
time, the check outside the clock: wall clock (``time.perf_counter``) and this process's CPU time
(``time.process_time``, every thread: steadier on a busy machine, but without PostgreSQL's own
work). The rounds interleave the variants; each figure is the median over all rounds' operations.
Ratios are against (a) in the same run. A measurement, not a test: it exits 0 once it has printed,
whatever the numbers.

Databases: SQLite in a temporary directory (``DEMO_SQLITE``, deleted at the end), and PostgreSQL on
127.0.0.1:5432 (user ``postgres``, trust authentication, a fresh database ``django_mcp_bench_<random>``
dropped at the end, as the test suite's ``services`` fixture does; skipped with the reason when
psycopg is missing or the server does not answer). Each database runs in a child process of its
own (Django is set up once per process); PostgreSQL through the ``POSTGRES_*`` variables
``example_project.settings_fleet`` reads, applied to ``example_project.settings`` (the fleet
settings would also bring Redis). The children run with ``DJANGO_DEBUG=0`` (as deployed: no query
log in memory) and ``DEMO_REQUEST_LOG=0`` (no request log line on the terminal per call).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make `benchmarks`, `example_project` and `django_mcp` importable
    sys.path.insert(0, str(ROOT))

DOCUMENT = {"model": "loan", "group_by": ["book__author__name"], "aggregates": {"loans": {"function": "count"}},
            "order_by": ["-loans"]}
ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
BORROWERS = 8  # generated users the extra loans are spread over

ORM = "(a) ORM directly"
TOOL = "(b) the tool's work: parse, compile, run"
CLIENT = "(c) McpClient.call_tool, in process"
CLIENT_ASYNC = "(c') McpClient.acall_tool, in process"
FLOOR = "(c') path floor: acall_tool search_books, no match"
VALIDATION = "validation: catalog + parser"
PERMISSION = "permission checks: the tool's, and each model read"
ORM_COMPILE = "(a)'s queryset made and compiled to SQL, not run"
TOOL_COMPILE = "(b)'s queryset made (compiler) and compiled, not run"
ORM_SQL = "(a)'s SQL alone, on a cursor"
TOOL_SQL = "(b)'s SQL alone, on a cursor"
MAIN = (ORM, TOOL, CLIENT, CLIENT_ASYNC)
PARTS = (FLOOR, VALIDATION, PERMISSION, ORM_COMPILE, TOOL_COMPILE, ORM_SQL, TOOL_SQL)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 40 operations (default 5 of 150)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 3)")
    parser.add_argument("--calls", type=int, help="operations of each variant per round (default 150, --quick 40)")
    parser.add_argument("--loans", type=int, default=2000, help="loans added to the demo data's (default 2000)")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both",
                        help="which databases (default both)")
    parser.add_argument("--child", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.calls = args.calls or (40 if args.quick else 150)
    return args


# --- the parent: databases and child processes --------------------------------------------------


def main() -> int:
    args = parse_args()
    if args.child:
        return child(args)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"model query tool against the ORM: {args.rounds} rounds x {args.calls} operations per variant, "
          f"+{args.loans} loans; {os.cpu_count()} CPUs, Python {platform.python_version()}"
          + (f", load average {load[0]:.2f} {load[1]:.2f}" if load else ""))
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    for database in databases:
        print()
        if database == "sqlite":
            run_sqlite(args)
        else:
            run_postgres(args)
    return 0


def child_command(args: argparse.Namespace, database: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", database, "--rounds", str(args.rounds),
            "--calls", str(args.calls), "--loans", str(args.loans)]


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings", "DJANGO_DEBUG": "0",
           "DEMO_REQUEST_LOG": "0", **extra}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_child(args: argparse.Namespace, database: str, extra: dict[str, str]) -> None:
    completed = subprocess.run(child_command(args, database), env=child_env(extra), cwd=ROOT, check=False)
    if completed.returncode:
        print(f"  ! the {database} run failed (exit {completed.returncode}); see above")


def run_sqlite(args: argparse.Namespace) -> None:
    directory = tempfile.mkdtemp(prefix="django-mcp-bench-query-")
    try:
        run_child(args, "sqlite", {"DEMO_SQLITE": str(Path(directory) / "db.sqlite3")})
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run_postgres(args: argparse.Namespace) -> None:
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        print("PostgreSQL: skipped, psycopg is not installed (pip install -e '.[postgres]')")
        return
    name = f"django_mcp_bench_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        print(f"PostgreSQL: skipped, cannot create a database on 127.0.0.1:5432 ({' '.join(str(exc).split())})")
        return
    try:
        run_child(args, "postgres", {"POSTGRES_DB": name, "POSTGRES_HOST": "127.0.0.1", "POSTGRES_PORT": "5432",
                                     "POSTGRES_USER": "postgres", "POSTGRES_PASSWORD": ""})
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        print(f"  dropped PostgreSQL database {name}")


# --- the child: one database ------------------------------------------------------------------------


def setup_django(database: str) -> None:
    if database == "postgres":
        # example_project.settings knows SQLite only; the fleet settings' variables name the database.
        import example_project.settings as project

        project.DATABASES = {"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": os.environ["POSTGRES_DB"],
            "HOST": os.environ.get("POSTGRES_HOST", "127.0.0.1"), "PORT": os.environ.get("POSTGRES_PORT", "5432"),
            "USER": os.environ.get("POSTGRES_USER", "postgres"), "PASSWORD": os.environ.get("POSTGRES_PASSWORD", ""),
            "CONN_MAX_AGE": 60, "CONN_HEALTH_CHECKS": True}}
    import django

    django.setup()


def load_data(loans: int) -> str:
    """Migrate, the demo data, then ``loans`` more loans of generated borrowers; the demo command's line."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from example_project.library.models import Book, Loan

    call_command("migrate", verbosity=0, interactive=False)
    out = io.StringIO()
    call_command("mcp_demo_data", stdout=out)
    users = get_user_model()
    borrowers = [users.objects.get_or_create(username=f"bench-borrower-{n:02d}")[0] for n in range(BORROWERS)]
    books = list(Book.objects.order_by("pk").values_list("pk", flat=True))
    rng = random.Random(1)
    now = timezone.now()
    # Skewed, so that the authors' counts differ: the first books are lent more often.
    weights = [1 / (1 + index / 20) for index in range(len(books))]
    picked = rng.choices(books, weights=weights, k=loans)
    Loan.objects.bulk_create((Loan(book_id=book, borrower=borrowers[n % BORROWERS],
                                   lent_at=now - timedelta(minutes=rng.randrange(365 * 24 * 60)))
                              for n, book in enumerate(picked)), batch_size=1000)
    return out.getvalue().strip()


def expected_counts(rows: list[dict[str, Any]], name: str, count: str) -> dict[str, int]:
    return {row[name]: row[count] for row in rows}


def child(args: argparse.Namespace) -> int:
    setup_django(args.child)
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Count
    from django.test.utils import CaptureQueriesContext

    from django_mcp.context import Context
    from django_mcp.model_resources.query.compiler import Compiler
    from django_mcp.model_resources.query.parser import Parser
    from django_mcp.model_resources.query.tool import as_read
    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.versions import Era
    from django_mcp.sites import get_default_site
    from django_mcp.test import McpClient
    from example_project.library.models import Loan

    started = time.perf_counter()
    demo = load_data(args.loans)
    vendor = connection.vendor
    if vendor == "sqlite":
        import sqlite3

        label = f"SQLite {sqlite3.sqlite_version}"
    else:
        label = f"PostgreSQL {connection.pg_version // 10000}.{connection.pg_version % 10000}"
    print(f"{label}: {demo}")
    print(f"  +{args.loans} loans of {BORROWERS} generated borrowers: {Loan.objects.count()} loans in all "
          f"(data ready in {time.perf_counter() - started:.1f} s)")

    librarian = get_user_model().objects.get(username="librarian")
    site = get_default_site()
    tool = site.get_tool("query_models")
    if tool is None:
        print("  ! the example site has no query_models tool; nothing measured")
        return 1

    def context() -> Context:
        return Context(RequestContext(era=Era.MODERN, protocol_version="2026-07-28", user=librarian,
                                      method="tools/call"))

    ctx = context()

    # (a), and what every answer must say.
    def orm() -> list[dict[str, Any]]:
        return list(Loan.objects.values("book__author__name").annotate(loans=Count("pk")).order_by("-loans"))

    expected = expected_counts(orm(), "book__author__name", "loans")

    def check_orm(rows: list[dict[str, Any]]) -> bool:
        return expected_counts(rows, "book__author__name", "loans") == expected

    # (b)
    def parse() -> Any:
        return Parser(tool.catalog(), tool.max_rows, tool.default_limit).parse(DOCUMENT)

    def tool_work() -> dict[str, Any]:
        return tool.answer(parse(), ctx)

    def check_result(result: Any) -> bool:
        structured = result.get("structuredContent") if isinstance(result, dict) else result
        return (isinstance(structured, dict) and not structured["more"]
                and expected_counts(structured["rows"], "book__author__name", "loans") == expected)

    # (c)
    client = McpClient(host="localhost")
    client.force_authenticate(librarian)

    def call() -> Any:
        return client.call_tool("query_models", DOCUMENT)

    def check_call(result: Any) -> bool:
        return not result.is_error and check_result(result.raw)

    async_client = McpClient(host="localhost")
    async_client.force_authenticate(librarian)

    # Parts: the checks before the work, and the statements alone.
    plan = parse()

    async def permission() -> bool:
        fresh = context()
        allowed = await site.permits(tool, fresh)
        reading = as_read(fresh)
        for resource in sorted(plan.touched, key=lambda r: r.get_name()):
            allowed = allowed and await resource.permits(reading)
        return allowed

    def orm_statement() -> tuple[str, Any]:
        return Loan.objects.values("book__author__name").annotate(loans=Count("pk")).order_by("-loans") \
            .query.sql_with_params()

    def tool_statement() -> tuple[str, Any]:
        return Compiler(ctx, tool.using(plan)).queryset(plan)[0].query.sql_with_params()

    orm_sql = orm_statement()
    tool_sql = tool_statement()

    def raw(sql_params: tuple[str, Any]) -> Any:
        def run() -> list[tuple]:
            with connection.cursor() as cursor:
                cursor.execute(*sql_params)
                return cursor.fetchall()
        return run

    def check_raw(rows: list[tuple]) -> bool:
        return {row[0]: row[1] for row in rows} == expected

    loop = asyncio.new_event_loop()

    # Each operation's wall time and this process's CPU time (every thread: the pool's too).
    def batch_sync(op: Any, check: Any) -> Any:
        def run(count: int) -> tuple[list[float], list[float], int]:
            walls, cpus, wrong = [], [], 0
            for _ in range(count):
                begun, cpu = time.perf_counter(), time.process_time()
                result = op()
                walls.append(time.perf_counter() - begun)
                cpus.append(time.process_time() - cpu)
                wrong += not check(result)
            return walls, cpus, wrong
        return run

    def batch_async(op: Any, check: Any) -> Any:
        def run(count: int) -> tuple[list[float], list[float], int]:
            async def many() -> tuple[list[float], list[float], int]:
                walls, cpus, wrong = [], [], 0
                for _ in range(count):
                    begun, cpu = time.perf_counter(), time.process_time()
                    result = await op()
                    walls.append(time.perf_counter() - begun)
                    cpus.append(time.process_time() - cpu)
                    wrong += not check(result)
                return walls, cpus, wrong
            return loop.run_until_complete(many())
        return run

    variants = {
        ORM: batch_sync(orm, check_orm),
        TOOL: batch_sync(tool_work, check_result),
        CLIENT: batch_sync(call, check_call),
        CLIENT_ASYNC: batch_async(lambda: async_client.acall_tool("query_models", DOCUMENT), check_call),
        FLOOR: batch_async(lambda: async_client.acall_tool("search_books", {"query": "no-such-book"}),
                           lambda result: not result.is_error and result.structured == {"result": []}),
        VALIDATION: batch_sync(parse, lambda found: found.resource.get_name() == "loan"),
        PERMISSION: batch_async(permission, bool),
        ORM_COMPILE: batch_sync(orm_statement, lambda found: found == orm_sql),
        TOOL_COMPILE: batch_sync(tool_statement, lambda found: found == tool_sql),
        ORM_SQL: batch_sync(raw(orm_sql), check_raw),
        TOOL_SQL: batch_sync(raw(tool_sql), check_raw),
    }

    # One checked operation of each before anything is timed: a variant that answers wrongly is left out.
    failed = {}
    for name, run in variants.items():
        try:
            *_, wrong = run(1)
        except Exception as error:  # noqa: BLE001 - reported, the rest goes on
            failed[name] = f"{type(error).__name__}: {error}"
            continue
        if wrong:
            failed[name] = "wrong answer"
    for name, reason in failed.items():
        print(f"  ! {name}: {reason}; left out")
        del variants[name]

    statements = {}
    for name, op in ((ORM, orm), (TOOL, tool_work), (CLIENT, call)):
        if name in variants:
            with CaptureQueriesContext(connection) as captured:
                op()
            statements[name] = len(captured)

    for run in variants.values():  # warm-up
        run(max(10, args.calls // 10))
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu_times: dict[str, list[float]] = {name: [] for name in variants}
    wrong: dict[str, int] = dict.fromkeys(variants, 0)
    order = list(variants)
    for round_number in range(args.rounds):
        shift = round_number % len(order)
        for name in order[shift:] + order[:shift]:  # a different variant first each round
            walls, cpus, bad = variants[name](args.calls)
            times[name] += walls
            cpu_times[name] += cpus
            wrong[name] += bad
    client.close()
    loop.run_until_complete(async_client.aclose())
    loop.close()

    def median(name: str, measured: dict[str, list[float]] = times) -> float | None:
        return statistics.median(measured[name]) * 1e6 if measured.get(name) else None

    def quantile(name: str, q: float) -> float:
        ordered = sorted(times[name])
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6

    baseline, cpu_baseline = median(ORM), median(ORM, cpu_times)
    print(f"  {'wall clock, median of every operation':52} {'µs':>8} {'p90 µs':>8} {'x (a)':>7} "
          f"{'CPU µs':>8} {'x (a)':>7} {'SQL/op':>6}")
    for name in MAIN + PARTS:
        if name == PARTS[0]:
            print("  parts:")
        value, cpu = median(name), median(name, cpu_times)
        if value is None:
            continue
        ratio = f"{value / baseline:6.2f}x" if baseline and name in MAIN else ""
        cpu_ratio = f"{cpu / cpu_baseline:6.2f}x" if cpu_baseline and name in MAIN else ""
        count = str(statements[name]) if name in statements else ""
        print(f"  {name:52} {value:8.0f} {quantile(name, 0.9):8.0f} {ratio:>7} {cpu:8.0f} {cpu_ratio:>7} {count:>6}")
    if any(wrong.values()):
        print("  ! wrong answers: " + ", ".join(f"{name}: {n}" for name, n in wrong.items() if n))
    checks = (median(VALIDATION) or 0) + (median(PERMISSION) or 0)
    print(f"  validation + permission: {checks:.0f} µs a call "
          f"({median(VALIDATION) or 0:.0f} + {median(PERMISSION) or 0:.0f})")
    if baseline and median(TOOL) is not None:
        extra = median(TOOL) - baseline
        compiled = (median(TOOL_COMPILE) or 0) - (median(ORM_COMPILE) or 0)
        database = (median(TOOL_SQL) or 0) - (median(ORM_SQL) or 0)
        print(f"  (b)/(a) {median(TOOL) / baseline:.2f}x, +{extra:.0f} µs: validation {median(VALIDATION) or 0:.0f}, "
              f"making and compiling the queryset +{compiled:.0f}, the statement in the database +{database:.0f}, "
              f"the rest (guard, rows, answer; medians do not add exactly) "
              f"{extra - (median(VALIDATION) or 0) - compiled - database:+.0f}")
    if baseline and median(CLIENT) is not None:
        print(f"  (c)/(a) {median(CLIENT) / baseline:.2f}x, +{median(CLIENT) - baseline:.0f} µs"
              + (f"; (c')/(a) {median(CLIENT_ASYNC) / baseline:.2f}x, +{median(CLIENT_ASYNC) - baseline:.0f} µs"
                 if median(CLIENT_ASYNC) is not None else ""))
    if median(CLIENT_ASYNC) is not None and median(FLOOR) is not None:
        print(f"  (c') over its path floor: +{median(CLIENT_ASYNC) - median(FLOOR):.0f} µs "
              f"(the tool's work (b): {median(TOOL) or 0:.0f} µs)")
    print(f"  the tool's statement: {tool_sql[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
