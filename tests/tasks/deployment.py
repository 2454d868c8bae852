"""
The processes and the database of the durable-task live tests (``test_durable_live.py``,
``test_sweeper_live.py``): the task framework's ``db_worker`` as a process of its own, and
PostgreSQL read directly, to see what the work left there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.live import ROOT, server_env


LOG_DIR = Path(tempfile.gettempdir()) / "django-mcp-live"


class DbWorker:
    """``python -m django db_worker`` as a separate process on the deployment's services."""

    def __init__(self, env: Mapping[str, str], name: str, backend: str) -> None:
        self.env = {**env, "MCP_TEST_PG_APPLICATION": f"db_worker-{name}"[:60]}
        self.name = name
        self.backend = backend
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> DbWorker:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"db-worker-{self.name}-", suffix=".log", dir=LOG_DIR)
        self.log_path = Path(name)
        command = [sys.executable, "-m", "django", "db_worker", "--no-reload", "--no-startup-delay", "--interval",
                   "0.1", "--backend", self.backend, "--worker-id", self.name]
        with os.fdopen(fd, "wb") as log:
            log.write(("$ " + " ".join(command) + "\n").encode())
            log.flush()
            self.proc = subprocess.Popen(command, cwd=ROOT, env=server_env(self.env), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while "Starting worker" not in self.log():
            assert self.proc.poll() is None, f"db_worker exited with {self.proc.returncode}:\n{self.log()}"
            assert time.monotonic() < deadline, f"db_worker did not start:\n{self.log()}"
            time.sleep(0.05)
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL, as the OOM killer or a lost machine would: no chance to finish or record anything."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # graceful: it would finish the task it runs first
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def describe(self) -> str:
        return f"db_worker {self.name} (pid {self.proc.pid if self.proc else '-'}): log {self.log_path}"


class Database:
    """Reads rows straight from PostgreSQL: what the task's work left there."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.name = env["MCP_TEST_PG_NAME"]
        self.dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={self.name} connect_timeout=5"

    def one(self, query: str, *args: Any) -> dict[str, Any] | None:
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(self.dsn, autocommit=True, row_factory=dict_row) as connection:
            return connection.execute(query, args).fetchone()

    def task(self, task_id: str) -> dict[str, Any]:
        row = self.one("SELECT * FROM django_mcp_tasks_mcptask WHERE id = %s", task_id)
        assert row is not None, task_id
        return row

    def work(self, backend_id: str) -> dict[str, Any]:
        """The task framework's own row for the work (django-tasks-db's ``DBTaskResult``)."""
        row = self.one("SELECT * FROM django_tasks_database_dbtaskresult WHERE id = %s", backend_id)
        assert row is not None, backend_id
        return row

    def finished_work(self, backend_id: str, timeout: float = 5.0) -> dict[str, Any]:
        """The framework's row once the work has returned (the db_worker records it after the task's end)."""
        deadline = time.monotonic() + timeout
        while (row := self.work(backend_id))["finished_at"] is None:
            assert time.monotonic() < deadline, f"the work {backend_id} never finished: {row}"
            time.sleep(0.05)
        return row

    def wait_started(self, task_id: str, timeout: float = 10.0) -> dict[str, Any]:
        """The task's row once a db_worker has claimed its work (``started`` set)."""
        deadline = time.monotonic() + timeout
        while (row := self.task(task_id))["started"] is None:
            assert time.monotonic() < deadline, f"the work of task {task_id} never started: {row}"
            time.sleep(0.05)
        return row

    def connections(self, application: str) -> int:
        """How many connections the processes named ``application`` hold to the database."""
        row = self.one("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
                       self.name, application)
        assert row is not None
        return int(row["n"])
