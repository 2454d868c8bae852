"""
The fleet's child processes: each in its own process group (so it outlives a ``--detach``ed fleet
and its own children go with it), its output in a log file of the run folder, stopped with SIGTERM
and, if it lingers, SIGKILL.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


HOST = "127.0.0.1"


class FleetError(RuntimeError):
    """Something the fleet needs is missing or did not start; the message says what to do."""


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def reserve_port(port: int = 0, host: str = HOST) -> socket.socket:
    """
    A socket bound to ``host:port`` (any free port for 0), held until the process meant for the
    port starts: while it is bound, no other program, nor the kernel choosing a port for an
    outgoing connection, can take it. Raises ``FleetError`` when the port is taken.
    """
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind((host, port))
    except OSError as exc:
        holder.close()
        raise FleetError(f"port {port} on {host} is taken ({exc.strerror}); pass --port (0 picks a free one)") from exc
    return holder


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def http_status(host: str, port: int, path: str, timeout: float = 2.0) -> int | None:
    """The status of ``GET path``, or None when nothing answers."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) or "(empty)"
    except OSError:
        return "(no log)"


class Child:
    """One process of the fleet: a worker or nginx."""

    def __init__(self, name: str, command: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: Path,
                 port: int) -> None:
        self.name, self.command, self.env, self.cwd, self.log, self.port = name, list(command), dict(env), cwd, log, port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        with self.log.open("ab") as out:
            out.write(("$ " + " ".join(self.command) + "\n").encode())
            out.flush()
            self.proc = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_answering(self, path: str, timeout: float) -> None:
        """Wait until ``GET path`` on the child's port answers 200; raise with its log if it does not."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise FleetError(f"{self.name} exited ({self.proc.returncode if self.proc else '?'}) before "
                                 f"answering; {self.log}:\n{tail(self.log)}")
            if http_status(HOST, self.port, path) == 200:
                return
            time.sleep(0.1)
        raise FleetError(f"{self.name} did not answer GET {path} on port {self.port} within {timeout:g} s; "
                         f"{self.log}:\n{tail(self.log)}")

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc is None:
            return
        stop_group(self.proc.pid, timeout, lambda: self.proc.poll() is not None)
        self.proc.poll()


def stop_group(pid: int, timeout: float, gone: Callable[[], bool] | None = None) -> None:
    """
    SIGTERM the process group ``pid`` leads, SIGKILL it after ``timeout`` seconds. ``gone`` says
    whether the leader has exited (a child's ``poll()``); without it, whether ``pid`` still exists.
    """
    def exited() -> bool:
        if gone is not None:
            return gone()
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while not exited() and time.monotonic() < deadline:
        time.sleep(0.05)
    # What is left of the group (a lingering process, or children of it) goes now.
    signal_group(pid, signal.SIGKILL)


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
