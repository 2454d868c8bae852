"""
Where a server's time goes, for ``plain_view.py --profile``: py-spy samples one server process
(a gunicorn master's worker, or the daphne or uvicorn process) while wrk replays one call, and each
sample is charged to a part of the stack.

py-spy runs with ``--gil``: only the thread that holds the GIL is sampled, so the samples add up to
the Python time of the process, whichever thread spends it, and a thread that waits (in ``epoll``,
a lock, a socket) counts for nothing. What a request costs outside the GIL (the kernel's side of its
system calls, the context switches between threads, C code that releases the GIL) is the difference
between the server's CPU time per request (``/proc``) and the sum of the parts.

A sample is charged to the innermost frame of its stack that belongs to one of ``PARTS``, read
from the leaf toward the root: time spent in the standard library (asyncio, threading, json) goes
to whoever called it, so a ``sync_to_async`` hop's thread start-up is asgiref's, the wake-up of the
plain view's event loop is the portal's. Samples with no such frame (an event loop's or a thread
pool's own bookkeeping) are "stdlib: event loop, threads".

Needs ``py-spy`` (``.venv/bin/pip install py-spy``) and the right to ptrace the server (root, or
``kernel.yama.ptrace_scope`` 0); without them the profile is skipped and the output says why.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# (part, path fragments of the frames charged to it), first match from the leaf wins; checked in this
# order within one frame.
PARTS = [
    ("django_mcp: portal (WSGI thread -> event loop)", ("django_mcp/transports/portal.py",)),
    ("django_mcp: view adapter (views, django_exchange)", ("django_mcp/views.py",
                                                            "django_mcp/transports/django_exchange.py")),
    ("django_mcp: consumer, dispatcher, tool", ("django_mcp/", "tests/testapp/", "pydantic/", "pydantic_core/")),
    ("floor view", ("benchmarks/",)),
    ("asgiref: sync_to_async, thread contexts", ("asgiref/",)),
    ("Channels", ("channels/",)),
    ("Django: handler, middleware, URLs, signals", ("django/",)),
    ("gunicorn: HTTP, sockets, worker loop", ("gunicorn/",)),
    ("uvicorn/uvloop/httptools: HTTP, sockets, loop", ("uvicorn/", "uvloop/", "httptools/")),
    ("daphne/Twisted: HTTP, sockets, loop", ("daphne/", "twisted/", "autobahn/")),
]
OTHER = "stdlib: event loop, threads"


def py_spy() -> str | None:
    """The py-spy executable: beside this interpreter (the virtualenv's), else on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def part_of(stack: list[str]) -> str:
    """The part a sample's stack (root first, as py-spy's raw format writes it) is charged to."""
    for frame in reversed(stack):
        # A frame reads "function (path/to/file.py:line)"; the path is shortened to the package part.
        where = frame.rpartition("(")[2]
        for part, fragments in PARTS:
            if any(fragment in where for fragment in fragments):
                return part
    return OTHER


def read_raw(path: Path) -> collections.Counter:
    """py-spy's raw (collapsed) output: {part: samples}."""
    parts: collections.Counter = collections.Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if frames and frames[0].startswith("thread ("):  # with --threads, the first "frame" names the thread
            frames = frames[1:]
        parts[part_of(frames)] += int(count)
    return parts


class Profile:
    """The parts of one profiled run: samples per part, the sampling rate and the requests in the window."""

    def __init__(self, parts: collections.Counter, rate: int, seconds: float, requests: float,
                 cpu_us_per_request: float) -> None:
        self.parts, self.rate, self.seconds = parts, rate, seconds
        self.requests, self.cpu_us_per_request = requests, cpu_us_per_request

    def us_per_request(self, part: str) -> float:
        return self.parts[part] / self.rate / self.requests * 1e6 if self.requests else 0.0

    @property
    def gil_us_per_request(self) -> float:
        return sum(self.parts.values()) / self.rate / self.requests * 1e6 if self.requests else 0.0


def record(pid: int, seconds: float, rate: int, prefix: list[str], run_load) -> tuple[collections.Counter, object]:
    """
    Sample ``pid`` for ``seconds`` while ``run_load(duration)`` drives it (from the calling
    thread, for a little longer than the samples are taken). Returns the parts and what
    ``run_load`` returned. Raises RuntimeError if py-spy fails.
    """
    spy = py_spy()
    if spy is None:
        raise RuntimeError("py-spy not installed (.venv/bin/pip install py-spy)")
    with tempfile.TemporaryDirectory(prefix="plain-profile-") as folder:
        out = Path(folder) / "raw.txt"
        command = [*prefix, spy, "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))),
                   "--rate", str(rate), "--gil", "--nonblocking", "--threads", "--format", "raw",
                   "--output", str(out)]
        result: dict = {}

        def load() -> None:
            # Started with py-spy, ended after it: its whole window sees the load (wrk's duration is
            # whole seconds; py-spy attaches within a fraction of one).
            result["load"] = run_load(seconds + 2)

        spy_proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        driver = threading.Thread(target=load)
        driver.start()
        try:
            output, _ = spy_proc.communicate(timeout=seconds + 60)
        finally:
            driver.join()
        if spy_proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"py-spy failed ({spy_proc.returncode}): {output.decode(errors='replace')[-500:]}")
        return read_raw(out), result.get("load")


def profiled_pid(server) -> int:
    """The process that serves requests: a gunicorn master's (only) worker, else the server itself."""
    children = server.child_pids() if server.kind.startswith("gunicorn") else []
    if server.kind.startswith("gunicorn") and len(children) != 1:
        raise RuntimeError(f"expected one gunicorn worker, found {children}")
    return children[0] if children else server.proc.pid


def can_trace() -> str | None:
    """Why py-spy cannot attach here, or None."""
    if py_spy() is None:
        return "py-spy not installed (.venv/bin/pip install py-spy)"
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        scope = 0
    if os.geteuid() != 0 and scope > 0:
        return f"not root and kernel.yama.ptrace_scope is {scope}: py-spy cannot attach"
    return None
