"""
Shared pieces of the multi-worker tests: two daphne processes on one PostgreSQL database and one
Redis channel layer, a third process that publishes the way application code would, and reading
a tool result's text.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.live import ROOT, LiveServer, server_env


@dataclass
class Workers:
    a: LiveServer
    b: LiveServer
    env: Mapping[str, str]

    def describe(self) -> str:
        return (f"worker A: {self.a.url} log {self.a.log_path}\n"
                f"worker B: {self.b.url} log {self.b.log_path}")


# The listen backlog the deployment guide recommends (docs/howto/deployment.md): a restart's
# clients reconnect at once, and a connection the kernel's accept queue has no room for waits for a
# SYN retransmission (1 s, then 3, 7, 15 …). Twisted's default is 50; the kernel caps any value at
# net.core.somaxconn (4096 on current kernels).
BACKLOG = 4096


class DaphneServer(LiveServer):
    """A :class:`~tests.live.LiveServer` with a backlog of ``BACKLOG`` (daphne's endpoint syntax) and no access log."""

    backlog = BACKLOG

    def command(self) -> list[str]:
        endpoint = f"tcp:port={self.port}:interface={self.host}:backlog={self.backlog}"
        return [sys.executable, "-m", "daphne", "-v", "0", "-e", endpoint, *self.args, self.app]

    @property
    def _quiet(self) -> bool:
        return True  # -v 0: daphne does not log that it listens


class UvicornServer(LiveServer):
    """A :class:`~tests.live.LiveServer` served by uvicorn instead of daphne (uvloop and httptools when installed)."""

    backlog = BACKLOG

    def command(self) -> list[str]:
        import importlib.util

        speedups = [*(["--loop", "uvloop"] if importlib.util.find_spec("uvloop") else []),
                    *(["--http", "httptools"] if importlib.util.find_spec("httptools") else [])]
        # A backlog as deep as daphne's is shallow (50): opening thousands of streams at once overflows it.
        return [sys.executable, "-m", "uvicorn", "--host", self.host, "--port", str(self.port),
                "--backlog", str(self.backlog), "--no-access-log", "--timeout-keep-alive", "3600", *speedups,
                *self.args, self.app]

    def _listening_logged(self) -> bool:
        assert self.log_path is not None
        try:
            return "Uvicorn running on" in self.log_path.read_text(errors="replace")
        except OSError:
            return False


@contextmanager
def two_workers(services: Mapping[str, str], *, keepalive: str, prefix: str,
                server: type[LiveServer] = LiveServer) -> Iterator[Workers]:
    """Two server processes (daphne unless ``server`` says otherwise) on the same services, with short keep-alives so waits are checked often."""
    env = {**services, "MCP_TEST_KEEPALIVE": keepalive}
    with server(env=env, name=f"{prefix}-a") as a, server(env=env, name=f"{prefix}-b") as b:
        yield Workers(a, b, env)


def own_redis_prefix(services: Mapping[str, str], suffix: str) -> dict[str, str]:
    """
    The services with a Redis prefix of a test module's own: channels of workers that earlier tests
    SIGKILLed stay in their groups until channels_redis expires them, so a module that counts group
    members starts from nothing only on a prefix nobody else used.
    """
    return {**services, "MCP_TEST_REDIS_PREFIX": f"{services['MCP_TEST_REDIS_PREFIX']}_{suffix}"}


def publish_from_third_process(env: Mapping[str, str], *statements: str) -> None:
    """Run ``django.setup()`` and then ``statements`` in a fresh interpreter on the same services."""
    code = "; ".join(["import django", "django.setup()", *statements])
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout


def tool_text(response: dict[str, Any]) -> str:
    """The text blocks of a tools/call result, joined."""
    assert "result" in response, response
    return "".join(block["text"] for block in response["result"]["content"] if block["type"] == "text")
