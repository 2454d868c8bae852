"""
MCP tasks throughput: task creations and ``tasks/get`` per second against a plain ``tools/call`` of
the same tool, on the same server, in one run (see benchmarks/README.md, "MCP tasks throughput").

    .venv/bin/python benchmarks/tasks.py                                   # ≈3 min; PostgreSQL when it is up
    .venv/bin/python benchmarks/tasks.py --databases sqlite --servers uvicorn --concurrency 32   # ≈40 s
    .venv/bin/python benchmarks/tasks.py --duration 5 --repeat 3           # steadier, ≈10 min

The tool is ``slow_compute`` of the conformance fixtures (tests/conformance_app/tasks.py, on the
default site of ``tests.settings``), called with ``{"seconds": 0}``: an ``async def`` with
``task_support="optional"`` whose work is one ``await asyncio.sleep(0)``. Every request is a
2026-07-28 stateless POST (``_meta`` with ``protocolVersion``, ``clientCapabilities`` and
``clientInfo``; ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``). For each database (SQLite;
PostgreSQL on 127.0.0.1:5432 when it answers, on a fresh database dropped at the end) and each ASGI
server (daphne; uvicorn, with uvloop and httptools when installed), two server processes pinned to
CPU 0, driven from CPU 1 by wrk or ``loadgen.py``'s stdlib generator exactly as ``run.py`` does:

- the *in-process* server: ``tests.settings`` as it is, whose task framework is Django's immediate
  backend, so django_mcp runs each task's work in the server process, as a task of its event loop;
- the *durable* server: the same with ``MCP_TEST_TASKS=db`` (django-tasks-db's database backend):
  a creation writes the task's row and enqueues the work (a second row); a ``db_worker`` process
  runs it.

Measured, at each concurrency:

1. ``tools/call`` without the extension: the tool runs as a plain call. **The baseline**;
2. the same call declaring ``io.modelcontextprotocol/tasks`` in the request's client capabilities:
   the answer is ``{"resultType":"task","taskId":…}`` at once. On the in-process server the work
   runs beside the requests on the same loop (what was still working when the load stopped, and
   how long it took to finish, is printed); on the durable server no ``db_worker`` runs during the
   timing, so a creation is the row and the enqueue only;
3. ``tasks/get`` of one completed task (``Mcp-Name: <taskId>``), on the in-process server.

Then, per database, how fast one ``db_worker`` (pinned to CPU 0, the servers idle) drains the
backlog the durable creations left, announcing each task's end on channels_redis when Redis
answers: tasks completed per second, from the rows' own ``started`` and ``finished`` times, its
CPU per task and, on PostgreSQL, the transactions it commits per task; the same drain of as many
no-op Django tasks queued ahead of that backlog (benchmarks/noop_task.py: the queue's own cost,
the drain's floor); and each part of a creation timed in process (``--no-parts`` skips it). Ratios are against the baseline
of the same database, server and concurrency. Also printed: the in-process work still running when
the load stopped and how long it took to finish; task rows whose work never started (a creation
the load generator's disconnect cancelled after its INSERT); each server's open file descriptors;
on PostgreSQL, the connections open during each run and opened per request.

The servers run with ``MAX_TASKS_PER_USER`` unset (``--task-limit``; a settings module written to
the run's temporary directory): every request is the same anonymous client, which the default
limit (20 working tasks) would refuse after 20. A measurement, not a test: it exits 0 once it has
printed, whatever the numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadgen, pg, workload
from benchmarks.run import _version, generator, median_of, setup_process, timed
from benchmarks.servers import LOG_DIR, SERVER_CPU, Server, can_pin, have_uvicorn, pinned, stop_all
from tests.live import ROOT, migrate, server_env

TOOL = "slow_compute"
EXTENSION = "io.modelcontextprotocol/tasks"
MODERN = workload.MODERN

BASELINE = "tools/call (baseline)"
IN_PROCESS = "task created, in-process runner"
DURABLE = "task created, db backend (row+enqueue)"
GET = "tasks/get, completed task"
MODES = (BASELINE, IN_PROCESS, DURABLE, GET)

TASK_TABLE = "django_mcp_tasks_mcptask"
QUEUE_TABLE = "django_tasks_database_dbtaskresult"  # django-tasks-db (app label django_tasks_database)
ACTIVE = "('working', 'input_required')"

SETTINGS_MODULE = "bench_tasks_settings"
SETTINGS = '''"""Written by benchmarks/tasks.py: tests.settings with MAX_TASKS_PER_USER = {limit!r}."""
from tests.settings import *  # noqa: F403
from tests.settings import DJANGO_MCP

DJANGO_MCP = {{**DJANGO_MCP, "MAX_TASKS_PER_USER": {limit!r}}}
'''


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per measured point (default 2)")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved repetitions, median reported (default 1)")
    parser.add_argument("--concurrency", default="1,32", help="comma-separated connection counts (default 1,32)")
    parser.add_argument("--servers", default="daphne,uvicorn",
                        help="comma-separated ASGI servers (default daphne,uvicorn; uvicorn when installed)")
    parser.add_argument("--databases", default="sqlite,postgres",
                        help="comma-separated databases (default sqlite,postgres; postgres when 127.0.0.1:5432 "
                             "answers)")
    parser.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto",
                        help="load generator (auto: wrk if installed, else the stdlib one)")
    parser.add_argument("--drain-tasks", type=int, default=300,
                        help="tasks the db_worker runs for the drain figure, per database (default 300; 0 skips it)")
    parser.add_argument("--pg-idle-timeout", type=int, default=0,
                        help="idle_session_timeout (ms) to set on the run's PostgreSQL database, so that the server "
                             "closes connections a server process leaves idle (0, the default: PostgreSQL's own, "
                             "none). "
                             "For code that leaves a connection per request open (before commit 3032384): see README")
    parser.add_argument("--no-parts", action="store_true", help="skip the in-process timing of a creation's parts")
    parser.add_argument("--parts-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--task-limit", type=int, default=None,
                        help="MAX_TASKS_PER_USER of the servers (default: none; a limit adds a COUNT per creation)")
    args = parser.parse_args()
    args.levels = [int(c) for c in args.concurrency.split(",")]
    args.kinds = [kind for kind in args.servers.split(",") if kind in ("daphne", "uvicorn")]
    args.dbs = [db for db in args.databases.split(",") if db in ("sqlite", "postgres")]
    return args


# --- requests ------------------------------------------------------------------------------------

def _meta(tasks: bool) -> dict:
    capabilities = {"extensions": {EXTENSION: {}}} if tasks else {}
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "bench-tasks", "version": "1"}}


def _post(method: str, name: str, params: dict, expect: list[str]) -> workload.Spec:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": name,
               "Accept": workload.ACCEPT_BOTH, "Content-Type": "application/json"}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return workload.Spec("POST", "/mcp", headers, json.dumps(body, separators=(",", ":")), expect=expect)


def call_spec(tasks: bool) -> workload.Spec:
    """``tools/call slow_compute {"seconds": 0}``; a task when ``tasks`` (the extension declared)."""
    params = {"name": TOOL, "arguments": {"seconds": 0}, "_meta": _meta(tasks)}
    expect = (['"resultType":"task"', '"taskId":"', '"status":"working"'] if tasks
              else ['"result"', '"isError":false', "computation done after 0 s"])
    return _post("tools/call", TOOL, params, expect)


def get_spec(task_id: str) -> workload.Spec:
    """``tasks/get`` of a completed task: its status and the call's result."""
    return _post("tasks/get", task_id, {"taskId": task_id, "_meta": _meta(True)},
                 [f'"taskId":"{task_id}"', '"status":"completed"', "computation done after 0 s"])


def _json(body: bytes) -> dict:
    text = body.decode()
    if not text.lstrip().startswith("{"):  # an SSE answer: its data line
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


def completed_task(port: int, timeout: float = 15.0) -> str:
    """Make one task on an in-process server and wait until it has completed; its id."""
    client = workload.Client(port)
    try:
        created = client.send(call_spec(True))
        problem = created.problem(call_spec(True))
        if problem:
            raise RuntimeError(f"task creation failed: {problem}")
        task_id = _json(created.body)["result"]["taskId"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not client.send(get_spec(task_id)).problem(get_spec(task_id)):
                return task_id
            time.sleep(0.05)
        raise RuntimeError(f"task {task_id} did not complete within {timeout:g} s")
    finally:
        client.close()


# --- the databases -------------------------------------------------------------------------------

class Rows:
    """Read-only queries on a run's database, from this process (CPU 1), in autocommit."""

    def __init__(self, db: str, env: dict) -> None:
        self.db = db
        if db == "postgres":
            import psycopg

            self.conn = psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={env['MCP_TEST_PG_NAME']} "
                                        "connect_timeout=5", autocommit=True)
            self.conn.execute("SET idle_session_timeout = 0")  # this session waits between queries
        else:
            self.conn = sqlite3.connect(env["MCP_TEST_SQLITE"], timeout=20, isolation_level=None)

    def one(self, sql: str, *params) -> tuple:
        if self.db == "postgres":
            sql = sql.replace("%", "%%").replace("?", "%s")
        return self.conn.execute(sql, params).fetchone()

    def moment(self, when: datetime):
        """A parameter comparable with a DateTimeField: Django keeps naive UTC text in SQLite."""
        if self.db == "postgres":
            return when
        return when.astimezone(timezone.utc).replace(tzinfo=None).isoformat(" ", timespec="microseconds")

    @staticmethod
    def parse(value) -> datetime | None:
        if value is None or isinstance(value, datetime):
            return value
        return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)

    def unfinished(self, since: datetime) -> tuple[int, int]:
        """
        Rows made since ``since`` without a queue id (the in-process server's, or a durable
        creation that never got that far) still active: (claimed by their work, never claimed).
        """
        claimed, unclaimed = self.one(
            f"SELECT sum(CASE WHEN started IS NULL THEN 0 ELSE 1 END), "
            f"sum(CASE WHEN started IS NULL THEN 1 ELSE 0 END) "
            f"FROM {TASK_TABLE} WHERE status IN {ACTIVE} AND backend_id = '' AND created >= ?", self.moment(since))
        return int(claimed or 0), int(unclaimed or 0)

    def never_enqueued(self, since: datetime) -> int:
        """Durable creations since ``since`` whose work is in no queue row: they will never run."""
        text = "q.args_kwargs::text" if self.db == "postgres" else "q.args_kwargs"
        return self.one(
            f"SELECT count(*) FROM {TASK_TABLE} t WHERE t.status IN {ACTIVE} AND t.backend_id = '' AND t.created >= ? "
            f"AND NOT EXISTS (SELECT 1 FROM {QUEUE_TABLE} q WHERE {text} LIKE '%' || t.id || '%')",
            self.moment(since))[0]

    def commits(self) -> int:
        """PostgreSQL: transactions committed in this database so far (``pg_stat_database.xact_commit``)."""
        return self.one("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")[0]

    def queued(self) -> int:
        return self.one(f"SELECT count(*) FROM {TASK_TABLE} WHERE status IN {ACTIVE} AND backend_id <> ''")[0]

    def trim_queue(self, keep: int) -> int:
        """
        Leave only the first ``keep`` entries ready in the queue (the worker's order), the rest
        deleted, and on PostgreSQL vacuum the table: a short queue, as a deployment whose workers
        keep up has it, not one behind a deep backlog's dead entries. Returns how many are ready.
        """
        self.one(f"DELETE FROM {QUEUE_TABLE} WHERE status = 'READY' AND id NOT IN (SELECT id FROM {QUEUE_TABLE} "
                 f"WHERE status = 'READY' ORDER BY priority DESC, run_after, enqueued_at LIMIT ?) RETURNING 1", keep)
        if self.db == "postgres":
            self.conn.execute(f"VACUUM ANALYZE {QUEUE_TABLE}")
            self.conn.execute(f"VACUUM ANALYZE {TASK_TABLE}")
        return self.one(f"SELECT count(*) FROM {QUEUE_TABLE} WHERE status = 'READY'")[0]

    def drained(self, since: datetime) -> tuple[int, int, datetime | None, datetime | None]:
        """(completed, other statuses, first start, last finish) of the tasks started since ``since``."""
        done, other, first, last = self.one(
            f"SELECT sum(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), "
            f"sum(CASE WHEN status <> 'completed' THEN 1 ELSE 0 END), min(started), max(finished) "
            f"FROM {TASK_TABLE} WHERE started >= ?", self.moment(since))
        return int(done or 0), int(other or 0), self.parse(first), self.parse(last)

    def sessions(self) -> int:
        """PostgreSQL: the connections ever opened to this database (``pg_stat_database.sessions``)."""
        return self.one("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")[0]

    def close(self) -> None:
        self.conn.close()


@dataclass
class Drain:
    db: str
    backlog: int  # queued tasks before the worker started
    completed: int
    other: int  # tasks the worker ended otherwise (failed, still working)
    seconds: float  # first claim to last finish, from the rows
    cpu_ms_per_task: float | None  # the worker's CPU for the drain minus an empty run's, per task
    exit_code: int
    wall: float  # the worker process's whole life, start-up included
    commits_per_task: float | None = None  # PostgreSQL: transactions committed per task completed
    connections_per_task: float | None = None  # PostgreSQL: connections the worker opened per task
    most_connections: int | None = None  # PostgreSQL: most connections open to the database at once meanwhile

    @property
    def rate(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0


def run_worker(env: dict, max_tasks: int | None, timeout: float) -> tuple[int, float, float]:
    """
    ``python -m django db_worker --batch`` on CPU 0 until the queue is empty (or ``max_tasks`` ran):
    (exit code, CPU seconds from its rusage, wall seconds).
    """
    command = [sys.executable, "-m", "django", "db_worker", "--no-reload", "--no-startup-delay",
               "--interval", "0.05", "--batch", *(["--max-tasks", str(max_tasks)] if max_tasks else [])]
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    fd, _name = tempfile.mkstemp(prefix="db_worker-", suffix=".log", dir=LOG_DIR)
    started = time.monotonic()
    with os.fdopen(fd, "wb") as log:
        proc = subprocess.Popen(pinned(command, SERVER_CPU), cwd=ROOT, env=server_env(env), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True)
    deadline = started + timeout
    while True:
        # wait4 rather than Popen.wait: the child's own rusage is its CPU time (taskset execs it).
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime, time.monotonic() - started
        if time.monotonic() > deadline:
            os.killpg(proc.pid, 9)
            _pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return -9, usage.ru_utime + usage.ru_stime, time.monotonic() - started
        time.sleep(0.05)


def drain(db: str, env: dict, rows: Rows, tasks: int, empty_cpu: float, log=print, *, backlog: int | None = None,
          label: str = "") -> Drain:
    backlog = rows.queued() if backlog is None else backlog
    wanted = min(backlog, tasks)
    since = datetime.now(timezone.utc)
    log(f"  draining {wanted:,} of {backlog:,} queued tasks on {db} with one db_worker (CPU 0){label}")
    postgres = db == "postgres"
    commits, sessions = (rows.commits(), rows.sessions()) if postgres else (None, None)
    with Sampler(env["MCP_TEST_PG_NAME"]) if postgres else contextlib.nullcontext() as sampler:
        code, cpu, wall = run_worker(env, wanted, timeout=60 + wanted / 5)
    done, other, first, last = rows.drained(since)
    seconds = (last - first).total_seconds() if first and last else 0.0
    per_task = (cpu - empty_cpu) / done * 1000 if done else None
    result = Drain(f"{db}{' short' if label else ''}", backlog, done, other, seconds, per_task, code, wall)
    if postgres and done:
        time.sleep(1.1)  # the worker's statistics reach pg_stat_database when it exits; this is for ours
        result.commits_per_task = (rows.commits() - commits) / done
        result.connections_per_task = (rows.sessions() - sessions) / done
        result.most_connections = sampler.ours
    return result


def drain_layer() -> dict:
    """
    The drains' channel layer: channels_redis when 127.0.0.1:6379 answers, as a deployment whose
    workers announce tasks to web workers has it (each task's end is published there); else the
    in-memory layer, which reaches no other process.
    """
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return {}
    return {"MCP_TEST_CHANNEL_LAYER": "redis", "MCP_TEST_REDIS_PREFIX": f"bench_tasks_{os.getpid()}"}


FLOOR_PATH = "benchmarks.noop_task.noop"
FLOOR_PRIORITY = 50  # ahead of the MCP tasks left in the queue, so the worker takes these first


def floor_drain(db: str, env: dict, rows: Rows, tasks: int, empty_cpu: float, log=print,
                name: str | None = None) -> Drain | None:
    """
    The same drain of ``tasks`` no-op Django tasks (benchmarks/noop_task.py), queued ahead of the
    MCP tasks still waiting, on the same table: the queue's own cost per task, the drain's baseline.
    """
    code = ("import django; django.setup(); from benchmarks.noop_task import noop; "
            f"task = noop.using(priority={FLOOR_PRIORITY}); [task.enqueue() for _ in range({tasks})]")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), capture_output=True, text=True,
                         timeout=300, check=False)
    if out.returncode != 0:
        log(f"  ! {db}: could not queue the floor's no-op tasks: {out.stderr[-800:]}")
        return None
    since = datetime.now(timezone.utc)
    log(f"  draining {tasks:,} no-op Django tasks on {db} with one db_worker (CPU 0): the queue's floor")
    commits = rows.commits() if db == "postgres" else None
    code, cpu, wall = run_worker(env, tasks, timeout=60 + tasks / 5)
    done, first, last = rows.one(
        f"SELECT sum(CASE WHEN status = 'SUCCESSFUL' THEN 1 ELSE 0 END), min(started_at), max(finished_at) "
        f"FROM {QUEUE_TABLE} WHERE task_path = ? AND started_at >= ?", FLOOR_PATH, rows.moment(since))
    done = int(done or 0)
    first, last = rows.parse(first), rows.parse(last)
    seconds = (last - first).total_seconds() if first and last else 0.0
    result = Drain(f"{name or db} floor", tasks, done, tasks - done, seconds,
                   (cpu - empty_cpu) / done * 1000 if done else None, code, wall)
    if commits is not None and done:
        time.sleep(1.1)
        result.commits_per_task = (rows.commits() - commits) / done
    return result


# --- the run -------------------------------------------------------------------------------------

@dataclass
class Settle:
    """What an in-process creation run left working, and how long its work took to finish."""

    working: int  # active when the run stopped
    seconds: float  # until every task whose work had started was done
    orphans: int = 0  # never claimed: their request was cancelled after the INSERT, before the work started
    unfinished: int = 0  # claimed but still working at the timeout


def settle(rows: Rows, since: datetime, timeout: float = 20.0, orphan_after: float = 2.0) -> Settle:
    """
    Wait until the in-process work of the tasks made since ``since`` is done. A row its work has
    not claimed ``orphan_after`` seconds after the load stopped (the loop is idle by then, and a
    task's work claims it at once) will never be: its creation was cancelled between the INSERT
    and the start of the work (the load generator closed the connection at the end of the run).
    """
    start = time.monotonic()
    claimed, unclaimed = rows.unfinished(since)
    working, done_at = claimed + unclaimed, 0.0
    while time.monotonic() - start < timeout:
        if not claimed and not done_at:
            done_at = time.monotonic() - start
        if not claimed and (not unclaimed or time.monotonic() - start >= orphan_after):
            break
        time.sleep(0.05)
        claimed, unclaimed = rows.unfinished(since)
    return Settle(working, done_at if working else 0.0, unclaimed, claimed)


class Sampler:
    """
    PostgreSQL: the most connections open at once during a timed run, to the run's database and
    to the whole server (``pg_stat_activity``, every 0.1 s, from a thread of this process on CPU 1).
    """

    def __init__(self, dbname: str) -> None:
        self.dbname = dbname
        self.ours = self.all = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self) -> None:
        import psycopg

        with psycopg.connect(pg.ADMIN_DSN, autocommit=True) as conn:
            while not self.stop.is_set():
                ours, every = conn.execute(
                    "SELECT count(*) FILTER (WHERE datname = %s), count(*) FROM pg_stat_activity "
                    "WHERE backend_type = 'client backend'", (self.dbname,)).fetchone()
                self.ours, self.all = max(self.ours, ours), max(self.all, every)
                self.stop.wait(0.1)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def start_servers(args, databases: dict, log=print) -> dict:
    """{(db, kind, mode): (server, spec)} for the modes that answer their check."""
    points = {}
    for db, env in databases.items():
        for kind in args.kinds:
            try:
                plain = Server(kind, "tests.asgi:application", f"tasks-{db}-inprocess", env).start()
                durable = Server(kind, "tests.asgi:application", f"tasks-{db}-durable",
                                 {**env, "MCP_TEST_TASKS": "db"}).start()
            except RuntimeError as exc:
                log(f"  ! {db} {kind}: a server did not start, left out: {exc}")
                continue
            try:
                task_id = completed_task(plain.port)
            except (RuntimeError, OSError, ValueError, KeyError, StopIteration) as exc:
                log(f"  ! {db} {kind}: no completed task to read, {GET} left out: {exc}")
                task_id = None
            specs = {BASELINE: (plain, call_spec(False)), IN_PROCESS: (plain, call_spec(True)),
                     DURABLE: (durable, call_spec(True))}
            if task_id:
                specs[GET] = (plain, get_spec(task_id))
            for mode, (server, spec) in specs.items():
                problem = workload.check(server.port, spec)
                if problem:
                    log(f"  ! {db} {kind} {mode}: wrong answer before timing, left out: {problem}")
                    continue
                points[(db, kind, mode)] = (server, spec)
            log(f"  started {plain} and {durable} (MCP_TEST_TASKS=db)"
                + (f"; tasks/get of {task_id}" if task_id else ""))
    return points


def measure(args, points: dict, rows: dict, databases: dict, generate, log=print) -> tuple[dict, dict, dict]:
    """
    Warm-up, then ``--repeat`` interleaved rounds: ({(db, kind, mode, c): [Result]}, {same: [Settle]},
    {same: [(connections to the run's database, to the server)]} for PostgreSQL).
    """
    results = {key + (c,): [] for key in points for c in args.levels}
    settles: dict = {}
    pg_connections: dict = {}
    fd_counts: dict = {}
    never_run: dict = {}

    def one(db, kind, mode, conns, duration, keep: bool) -> None:
        server, spec = points[(db, kind, mode)]
        since = datetime.now(timezone.utc)
        with (Sampler(databases[db]["MCP_TEST_PG_NAME"]) if db == "postgres" else contextlib.nullcontext()) as sampler:
            r = timed(generate, server, spec, conns, duration)
        fds = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
        left = settle(rows[db], since) if mode == IN_PROCESS else None
        lost = rows[db].never_enqueued(since) if mode == DURABLE else 0
        if not keep:
            return
        if mode == DURABLE:
            never_run.setdefault((db, kind, mode, conns), []).append(lost)
        results[(db, kind, mode, conns)].append(r)
        fd_counts.setdefault((db, kind, mode, conns), []).append(fds)
        if left is not None:
            settles.setdefault((db, kind, mode, conns), []).append(left)
        if sampler is not None:
            pg_connections.setdefault((db, kind, mode, conns), []).append((sampler.ours, sampler.all))
        log(f"  rep {rep}/{args.repeat} {db:8} {kind:7} c={conns:<3} {mode:39} {r.rps:7,.0f} rps  "
            f"p50 {r.p50_ms:6.2f} ms  p99 {r.p99_ms:6.1f} ms  server {r.cpu_us_per_request:5.0f} us/req "
            f"{r.busy:4.0%} busy  {fds} fds"
            + (f"  pg connections max {sampler.ours} ours / {sampler.all} all" if sampler is not None else "")
            + (f"  ({left.working} still working, done {left.seconds:.2f} s later)" if left and left.working else "")
            + (f"; {left.orphans} never started" if left and left.orphans else "")
            + (f"; {left.unfinished} STILL WORKING after 20 s" if left and left.unfinished else "")
            + (f"  {lost} never enqueued" if lost else "")
            + (f"  bad {r.bad} errors {r.errors}" if r.bad or r.errors else ""))

    rep = 0
    warm = min(1.0, args.duration / 2)  # discarded: lazy imports, first queries, database connections
    for db, kind, mode in points:
        one(db, kind, mode, max(args.levels), warm, keep=False)
    # Interleaved: each repetition visits every point once, so drift (thermal, other work on the
    # machine) spreads over all modes instead of biasing whichever ran last.
    for rep in range(1, args.repeat + 1):
        for conns in args.levels:
            for db, kind, mode in points:
                one(db, kind, mode, conns, args.duration, keep=True)
    return results, settles, pg_connections, fd_counts, never_run


def connections_per_request(points: dict, rows: Rows, kind: str, count: int = 100) -> dict[str, float]:
    """
    PostgreSQL: the database connections each mode opens per request, from ``pg_stat_database.sessions``
    around ``count`` requests in a row on one keep-alive connection (untimed; 1.1 s each side for the counter).
    """
    opened = {}
    for mode in MODES:
        if ("postgres", kind, mode) not in points:
            continue
        server, spec = points[("postgres", kind, mode)]
        since = datetime.now(timezone.utc)
        time.sleep(1.1)
        before = rows.sessions()
        client = workload.Client(server.port)
        try:
            for _ in range(count):
                client.send(spec)
        finally:
            client.close()
        if mode == IN_PROCESS:
            settle(rows, since)
        time.sleep(1.1)
        opened[mode] = (rows.sessions() - before) / count
    return opened


# --- the parts of a creation, in process --------------------------------------------------------

PARTS_N = 200
PARTS = (
    ("row + queue entry, durable creation (runner.create_and_start)", "create"),
    ("  of which: INSERT the task row alone (store.create)", "row"),
    ("  of which: enqueue alone (the db backend's enqueue, in_database_thread)", "enqueue"),
    ("SELECT the row by id (store.visible_task: what tasks/get reads)", "select"),
    ("the same SELECT in a fresh ThreadSensitiveContext, as inside a request", "fresh"),
    ("in-process work: runner.run() of one task (claim, call, finish)", "run"),
)


def parts_child(count: int) -> None:
    """
    ``python -m benchmarks.tasks --parts-child N`` (the durable server's environment, pinned to CPU
    0): each part of a creation ``N`` times on one event loop, the way django_mcp.tasks awaits it;
    prints JSON {part: median microseconds}. Outside a request, ``in_database_thread`` runs a query
    on asgiref's one shared thread (SQLite) or the loop's pool (PostgreSQL), whose connections stay
    open. ``fresh`` enters a ``ThreadSensitiveContext`` first, as django_mcp does for every
    request: on SQLite the query then runs on a thread of that request's own, which opens a
    connection of its own; the garbage collector, run (untimed) after each, closes it.
    """
    import asyncio
    import gc

    import django

    django.setup()
    from asgiref.sync import ThreadSensitiveContext
    from django.utils import timezone

    from django_mcp.conf import mcp_settings
    from django_mcp.tasks import runner, store
    from django_mcp.tasks.models import McpTask
    from django_mcp.threads import in_database_thread

    capabilities = {"extensions": {EXTENSION: {}}}
    owner = store.Owner("anonymous")

    def fields() -> dict:
        now = timezone.now()
        return dict(
            id=store.new_task_id(), site="default", tool=TOOL, arguments={"seconds": 0}, owner=owner.key,
            client="", session="", username="", scopes=None, protocol_version=MODERN,
            client_capabilities=capabilities, transport="streamable-http", status=McpTask.WORKING,
            input_answers={}, asked_keys=[], created=now, last_updated=now, ttl_ms=3_600_000,
            expires=store.expiry_for(3_600_000))

    async def new_row() -> McpTask:
        return await store.create(**fields())

    async def main() -> dict[str, float]:
        times: dict[str, list[float]] = {key: [] for _label, key in PARTS}
        clock = time.perf_counter
        enqueue = in_database_thread(runner.work.using(backend=mcp_settings.TASK_BACKEND).enqueue, McpTask)
        await new_row()  # the connection, opened untimed
        for _ in range(count):
            start = clock()
            task = await runner.create_and_start(**fields())
            times["create"].append(clock() - start)
            start = clock()
            await new_row()
            times["row"].append(clock() - start)
            start = clock()
            await enqueue(store.new_task_id())
            times["enqueue"].append(clock() - start)
            start = clock()
            await store.visible_task(task.id, owner)
            times["select"].append(clock() - start)
            start = clock()
            async with ThreadSensitiveContext():
                await store.visible_task(task.id, owner)
            times["fresh"].append(clock() - start)
            gc.collect()
            other = await new_row()
            start = clock()
            await runner.run(other.id)
            times["run"].append(clock() - start)
        return {key: statistics.median(values) * 1e6 for key, values in times.items()}

    print(json.dumps(asyncio.run(main())))


def parts(env: dict, count: int = PARTS_N) -> dict[str, float] | str:
    """Run :func:`parts_child` on CPU 0 with ``env``; {part: median us}, or why not."""
    command = pinned([sys.executable, "-m", "benchmarks.tasks", "--parts-child", str(count)], SERVER_CPU)
    out = subprocess.run(command, cwd=ROOT, env=server_env(env), capture_output=True, text=True, timeout=300,
                         check=False)
    if out.returncode != 0:
        return f"failed ({out.returncode}): {out.stderr[-1500:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- output --------------------------------------------------------------------------------------

def paired(runs: list[loadgen.Result], base: list[loadgen.Result]) -> tuple[float, float]:
    """(req/s ratio, extra CPU us/req) against the baseline, each the median of the rounds' own figures."""
    return (statistics.median(r.rps / b.rps if b.rps else 0.0 for r, b in zip(runs, base)),
            statistics.median(r.cpu_us_per_request - b.cpu_us_per_request for r, b in zip(runs, base)))


def print_table(args, results: dict) -> list[str]:
    print(f"\nMCP tasks throughput, {TOOL} {{\"seconds\": 0}} (median of {args.repeat}; ratio req/s = mode / "
          "baseline of the same database, server and c; +us/req = the mode's server CPU per request - the baseline's)")
    header = (f"{'db':9}{'server':8}{'c':>4}  {'mode':40}{'req/s':>8}{'spread':>8}{'p50 ms':>8}{'p99 ms':>8}"
              f"{'CPU us/req':>11}{'busy':>6}{'ratio req/s':>13}{'+us/req':>9}")
    print(header + "\n" + "-" * len(header))
    summary = []
    for db in args.dbs:
        for kind in args.kinds:
            for conns in args.levels:
                base = results.get((db, kind, BASELINE, conns))
                ratios = []
                for mode in MODES:
                    runs = results.get((db, kind, mode, conns))
                    if not runs:
                        if base or (db, kind, BASELINE, conns) in results:
                            print(f"{db:9}{kind:8}{conns:>4}  {mode:40}{'n/a':>8}")
                        continue
                    rps = median_of(runs, lambda r: r.rps)
                    spread = ((max(r.rps for r in runs) - min(r.rps for r in runs)) / 2 / rps
                              if rps and len(runs) > 1 else 0)
                    compared = ""
                    if mode != BASELINE and base:
                        ratio, extra = paired(runs, base)
                        compared = f"{ratio:>12.2f}x{extra:>+9.0f}"
                        ratios.append(f"{mode.split(',')[0] if mode == GET else mode.replace('task created, ', '')} "
                                      f"{ratio:.2f}x")
                    print(f"{db:9}{kind:8}{conns:>4}  {mode:40}{rps:>8,.0f}"
                          f"{'±' + format(spread, '.0%') if spread else '':>8}"
                          f"{median_of(runs, lambda r: r.p50_ms):>8.2f}{median_of(runs, lambda r: r.p99_ms):>8.1f}"
                          f"{median_of(runs, lambda r: r.cpu_us_per_request):>11.0f}"
                          f"{median_of(runs, lambda r: r.busy):>6.0%}{compared}")
                if ratios:
                    summary.append(f"  {db:9}{kind:8}c={conns:<3} " + "   ".join(ratios))
    return summary


def print_settles(args, settles: dict, never_run: dict) -> None:
    print("\nIn-process runner: tasks still working when a timed run stopped (their work shares the server's loop), "
          "how long they took to finish, and rows whose work never started (\"never started\": the load generator "
          "closed its connections at the end of the run, which cancels a request in flight; one cancelled after "
          "its INSERT and before starting the work leaves a row that stays working)")
    for db in args.dbs:
        for kind in args.kinds:
            for conns in args.levels:
                found = settles.get((db, kind, IN_PROCESS, conns))
                if found:
                    print(f"  {db:9}{kind:8}c={conns:<3} " + "; ".join(
                        f"{s.working} working, done {s.seconds:.2f} s later"
                        + (f"; {s.orphans} never started" if s.orphans else "")
                        + (f"; {s.unfinished} still working after 20 s" if s.unfinished else "") for s in found))
    found = {key: sum(counts) for key, counts in never_run.items() if sum(counts)}
    if found:
        print("Durable creations left with no queue row (cancelled the same way, before the enqueue): "
              + "; ".join(f"{db} {kind} c={conns}: {count}" for (db, kind, _mode, conns), count in found.items()))


def print_drains(drains: list[Drain], results: dict, args) -> None:
    print("\ndb_worker drain: one `db_worker --batch` (CPU 0, servers idle) on the durable creations' backlog; "
          "tasks/s = completed / (last finished - first started), from the rows; CPU ms/task = the worker's CPU "
          "minus an empty run's (start-up, one look at the queue), per task; 'floor': as many no-op Django "
          "tasks drained the same way, queued ahead of what is left of that backlog (the queue's own cost)")
    top = max(args.levels)
    floors = {d.db.removesuffix(" floor"): d for d in drains if d.db.endswith(" floor")}
    width = max(len(d.db) for d in drains) + 2 if drains else 9
    for d in drains:
        creations = [median_of(results[key], lambda r: r.rps) for key in results
                     if key[0] == d.db and key[2] == DURABLE and key[3] == top and results[key]]
        versus = (f"; {d.rate / max(creations):.2f}x the fastest durable creation rate at c={top}"
                  if creations and d.rate else "")
        floor = floors.get(d.db)
        if floor is not None and floor.rate and d.rate:
            versus += f"; {d.rate / floor.rate:.2f}x the floor's rate"
        cpu = f", {d.cpu_ms_per_task:.2f} CPU ms/task" if d.cpu_ms_per_task is not None else ""
        if d.commits_per_task is not None:
            cpu += f", {d.commits_per_task:.1f} commits/task"
        if d.connections_per_task is not None:
            cpu += (f", {d.connections_per_task:.2f} new connections/task "
                    f"(at most {d.most_connections} open at once)")
        print(f"  {d.db:{width}}{d.completed:,} completed of {d.backlog:,} queued in {d.seconds:.2f} s: "
              f"{d.rate:,.0f} tasks/s{cpu}{versus}" + (f"; {d.other} ended otherwise" if d.other else "")
              + (f"; worker exit {d.exit_code}" if d.exit_code else "") + f" (worker alive {d.wall:.1f} s)")


def commit() -> str:
    def git(*command: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *command], capture_output=True, text=True, check=False)
        return done.stdout.strip()
    dirty = git("status", "--short", "django_mcp")
    return (git("log", "-1", "--format=%h") or "?") + (" + uncommitted changes in django_mcp" if dirty else "")


def main() -> int:
    args = parse_args()
    if args.parts_child:
        parts_child(args.parts_child)
        return 0
    started = time.monotonic()
    if "uvicorn" in args.kinds and not have_uvicorn():
        print("  uvicorn not installed, skipped")
        args.kinds.remove("uvicorn")
    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-tasks-"))
    (workdir / f"{SETTINGS_MODULE}.py").write_text(SETTINGS.format(limit=args.task_limit))
    common = {"DJANGO_SETTINGS_MODULE": SETTINGS_MODULE, "MCP_TEST_WITHOUT_METRICS": "1",
              "PYTHONPATH": os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")]))}
    databases: dict[str, dict] = {}
    rows: dict[str, Rows] = {}
    drains: list[Drain] = []
    results, settles, opened, pg_connections, fd_counts, never_run = {}, {}, {}, {}, {}, {}
    max_connections = "?"
    part_times: dict = {}
    print(f"django_mcp MCP tasks benchmark: {args.repeat} repetition(s) x {args.duration:g} s per point, "
          f"concurrency {args.levels}, {TOOL} {{\"seconds\": 0}}")
    try:
        with contextlib.ExitStack() as stack:
            if "sqlite" in args.dbs:
                databases["sqlite"] = {**common, "MCP_TEST_SQLITE": str(workdir / "tasks.sqlite3")}
                print(f"  migrating a fresh SQLite database: {databases['sqlite']['MCP_TEST_SQLITE']}")
                migrate(databases["sqlite"])
            if "postgres" in args.dbs:
                pg_env = stack.enter_context(pg.fresh_database())
                if pg_env is None:
                    args.dbs.remove("postgres")
                else:
                    databases["postgres"] = {**common, **pg_env}
                    if args.pg_idle_timeout:
                        import psycopg
                        from psycopg import sql

                        with psycopg.connect(pg.ADMIN_DSN, autocommit=True) as conn:
                            conn.execute(sql.SQL("ALTER DATABASE {} SET idle_session_timeout = {}").format(
                                sql.Identifier(pg_env["MCP_TEST_PG_NAME"]), sql.Literal(f"{args.pg_idle_timeout}ms")))
                        print(f"  PostgreSQL: idle_session_timeout = {args.pg_idle_timeout} ms on "
                              f"{pg_env['MCP_TEST_PG_NAME']}: connections left idle that long are closed by the server")
            setup_process()
            name, generate = generator(args)
            print(f"  cpus: {os.cpu_count()}; pinning: " + ("servers and db_worker CPU 0, load CPU 1 (taskset)"
                                                           if can_pin() else "none (taskset or a second CPU missing)"))
            print(f"  load generator: {name}")
            print(f"  load average before: {os.getloadavg()[0]:.2f}" + (
                "  (other work is running on this machine: req/s will be noisy; CPU us/req is steadier)"
                if os.getloadavg()[0] > 1.0 else ""))
            print(f"  servers: {', '.join(args.kinds)}; databases: {', '.join(args.dbs)}; "
                  f"MAX_TASKS_PER_USER={args.task_limit}")
            print(f"  commit {commit()}; versions: " + ", ".join(
                f"{dist} {_version(dist)}" for dist in ("django", "channels", "daphne", "uvicorn", "h11", "httptools",
                                                        "uvloop", "django-tasks", "django-tasks-db", "psycopg"))
                  + f", python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}")
            rows = {db: Rows(db, env) for db, env in databases.items()}
            if "postgres" in rows:
                max_connections = rows["postgres"].one("SHOW max_connections")[0]
                version = rows["postgres"].one("SELECT version()")[0].split(" on ")[0]
                print(f"  {version}, max_connections {max_connections}")
            empty_cpu = {}
            for db, env in databases.items():
                code, cpu, wall = run_worker({**env, "MCP_TEST_TASKS": "db"}, None, timeout=60)
                empty_cpu[db] = cpu
                print(f"  {db}: an empty db_worker --batch run: exit {code}, {cpu * 1000:.0f} ms CPU, {wall:.1f} s")
            points = start_servers(args, databases)
            results, settles, pg_connections, fd_counts, never_run = measure(args, points, rows, databases, generate)
            if "postgres" in rows and args.kinds:
                opened = connections_per_request(points, rows["postgres"], args.kinds[-1])
            for server in {id(s): s for s, _ in points.values()}.values():
                server.stop()
            if args.drain_tasks > 0:
                layer = drain_layer()
                print(f"  the drains' channel layer: {'channels_redis on 127.0.0.1:6379' if layer else 'in-memory'} "
                      "(where a worker announces each task's end)")
                for db, env in databases.items():
                    env = {**env, **layer}
                    made = drain(db, {**env, "MCP_TEST_TASKS": "db"}, rows[db], args.drain_tasks, empty_cpu[db])
                    drains.append(made)
                    floor = floor_drain(db, {**env, "MCP_TEST_TASKS": "db"}, rows[db], made.completed or
                                        args.drain_tasks, empty_cpu[db])
                    if floor is not None:
                        drains.append(floor)
                    # Again on a short queue: the creations' backlog above is as deep as the timed
                    # runs were fast (tens of thousands on a fast machine), and django-tasks-db's
                    # claim slows with the dead entries a deep queue leaves until a vacuum.
                    ready = rows[db].trim_queue(args.drain_tasks)
                    made = drain(db, {**env, "MCP_TEST_TASKS": "db"}, rows[db], args.drain_tasks, empty_cpu[db],
                                 backlog=ready, label=", on a short queue (the rest deleted, vacuumed)")
                    drains.append(made)
                    floor = floor_drain(db, {**env, "MCP_TEST_TASKS": "db"}, rows[db], made.completed or
                                        args.drain_tasks, empty_cpu[db], name=f"{db} short")
                    if floor is not None:
                        drains.append(floor)
            if not args.no_parts:
                for db, env in databases.items():
                    print(f"  {db}: timing a creation's parts in process ({PARTS_N} times each, CPU 0)")
                    part_times[db] = parts({**env, "MCP_TEST_TASKS": "db"})
            for db_rows in rows.values():
                db_rows.close()
    finally:
        stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    summary = print_table(args, results)
    print("\nRatios against the baseline (req/s)")
    print("\n".join(summary))
    print_settles(args, settles, never_run)
    if drains:
        print_drains(drains, results, args)
    if part_times:
        print(f"\nThe parts of a creation, in process (one asyncio loop on CPU 0, each query as django_mcp.tasks "
              f"awaits it; median us of {PARTS_N}; wall time, the database server's included)")
        dbs = list(part_times)
        print(f"  {'part':78}" + "".join(f"{db:>10}" for db in dbs))
        for label, key in PARTS:
            print(f"  {label:78}" + "".join(f"{part_times[db][key]:>10.0f}" if isinstance(part_times[db], dict)
                                            else f"{'n/a':>10}" for db in dbs))
        for db, found in part_times.items():
            if not isinstance(found, dict):
                print(f"  ! {db}: {found}")
    if fd_counts:
        print("\nServer file descriptors open right after each timed run (/proc/PID/fd; a database connection "
              "left to the garbage collector keeps its socket, or SQLite's three files, until a collection)")
        for (db, kind, mode, conns), found in fd_counts.items():
            print(f"  {db:9}{kind:8}c={conns:<3} {mode:40}" + "; ".join(f"{n:5}" for n in found))
    if pg_connections:
        print("\nPostgreSQL connections open at once during each timed run, at most (pg_stat_activity every 0.1 s): "
              "to the run's database / to the whole server, whoever made them; max_connections "
              f"{max_connections}")
        for (db, kind, mode, conns), found in pg_connections.items():
            print(f"  {kind:8}c={conns:<3} {mode:40}" + "; ".join(f"{ours:4} / {every:4}" for ours, every in found))
    if opened:
        print(f"\nPostgreSQL connections opened per request (pg_stat_database.sessions around 100 requests in a row, "
              f"{args.kinds[-1]}; the in-process row includes its tasks' work)")
        for mode, per_request in opened.items():
            print(f"  {mode:40}{per_request:6.2f}")
    for (db, kind, mode, conns), runs in results.items():
        busy = median_of(runs, lambda r: r.busy) if runs else 1.0
        if mode == BASELINE and conns > 1 and busy < 0.85:
            print(f"  ! {db} {kind} baseline at c={conns} used only {busy:.0%} of its core: something else limited it "
                  "(the load generator, another process), so the req/s ratios flatter the modes")
        for r in runs:
            if r.bad or r.errors:
                print(f"  ! {db} {kind} {mode} c={conns}: {r.bad} wrong answers, {r.errors} socket errors")
    print(f"\ndone in {time.monotonic() - started:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
