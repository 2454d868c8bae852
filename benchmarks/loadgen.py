"""
Load generators, each run in its own process pinned to the load core (CPU 1).

``wrk`` when it is installed: it costs the least CPU per request, so the server, not the
generator, is the bottleneck even for a bare consumer on uvicorn. Its Lua script replays one fixed
POST and checks *every* response (status 200 and the expected substrings) so a server that starts
failing cannot look fast. Without ``wrk``, the fallback is this module run as
``python -m benchmarks.loadgen SPEC.json``: asyncio protocols on raw keep-alive sockets, one request
in flight per connection (closed loop, like wrk), the same checks, standard library only. It is
slower per request than wrk; on uvicorn it may saturate its core before the server does, which
``run.py`` says in its output.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .workload import FIRST_ID

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    requests: int  # good responses completed in the timed window
    seconds: float
    bad: int  # responses that were not 200 or lacked an expected substring
    errors: int  # socket errors and timeouts
    p50_ms: float
    p99_ms: float
    server_cpu_s: float = 0.0  # filled in by run.py: the server's CPU time during the run

    @property
    def cpu_us_per_request(self) -> float:
        done = self.requests + self.bad
        return self.server_cpu_s / done * 1e6 if done else 0.0

    @property
    def busy(self) -> float:
        """Share of one core the server used: well below 1 means it waited (or was starved)."""
        return self.server_cpu_s / self.seconds if self.seconds else 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def _lua_string(text: str) -> str:
    level = "=" * 4
    assert f"]{level}]" not in text
    return f"[{level}[{text}]{level}]"


WRK_SCRIPT = """
wrk.method = {method}
wrk.path = {path}
wrk.body = {body}
{headers}
local expect = {{ {expect} }}
local threads = {{}}
{numbered}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    return
  end
  for _, part in ipairs(expect) do
    if not string.find(body, part, 1, true) then
      bad = bad + 1
      return
    end
  end
end

function done(summary, latency, requests)
  local total_bad = 0
  for _, thread in ipairs(threads) do
    total_bad = total_bad + thread:get("bad")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {{"requests": %d, "duration_us": %d, "bad": %d, "errors": %d, "p50_us": %d, "p99_us": %d}}\\n',
    summary.requests, summary.duration, total_bad, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


# For a numbered Spec: a request() hook that builds every request with the next id. wrk then
# formats each request anew instead of replaying one buffer, a little more work for the load core.
WRK_NUMBERED = """
local body_head, body_tail = {head}, {tail}
local next_id = {first}
function request()
  next_id = next_id + 1
  return wrk.format(nil, nil, nil, body_head .. string.format("%d", next_id) .. body_tail)
end
"""


def run_wrk(command_prefix: list[str], spec, port: int, conns: int, duration: float) -> Result:
    """Run wrk with one thread (one core) and ``conns`` keep-alive connections, for whole seconds."""
    headers = "\n".join(f"wrk.headers[ {_lua_string(k)} ] = {_lua_string(v)}" for k, v in spec.headers.items())
    numbered = ""
    if spec.numbered:
        head, tail = spec.body.split(str(FIRST_ID), 1)
        numbered = WRK_NUMBERED.format(head=_lua_string(head), tail=_lua_string(tail), first=FIRST_ID)
    script = WRK_SCRIPT.format(method=_lua_string(spec.method), path=_lua_string(spec.path),
                               body=_lua_string(spec.body), headers=headers, numbered=numbered,
                               expect=", ".join(_lua_string(part) for part in spec.expect))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="bench-") as lua:
        lua.write(script)
        lua.flush()
        command = [*command_prefix, "wrk", "-t", "1", "-c", str(conns), "-d", f"{max(1, round(duration))}s",
                   "--timeout", "10s", "-s", lua.name, f"http://127.0.0.1:{port}{spec.path}"]
        out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=duration + 60)
    match = re.search(r"^BENCHJSON (.*)$", out.stdout, re.MULTILINE)
    if out.returncode != 0 or not match:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout[-1000:]} {out.stderr[-1000:]}")
    data = json.loads(match.group(1))
    # wrk counts every completed response in summary.requests; the good ones are the rest.
    return Result(data["requests"] - data["bad"], data["duration_us"] / 1e6, data["bad"], data["errors"],
                  data["p50_us"] / 1000, data["p99_us"] / 1000)


def run_python(command_prefix: list[str], spec, port: int, conns: int, duration: float) -> Result:
    """Run this module's asyncio generator in a child process (so it can sit on the load core)."""
    job = {"port": port, "request": spec.raw(port).decode("latin-1"), "expect": spec.expect,
           "conns": conns, "duration": duration, "numbered": spec.numbered}
    command = [*command_prefix, sys.executable, "-m", "benchmarks.loadgen", json.dumps(job)]
    out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=duration + 60,
                         cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"python load generator failed: {out.stderr[-2000:]}")
    return Result(**json.loads(out.stdout.strip().splitlines()[-1]))


# --- the pure-stdlib generator ---------------------------------------------------------------

_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)


class _Connection(asyncio.Protocol):
    """One keep-alive connection replaying the request as soon as the previous answer is in."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.buffer = b""
        self.need = -1  # bytes of the whole current response, once its head is parsed
        self.head_end = 0
        self.status_ok = False
        self.sent_at = 0.0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def fire(self) -> None:
        self.sent_at = time.perf_counter()
        self.transport.write(self.run.next_request())

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.need < 0:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            length = _LENGTH.search(head)
            self.status_ok = head[9:12] == b"200"
            self.head_end = end + 4
            self.need = self.head_end + (int(length.group(1)) if length else 0)
        if len(self.buffer) < self.need:
            return
        body = self.buffer[self.head_end:self.need]
        self.buffer = self.buffer[self.need:]
        self.need = -1
        self.run.completed(self, self.status_ok and all(part in body for part in self.run.expect))

    def connection_lost(self, exc) -> None:
        self.run.lost(self)


class _Run:
    def __init__(self, job: dict) -> None:
        self.request = job["request"].encode("latin-1")
        self.expect = [part.encode() for part in job["expect"]]
        self.port, self.conns, self.duration = job["port"], job["conns"], job["duration"]
        self.good = self.bad = self.errors = 0
        self.latencies: list[float] = []
        self.deadline = 0.0
        self.open: set[_Connection] = set()
        self.all_closed: asyncio.Future | None = None
        self.numbered, self.next_id = job.get("numbered", False), FIRST_ID

    def next_request(self) -> bytes:
        if not self.numbered:
            return self.request
        self.next_id += 1  # same width as FIRST_ID, so the Content-Length still holds
        return self.request.replace(b'"id":%d' % FIRST_ID, b'"id":%d' % self.next_id, 1)

    def completed(self, conn: _Connection, ok: bool) -> None:
        now = time.perf_counter()
        if now <= self.deadline:
            if ok:
                self.good += 1
            else:
                self.bad += 1
            self.latencies.append(now - conn.sent_at)
            conn.fire()
        else:
            conn.transport.close()

    def lost(self, conn: _Connection) -> None:
        if time.perf_counter() < self.deadline:
            self.errors += 1
        self.open.discard(conn)
        if not self.open and self.all_closed is not None and not self.all_closed.done():
            self.all_closed.set_result(None)

    async def main(self) -> dict:
        loop = asyncio.get_running_loop()
        self.all_closed = loop.create_future()
        for _ in range(self.conns):
            _, conn = await loop.create_connection(lambda: _Connection(self), "127.0.0.1", self.port)
            self.open.add(conn)
        start = time.perf_counter()
        self.deadline = start + self.duration
        for conn in list(self.open):
            conn.fire()
        try:
            await asyncio.wait_for(asyncio.shield(self.all_closed), self.duration + 15)
        except TimeoutError:
            self.errors += len(self.open)  # answers that never came
        lat = sorted(self.latencies) or [0.0]
        return {"requests": self.good, "seconds": self.duration, "bad": self.bad, "errors": self.errors,
                "p50_ms": lat[len(lat) // 2] * 1000, "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_Run(json.loads(sys.argv[1])).main())))
