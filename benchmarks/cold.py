"""
Cold sessions: a 2025-11-25 Streamable HTTP session opened, used once and closed, back to back.

One cold session is five requests on one keep-alive connection, each answer checked:

1. POST ``initialize``: 200, ``"protocolVersion"`` in the body, an ``Mcp-Session-Id`` header;
2. POST ``notifications/initialized``: 202;
3. POST ``tools/list``: 200, ``"name":"echo"`` in the body;
4. POST ``tools/call`` echo ``{"text": "hi"}``: 200, ``"result"``, ``"text":"hi"`` and
   ``"isError":false`` in the body (the check of the throughput runs);
5. DELETE the session: 2xx.

wrk replays one fixed request, and this flow needs the session id of step 1 in steps 2-5, so this is
its own generator: ``python -m benchmarks.cold JOB.json`` runs ``conns`` asyncio clients on raw
sockets (like ``loadgen.py``'s, closed loop, one request in flight per connection) in a child
process that ``run()`` pins to the load core. It uses uvloop when installed, because it costs less
CPU per request, and reports its own CPU use so a saturated client can be told apart from a
saturated server. A failed check is counted per step (with the first failing answer), never as a
session done; after a failed step the session is still DELETEd so no failure leaves one behind.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field

from . import workload
from .loadgen import ROOT

# Replaced in the prebuilt requests by each session's id (headers only, so Content-Length holds).
PLACEHOLDER = "00000000sessionidplaceholder0000"
STEPS = ("initialize", "notifications/initialized", "tools/list", "tools/call", "DELETE")


def specs(session_id: str) -> list[workload.Spec]:
    """The five requests of a cold session (ids 0, 2 and 1: none reused within the session)."""
    return [workload.initialize(), workload.initialized(session_id), workload.tools_list(session_id),
            workload.legacy_call(session_id), workload.delete_session(session_id)]


def requests(port: int) -> list[bytes]:
    """The same as raw bytes for the generator, ``PLACEHOLDER`` standing for the session id."""
    return [spec.raw(port) for spec in specs(PLACEHOLDER)]


# The status each step must answer (None: any 2xx); the bodies must hold what their Spec expects.
STATUS = (200, 202, 200, 200, None)
EXPECTED = [[part.encode() for part in spec.expect] for spec in specs(PLACEHOLDER)]


def problem(step: int, status: int, headers: dict[str, str], body: bytes) -> str | None:
    """Why the answer to ``STEPS[step]`` is wrong, or None."""
    wanted = STATUS[step]
    status_ok = 200 <= status < 300 if wanted is None else status == wanted
    missing = [part for part in EXPECTED[step] if part not in body]
    if not status_ok or missing:
        return f"{STEPS[step]}: status {status}" + (f", body lacks {missing}" if missing else "") + \
            f", body {body[:200]!r}"
    if step == 0 and not headers.get("mcp-session-id"):
        return f"{STEPS[0]}: no Mcp-Session-Id header"
    return None


def check(port: int) -> tuple[str | None, list[int]]:
    """
    One cold session over a blocking connection before timing: (the first problem or None, the
    body sizes of the answers so far, which the table prints to show what each server writes).
    """
    sizes: list[int] = []
    client = workload.Client(port)
    try:
        session_id = PLACEHOLDER
        for step in range(len(STEPS)):
            response = client.send(specs(session_id)[step])
            sizes.append(len(response.body))
            found = problem(step, response.status, response.headers, response.body)
            if found:
                return found, sizes
            if step == 0:
                session_id = response.headers["mcp-session-id"]
        return None, sizes
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}", sizes
    finally:
        client.close()


@dataclass
class Result:
    """One timed run of cold sessions; ``server_cpu_s`` is filled in by the caller."""

    sessions: int  # complete, all-checked sessions finished inside the timed window
    seconds: float
    failed: dict[str, int] = field(default_factory=dict)  # step -> failed checks
    first_failure: str = ""
    errors: int = 0  # socket errors and timeouts
    p50_ms: float = 0.0  # whole-session latency
    p99_ms: float = 0.0
    client_cpu_s: float = 0.0
    server_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.sessions / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_session(self) -> float:
        return self.server_cpu_s / self.sessions * 1e6 if self.sessions else 0.0

    @property
    def busy(self) -> float:
        return self.server_cpu_s / self.seconds if self.seconds else 0.0

    @property
    def client_busy(self) -> float:
        return self.client_cpu_s / self.seconds if self.seconds else 0.0


def run(command_prefix: list[str], port: int, conns: int, duration: float) -> Result:
    """Run the cold-session generator in a child process (so it can sit on the load core)."""
    job = {"port": port, "conns": conns, "duration": duration}
    command = [*command_prefix, sys.executable, "-m", "benchmarks.cold", json.dumps(job)]
    out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=duration + 60, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"cold-session generator failed: {out.stderr[-2000:]}")
    return Result(**json.loads(out.stdout.strip().splitlines()[-1]))


# --- the generator (child process) -----------------------------------------------------------


class _Connection(asyncio.Protocol):
    """A keep-alive connection with one request in flight; ``send()`` returns its parsed answer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.waiter: asyncio.Future | None = None
        self.head: tuple[int, dict[str, str], int] | None = None  # status, headers, body offset

    def connection_made(self, transport) -> None:
        self.transport = transport

    def send(self, data: bytes) -> asyncio.Future:
        self.waiter = asyncio.get_running_loop().create_future()
        if self.transport.is_closing():  # a write would vanish and the answer never come
            self.waiter.set_exception(ConnectionError("connection closed"))
        else:
            self.transport.write(data)
        return self.waiter

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.head is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            self.head = (int(lines[0].split()[1]), headers, end + 4)
        status, headers, start = self.head
        body_end, body = self._body(headers, start)
        if body_end < 0:
            return  # not all of it yet
        self.buffer, self.head = self.buffer[body_end:], None
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((status, headers, body))

    def _body(self, headers: dict[str, str], start: int) -> tuple[int, bytes]:
        """(end offset, body) of the response starting at ``start``; (-1, b"") if incomplete."""
        if "content-length" in headers:
            end = start + int(headers["content-length"])
            return (end, self.buffer[start:end]) if len(self.buffer) >= end else (-1, b"")
        if headers.get("transfer-encoding", "").lower() != "chunked":
            return start, b""  # 202 and DELETE answers may have no body at all
        body, pos = b"", start  # re-walked on every read: the chunked answers here are tiny
        while True:
            line_end = self.buffer.find(b"\r\n", pos)
            if line_end < 0:
                return -1, b""
            size = int(self.buffer[pos:line_end].split(b";")[0], 16)
            chunk_end = line_end + 2 + size + 2
            if len(self.buffer) < chunk_end:
                return -1, b""
            if size == 0:
                return chunk_end, body
            body += self.buffer[line_end + 2:chunk_end - 2]
            pos = chunk_end

    def connection_lost(self, exc) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("server closed the connection"))


class _Run:
    def __init__(self, job: dict) -> None:
        self.port, self.conns, self.duration = job["port"], job["conns"], job["duration"]
        self.raw = requests(self.port)
        self.sessions = self.errors = 0
        self.failed: dict[str, int] = {}
        self.first_failure = ""
        self.latencies: list[float] = []
        self.deadline = 0.0

    def fail(self, text: str) -> None:
        step = text.split(":", 1)[0]
        self.failed[step] = self.failed.get(step, 0) + 1
        self.first_failure = self.first_failure or text

    async def session(self, conn: _Connection) -> bool:
        """One cold session; False (and the failure recorded) if any answer was wrong."""
        marker, session_id = PLACEHOLDER.encode(), b""
        for step, template in enumerate(self.raw):
            status, headers, body = await conn.send(template.replace(marker, session_id) if step else template)
            found = problem(step, status, headers, body)
            if found:
                self.fail(found)
                if session_id and step < 4:  # leave no session behind, whatever went wrong
                    await conn.send(self.raw[4].replace(marker, session_id))
                return False
            if step == 0:
                session_id = headers["mcp-session-id"].encode("latin-1")
        return True

    async def client(self, loop, conn: _Connection | None) -> None:
        while time.perf_counter() < self.deadline:
            try:
                if conn is None or conn.transport.is_closing():
                    _, conn = await loop.create_connection(_Connection, workload.HOST, self.port)
                started = time.perf_counter()
                ok = await self.session(conn)
            except OSError:  # ConnectionError included: count it and open a new connection
                self.errors += 1
                if conn is not None:
                    conn.transport.close()
                conn = None
                continue
            finished = time.perf_counter()
            if ok and finished <= self.deadline:
                self.sessions += 1
                self.latencies.append(finished - started)
        if conn is not None:
            conn.transport.close()

    async def main(self) -> dict:
        loop = asyncio.get_running_loop()
        # Connected before the clock starts, as wrk does: the window times sessions, not connects.
        conns = [(await loop.create_connection(_Connection, workload.HOST, self.port))[1] for _ in range(self.conns)]
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        self.deadline = time.perf_counter() + self.duration
        tasks = [asyncio.ensure_future(self.client(loop, conn)) for conn in conns]
        done, pending = await asyncio.wait(tasks, timeout=self.duration + 15)
        self.errors += len(pending)  # clients whose answer never came
        for task in pending:
            task.cancel()
        for task in done:
            if task.exception() is not None:
                self.errors += 1
                self.first_failure = self.first_failure or f"client crashed: {task.exception()!r}"
        used = resource.getrusage(resource.RUSAGE_SELF)
        lat = sorted(self.latencies) or [0.0]
        return {"sessions": self.sessions, "seconds": self.duration, "failed": self.failed,
                "first_failure": self.first_failure, "errors": self.errors,
                "p50_ms": lat[len(lat) // 2] * 1000, "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
                "client_cpu_s": used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime}


def _event_loop_runner():
    try:
        import uvloop
    except ImportError:
        return asyncio.run
    return uvloop.run


if __name__ == "__main__":
    print(json.dumps(_event_loop_runner()(_Run(json.loads(sys.argv[1])).main())))
