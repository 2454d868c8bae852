"""
A real daphne server of the project for tests that want sockets (another client, a browser, a
proxy): :class:`LiveMcpServer`, and the pytest fixture ``live_mcp_server`` built on it.

The server runs in a child process started with ``spawn`` (a fresh interpreter, never a fork of
a test process's threads), serving the project's ``ASGI_APPLICATION`` on the test database: the
child is told the test databases' names, so it needs databases another process can open —
PostgreSQL and the like, or SQLite in a file (``DATABASES[...]["TEST"]["NAME"]``), not SQLite's
in-memory test database. As with Django's ``LiveServerTestCase``, tests that use it see what
the server writes and the server sees what they commit: ``transactional_db``, or a
``TransactionTestCase``.
"""

from __future__ import annotations

import functools
import multiprocessing
from typing import Any, Self

from daphne.testing import DaphneProcess
from django.core.exceptions import ImproperlyConfigured

HOST = "127.0.0.1"
START_TIMEOUT = 60.0


def _application() -> Any:
    """The project's ASGI application, in the child (module level: ``spawn`` pickles it by name)."""
    import django

    django.setup(set_prefix=False)
    from .application import project_application

    return project_application()


def _use_test_databases(host: str, names: dict[str, str]) -> None:
    """In the child: the parent's test databases, and its host allowed."""
    from django.conf import settings
    from django.db import connections

    for alias, name in names.items():
        settings.DATABASES[alias]["NAME"] = name
        connections[alias].settings_dict["NAME"] = name
    if "*" not in settings.ALLOWED_HOSTS and host not in settings.ALLOWED_HOSTS:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, host]


def _test_database_names() -> dict[str, str]:
    from django.db import connections

    names = {}
    for connection in connections.all(initialized_only=False):
        if connection.vendor == "sqlite" and connection.is_in_memory_db():
            raise ImproperlyConfigured(
                f"live_mcp_server needs a test database another process can open, and DATABASES"
                f"[{connection.alias!r}] is SQLite in memory: give it a file, "
                f'DATABASES[{connection.alias!r}]["TEST"] = {{"NAME": "test_db.sqlite3"}}, or use PostgreSQL.')
        names[connection.alias] = connection.settings_dict["NAME"]
    return names


def _spawn_popen(process_obj: Any) -> Any:
    return multiprocessing.get_context("spawn").Process._Popen(process_obj)


class SpawnedDaphneProcess(DaphneProcess):
    """
    daphne's own test server process (``daphne.testing.DaphneProcess``, as Channels' live server
    uses it) started with ``spawn``, its shared values made with spawn's context; the child finds
    this class by its name.
    """

    _Popen = staticmethod(_spawn_popen)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        spawn = multiprocessing.get_context("spawn")
        self.port, self.ready, self.errors = spawn.Value("i", 0), spawn.Event(), spawn.Queue()


class LiveMcpServer:
    """
    daphne serving the project on a free port of 127.0.0.1 in a child process, until :meth:`stop`
    (or the end of a ``with`` block). ``url`` is its address and ``mcp_url`` its MCP endpoint.
    """

    def __init__(self, host: str = HOST) -> None:
        self.host = host
        self.process: Any = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def mcp_url(self) -> str:
        from ..conf import mcp_settings

        return f"{self.url}/{mcp_settings.MCP_PATH.strip('/')}"

    def start(self) -> Self:
        names = _test_database_names()
        self.process = SpawnedDaphneProcess(self.host, _application,
                                            setup=functools.partial(_use_test_databases, self.host, names))
        self.process.start()
        if not self.process.ready.wait(timeout=START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"The live MCP server did not start within {START_TIMEOUT:g} s")
        if not self.process.is_alive() or not self.process.port.value:
            error = self.process.errors.get(timeout=5) if not self.process.errors.empty() else None
            self.stop()
            raise RuntimeError(f"The live MCP server stopped at start: {error[1] if error else 'no error reported'}")
        self.port = self.process.port.value
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(10)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
