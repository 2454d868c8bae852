"""
Real daphne servers in subprocesses, for tests that talk to django_mcp over sockets.

Independent of pytest, so it also works from a shell or a script::

    from tests.live import LiveServer, migrate

    env = {"MCP_TEST_SQLITE": "/tmp/x.sqlite3"}
    migrate(env)
    with LiveServer(env=env) as server:
        print(server.mcp_url)          # http://127.0.0.1:PORT/mcp

Every server runs ``python -m daphne -b 127.0.0.1 -p PORT <app>`` with the current interpreter, from
the repository root, in its own process group; its stdout and stderr go to a temporary file that is
kept after the server stops (``server.log_path``) so a failing test can be debugged.

The environment of the child is ``os.environ`` with ``DJANGO_SETTINGS_MODULE`` defaulting to
``tests.settings`` (the parent's value is *not* inherited, because pytest-django or a shell may have
set another one), updated with the caller's ``env``; a value of ``None`` in ``env`` removes that
variable. Typical overrides: ``MCP_TEST_SQLITE``, ``MCP_TEST_DATABASE=postgres``,
``MCP_TEST_CHANNEL_LAYER=redis``, ``MCP_TEST_REDIS_PREFIX``, ``MCP_TEST_PG_NAME``.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self


__all__ = ["ROOT", "LiveServer", "LiveServerError", "free_port", "fresh_sqlite_env", "migrate", "server_env"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SETTINGS = "tests.settings"
DEFAULT_APP = "tests.asgi:application"
HOST = "127.0.0.1"

_LOG_DIR = Path(tempfile.gettempdir()) / "django-mcp-live"


class LiveServerError(RuntimeError):
    """A live server did not start, or a management command failed."""


def server_env(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment for a child process: ``os.environ`` + ``tests.settings`` + ``env``."""
    result = dict(os.environ)
    result["DJANGO_SETTINGS_MODULE"] = DEFAULT_SETTINGS
    result["PYTHONUNBUFFERED"] = "1"
    for key, value in (env or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = str(value)
    return result


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no output captured)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"


def migrate(env: Mapping[str, str | None] | None = None, *, timeout: float = 300) -> str:
    """
    Run ``python -m django migrate --noinput`` (settings ``tests.settings`` unless ``env`` says
    otherwise) so a test can prepare the database before starting servers. Returns the output;
    raises ``LiveServerError`` with the output if the command fails.
    """
    child_env = server_env(env)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "django", "migrate", "--noinput"],
            check=False,
            cwd=ROOT,
            env=child_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise LiveServerError(f"migrate timed out after {timeout:g} s:\n{exc.output or ''}") from exc
    if result.returncode != 0:
        raise LiveServerError(
            f"migrate failed (exit {result.returncode}, DJANGO_SETTINGS_MODULE="
            f"{child_env['DJANGO_SETTINGS_MODULE']}):\n{result.stdout[-4000:]}"
        )
    return result.stdout


def fresh_sqlite_env(folder: Path) -> dict[str, str]:
    """The environment of live servers on a new, migrated SQLite file in ``folder`` and the in-memory layer."""
    env = {"DJANGO_SETTINGS_MODULE": DEFAULT_SETTINGS, "MCP_TEST_DATABASE": "sqlite",
           "MCP_TEST_SQLITE": str(folder / "live.sqlite3"), "MCP_TEST_CHANNEL_LAYER": "memory"}
    migrate(env)
    return env


_RUNNING: set[LiveServer] = set()


@atexit.register
def _stop_leftovers() -> None:  # pragma: no cover - only matters after a crash or Ctrl-C
    for server in list(_RUNNING):
        server.stop()


class LiveServer:
    """
    A daphne server in a subprocess. Use as a context manager, or call ``start()`` / ``stop()``.

    ``app`` is the ASGI application path (default ``tests.asgi:application``), ``env`` the
    environment overrides, ``port`` a fixed port (default: a free one), ``startup_timeout`` how long
    to wait for the port to accept connections, ``args`` extra daphne arguments.
    """

    def __init__(
        self,
        app: str = DEFAULT_APP,
        env: Mapping[str, str | None] | None = None,
        *,
        port: int | None = None,
        startup_timeout: float = 30.0,
        args: list[str] | tuple[str, ...] = (),
        name: str = "daphne",
    ) -> None:
        self.app = app
        self.env = dict(env or {})
        self.host = HOST
        self._fixed_port = port
        self.port: int = port or 0
        self.startup_timeout = startup_timeout
        self.args = list(args)
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    # --- addresses -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    @property
    def host_header(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    # Older name some callers may expect.
    @property
    def stderr_path(self) -> Path | None:
        return self.log_path

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<LiveServer {self.name} {self.url} {state} log={self.log_path}>"

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> Self:
        if self.running:
            raise LiveServerError(f"{self!r} is already running")
        # A free port can be taken between picking it and daphne binding it; retry a few times.
        attempts = 1 if self._fixed_port else 3
        for attempt in range(1, attempts + 1):
            self.port = self._fixed_port or free_port(self.host)
            try:
                self._start_once()
                return self
            except LiveServerError as exc:
                if attempt == attempts or "Address already in use" not in str(exc):
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> None:
        _LOG_DIR.mkdir(parents=True, exist_ok=True)
        fd, log_name = tempfile.mkstemp(prefix=f"{self.name}-{self.port}-", suffix=".log", dir=_LOG_DIR)
        self.log_path = Path(log_name)
        command = self.command()
        with os.fdopen(fd, "wb") as log:
            log.write(("$ " + " ".join(command) + "\n").encode())
            log.flush()
            self.proc = subprocess.Popen(
                command,
                cwd=self.working_directory(),
                env=self.child_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # own process group: stop() signals the whole group
            )
        _RUNNING.add(self)

        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self._reap()
                raise LiveServerError(
                    f"daphne ({self.app}) exited with {code} before listening on {self.url}; "
                    f"log {self.log_path}:\n{_tail(self.log_path)}"
                )
            # The port alone is not proof (another process may hold a fixed port): daphne also logs
            # "Listening on TCP address HOST:PORT" once *it* listens (unless its verbosity was lowered).
            if _port_open(self.host, self.port) and (self._quiet or self._listening_logged()):
                return
            time.sleep(0.1)
        self.stop()
        raise LiveServerError(
            f"daphne ({self.app}) did not accept connections on {self.url} within "
            f"{self.startup_timeout:g} s; log {self.log_path}:\n{_tail(self.log_path)}"
        )

    # Overridden by servers of other projects (tests/packaging serves an installed package).

    def command(self) -> list[str]:
        """The daphne command line: this interpreter's daphne, serving ``app``."""
        return [sys.executable, "-m", "daphne", "-b", self.host, "-p", str(self.port), *self.args, self.app]

    def working_directory(self) -> Path:
        """Where the server runs: the checkout."""
        return ROOT

    def child_env(self) -> dict[str, str]:
        """The server's environment: ``server_env(env)``."""
        return server_env(self.env)

    @property
    def _quiet(self) -> bool:
        return any(arg in ("-v", "--verbosity") or arg.startswith("--verbosity=") for arg in self.args)

    def _listening_logged(self) -> bool:
        return f"Listening on TCP address {self.host}:{self.port}" in self.log_text()

    def log_text(self) -> str:
        """Everything the server wrote so far ("" before it starts)."""
        try:
            return self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return ""

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGTERM the process group, SIGKILL it after ``timeout`` seconds. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.proc.wait(timeout=timeout)
        # Children that outlived daphne (none expected) go too.
        self._signal_group(signal.SIGKILL)
        return self._reap()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the server's process group without waiting (e.g. to simulate a crashed worker)."""
        if self.proc is not None and self.proc.poll() is None:
            self._signal_group(sig)

    def restart(self) -> Self:
        """Stop and start again on the same port."""
        self.stop()
        self._fixed_port = self.port
        return self.start()

    def _signal_group(self, sig: int) -> None:
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap(self) -> int | None:
        code = None
        if self.proc is not None:
            code = self.proc.poll()
        _RUNNING.discard(self)
        return code

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's stdout/stderr."""
        return _tail(self.log_path, lines) if self.log_path else "(not started)"

    # --- context manager -------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class GunicornServer(LiveServer):
    """
    A gunicorn server of ``tests.wsgi:application`` (the plain view at ``/mcp``): ``workers``
    processes of ``worker_class`` (``sync`` or ``gthread``, with ``threads`` each).
    """

    def __init__(self, app: str = "tests.wsgi:application", env: Mapping[str, str | None] | None = None, *,
                 workers: int = 2, worker_class: str = "sync", threads: int = 4, **options: Any) -> None:
        options.setdefault("name", f"gunicorn-{worker_class}")
        super().__init__(app, env, **options)
        self.workers = workers
        self.worker_class = worker_class
        self.threads = threads

    def command(self) -> list[str]:
        command = [sys.executable, "-m", "gunicorn", "--bind", f"{self.host}:{self.port}",
                   "--workers", str(self.workers), "--worker-class", self.worker_class,
                   "--graceful-timeout", "5", *self.args, self.app]
        if self.worker_class == "gthread":
            command[-1:-1] = ["--threads", str(self.threads)]
        return command

    def _listening_logged(self) -> bool:
        text = self.log_text()
        return f"Listening at: http://{self.host}:{self.port}" in text and "Booting worker" in text

    def start(self) -> Self:
        """
        Start, then wait until a worker answers: gunicorn listens before its workers have loaded
        the project (without ``--preload``), and a loaded machine may take longer than a client's
        timeout to load it.
        """
        super().start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                urllib.request.urlopen(self.url + "/mcp", timeout=2).close()
                return self
            except urllib.error.HTTPError:
                return self  # any answer (the view's 405 to a GET) means a worker serves
            except OSError:
                if time.monotonic() > deadline or not self.running:
                    self.stop()
                    raise LiveServerError(f"gunicorn ({self.app}) never answered on {self.url}; log "
                                          f"{self.log_path}:\n{_tail(self.log_path) if self.log_path else ''}")
                time.sleep(0.2)


class UvicornServer(LiveServer):
    """A uvicorn server (httptools, uvloop) of Django's own ASGI handler: the plain view at ``/mcp``, no Channels."""

    def __init__(self, app: str = "tests.django_asgi:application", env: Mapping[str, str | None] | None = None,
                 *, workers: int = 1, **options: Any) -> None:
        options.setdefault("name", "uvicorn")
        super().__init__(app, env, **options)
        self.workers = workers

    def command(self) -> list[str]:
        return [sys.executable, "-m", "uvicorn", "--host", self.host, "--port", str(self.port), "--http", "httptools",
                "--loop", "uvloop", "--workers", str(self.workers), "--lifespan", "off", "--no-access-log",
                *self.args, self.app]

    def _listening_logged(self) -> bool:
        return f"Uvicorn running on http://{self.host}:{self.port}" in self.log_text()


@contextmanager
def all_started(servers: Mapping[str, LiveServer]) -> Iterator[Mapping[str, LiveServer]]:
    """Start ``servers`` one after the other; stop every one that started, whatever happens."""
    started: list[LiveServer] = []
    try:
        for server in servers.values():
            started.append(server.start())
        yield servers
    finally:
        for server in started:
            server.stop()
