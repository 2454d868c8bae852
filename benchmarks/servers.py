"""
Starting and stopping the ASGI servers under test, pinned to one core, and reading their memory.

Every server is a child process in its own process group, started as
``taskset -c 0 python -m daphne|uvicorn ...`` from the repository root, so that it and every thread
it later starts (the ``sync_to_async`` pool) share CPU 0 while the load generator runs on CPU 1.
All servers bind 127.0.0.1 on a port picked free just before; ``stop_all()`` runs at exit too, so
no server outlives the script, even after Ctrl-C or an exception.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.live import ROOT, free_port, server_env

HOST = "127.0.0.1"
SERVER_CPU = "0"
LOAD_CPU = "1"
LOG_DIR = Path(tempfile.gettempdir()) / "django-mcp-bench"
# WSGI servers (plain_view.py): kind -> gunicorn worker class. One worker process each; a gthread
# worker runs GTHREAD_THREADS threads.
GUNICORN_KINDS = {"gunicorn-sync": "sync", "gunicorn-gthread": "gthread"}
GTHREAD_THREADS = 4

_running: list[Server] = []


# Decided once, at import: run.py later pins itself to the load core, which shrinks its affinity.
_CAN_PIN = shutil.which("taskset") is not None and {0, 1} <= os.sched_getaffinity(0)


def can_pin() -> bool:
    """Pinning needs ``taskset`` and CPUs 0 and 1 to run on."""
    return _CAN_PIN


def pinned(command: list[str], cpu: str) -> list[str]:
    return ["taskset", "-c", cpu, *command] if can_pin() else command


def have_uvicorn() -> bool:
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        return False
    return True


def sdk_version() -> str | None:
    """The installed MCP Python SDK's version (the peer), or None when it is not installed."""
    try:
        return importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return None


class Server:
    """
    One ASGI server process. ``kind`` is ``daphne`` or ``uvicorn`` (or a WSGI server, one of
    ``GUNICORN_KINDS``: a gunicorn master and its one worker); ``app`` an ``module:attr`` path;
    ``env`` the overrides for ``tests.live.server_env`` (``None`` removes a variable);
    ``lifespan`` turns uvicorn's lifespan on, for an app that needs it (the SDK peer).
    """

    def __init__(self, kind: str, app: str, label: str, env: dict[str, str | None] | None = None,
                 lifespan: bool = False) -> None:
        self.kind, self.app, self.label, self.env = kind, app, label, dict(env or {})
        self.lifespan = lifespan
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    def command(self) -> list[str]:
        if self.kind == "daphne":
            # -v 0: no access log (a write to stdout per request would be measured too).
            args = ["-m", "daphne", "-v", "0", "-b", HOST, "-p", str(self.port), self.app]
        elif self.kind in GUNICORN_KINDS:
            # One worker (the master forks it; both inherit the pinning), no access log (gunicorn's
            # default), warnings only, no control socket (gunicorn >= 27 opens one in ~/.gunicorn by
            # default, one path for every server). A sync worker closes the connection after each
            # answer; a gthread worker keeps it alive, as long as uvicorn (below) does.
            worker_class = GUNICORN_KINDS[self.kind]
            args = ["-m", "gunicorn", "--bind", f"{HOST}:{self.port}", "--workers", "1",
                    "--worker-class", worker_class, "--log-level", "warning", "--graceful-timeout", "5",
                    "--keep-alive", "300", "--no-control-socket"]
            if worker_class == "gthread":
                args += ["--threads", str(GTHREAD_THREADS)]
            args.append(self.app)
        else:
            # No lifespan (neither Django nor a bare consumer speaks it; the SDK peer needs it: its
            # lifespan starts the task group that holds its sessions); a long keep-alive
            # timeout so idle connections survive the memory measurement (uvicorn closes them
            # after 5 s by default; daphne never does).
            args = ["-m", "uvicorn", "--host", HOST, "--port", str(self.port),
                    "--lifespan", "on" if self.lifespan else "off", "--no-access-log",
                    "--log-level", "warning", "--timeout-keep-alive", "300", self.app]
        return pinned([sys.executable, *args], SERVER_CPU)

    def start(self, timeout: float = 30.0) -> Server:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.port = free_port(HOST)
        fd, name = tempfile.mkstemp(prefix=f"{self.kind}-{self.label}-", suffix=".log", dir=LOG_DIR)
        self.log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(self.command(), cwd=ROOT, env=server_env(self.env),
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True)
        _running.append(self)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self} exited with {self.proc.returncode}; log {self.log_path}:\n"
                                   f"{self.log_tail()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self} did not listen within {timeout:g} s; log {self.log_path}:\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM the process group; SIGKILL it if it is still there after 5 s."""
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        if self in _running:
            _running.remove(self)

    def rss_kib(self) -> int:
        """Resident set size of the server process (the Python process, not taskset: it execs)."""
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError(f"no VmRSS for {self}")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server so far, all its threads included."""
        assert self.proc is not None
        if self.kind in GUNICORN_KINDS:
            return self._tree_cpu_seconds()
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        # Fields 14 and 15 of stat(5) (utime, stime); fields[0] here is field 3 (state).
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def child_pids(self) -> list[int]:
        """The server process's children (a gunicorn master's workers), from ``/proc``."""
        assert self.proc is not None
        pids: list[int] = []
        for children in Path(f"/proc/{self.proc.pid}/task").glob("*/children"):
            try:
                pids += [int(pid) for pid in children.read_text().split()]
            except OSError:
                continue
        return sorted(set(pids))

    def _tree_cpu_seconds(self) -> float:
        """A gunicorn master's CPU, its reaped workers' (cutime, cstime) and its live workers'."""
        assert self.proc is not None
        total = 0
        for pid, reaped in ((self.proc.pid, True), *((child, False) for child in self.child_pids())):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # a worker that just exited: its CPU moves to the master's cutime
                continue
            total += int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if reaped else 0)
        return total / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except (OSError, TypeError):
            return "(no log)"

    def __str__(self) -> str:
        return f"{self.label} on {self.kind} ({HOST}:{self.port})"


def sdk_peer(kind: str = "uvicorn", env: dict[str, str | None] | None = None, label: str = "sdk") -> Server:
    """The SDK peer (``sdk_asgi.py``), not yet started: no Django settings, lifespan on; ``env`` adds variables."""
    return Server(kind, "benchmarks.sdk_asgi:application", label, {"DJANGO_SETTINGS_MODULE": None, **(env or {})},
                  lifespan=True)


@atexit.register
def stop_all() -> None:
    for server in _running.copy():  # stop() removes the server from the list
        server.stop()
