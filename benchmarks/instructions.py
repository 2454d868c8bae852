"""
Instructions per request: the bare Channels consumer and django_mcp's tools/call, counted by
valgrind's callgrind on the real servers, so that two runs of the same code agree to about 1%
whatever else the machine is doing.

``run.py`` measures requests per second and CPU time, which is what users get, but on a shared
machine both move by 10-20% between runs of unchanged code: too much to tell whether a change of a
few microseconds helped. Instruction counts do not move with the machine's load. They are not
time (an instruction of the interpreter's loop and one of httptools' parser cost different
amounts), so the goals stay stated in ``run.py``'s terms; this is the tool for deciding between
two versions of the hot path.

Each (server, mode) point is a fresh server process started under
``valgrind --tool=callgrind --instr-atstart=no``, driven by wrk as in ``run.py`` (server on CPU 0,
load on CPU 1, 32 connections, every answer checked): a warm-up without instrumentation, then
instrumentation on and a second warm-up, counters zeroed, the timed run, instrumentation off and
one dump. Under valgrind a server is about 50 times slower, so a point answers a few thousand
requests; the count per request is the dump's total over the answered requests (requests still
in flight when the run ends make the error, below 2% at 32 connections).

    .venv/bin/python benchmarks/instructions.py                 # uvicorn and daphne, ~14 min
    .venv/bin/python benchmarks/instructions.py --servers uvicorn --duration 10

The last ten modes run the async calls again on servers with one optional app installed: the
metrics app, the tasks app, the views app (``django_mcp.ui``), the tracing app with no
OpenTelemetry SDK configured (as installed and not yet used), and the tracing app with the SDK
exporting every span through a batch processor over OTLP/HTTP (to a sink in this process that
answers without decoding). All others run without them, as a project installs django_mcp by
default; the summaries print what each adds to a call. ``--modes`` picks some (``bare``,
``modern``, ``legacy``, ``legacy-sync``, ``metrics``, ``tasks``, ``ui``, ``tracing``,
``tracing-sdk``: each app's keys bring its twins too).

Needs valgrind (``callgrind_control``) and wrk; without them it says so and exits 0, as the other
benchmarks do for what they lack.
"""

from __future__ import annotations

import argparse
import glob
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadgen, workload  # noqa: E402
from benchmarks.run import setup_process  # noqa: E402
from benchmarks.servers import LOAD_CPU, Server, have_uvicorn, pinned, stop_all  # noqa: E402
from tests.live import migrate  # noqa: E402

BARE = "bare Channels AsyncConsumer"
MODERN_ASYNC = "django_mcp 2026-07-28, async tool"
LEGACY_ASYNC = "django_mcp 2025-11-25, async tool"
LEGACY_SYNC = "django_mcp 2025-11-25 session"
# The async calls again on a server with the optional metrics app installed (the others run as a
# project installs django_mcp by default, without it): the difference is what the metrics cost.
MODERN_METRICS = "django_mcp 2026-07-28, async, metrics"
LEGACY_METRICS = "django_mcp 2025-11-25, async, metrics"
# The same calls with the tasks app installed: its hook takes part in every tools/call.
MODERN_TASKS = "django_mcp 2026-07-28, async, tasks app"
LEGACY_TASKS = "django_mcp 2025-11-25, async, tasks app"
# The same calls with the views app (django_mcp.ui) installed: its hook (ViewHook) takes part in
# every tools/call and tools/list.
MODERN_UI = "django_mcp 2026-07-28, async, views app"
LEGACY_UI = "django_mcp 2025-11-25, async, views app"
# With the tracing app (django_mcp.tracing): no SDK configured, then the SDK and a batch exporter.
MODERN_TRACING = "django_mcp 2026-07-28, async, tracing, no SDK"
LEGACY_TRACING = "django_mcp 2025-11-25, async, tracing, no SDK"
MODERN_TRACING_SDK = "django_mcp 2026-07-28, async, tracing, SDK"
LEGACY_TRACING_SDK = "django_mcp 2025-11-25, async, tracing, SDK"
MODES = (BARE, MODERN_ASYNC, LEGACY_ASYNC, LEGACY_SYNC, MODERN_METRICS, LEGACY_METRICS, MODERN_TASKS, LEGACY_TASKS,
         MODERN_UI, LEGACY_UI, MODERN_TRACING, LEGACY_TRACING, MODERN_TRACING_SDK, LEGACY_TRACING_SDK)
METRICS_TWINS = {MODERN_METRICS: MODERN_ASYNC, LEGACY_METRICS: LEGACY_ASYNC}
TASKS_TWINS = {MODERN_TASKS: MODERN_ASYNC, LEGACY_TASKS: LEGACY_ASYNC}
UI_TWINS = {MODERN_UI: MODERN_ASYNC, LEGACY_UI: LEGACY_ASYNC}
TRACING_TWINS = {MODERN_TRACING: MODERN_ASYNC, LEGACY_TRACING: LEGACY_ASYNC}
TRACING_SDK_TWINS = {MODERN_TRACING_SDK: MODERN_ASYNC, LEGACY_TRACING_SDK: LEGACY_ASYNC}
MODERN_MODES = (BARE, MODERN_ASYNC, MODERN_METRICS, MODERN_TASKS, MODERN_UI, MODERN_TRACING, MODERN_TRACING_SDK)
#: --modes keys: an app's key brings its twins without the app, which its summary compares with.
MODE_KEYS = {"bare": (BARE,), "modern": (MODERN_ASYNC,), "legacy": (LEGACY_ASYNC,), "legacy-sync": (LEGACY_SYNC,),
             "metrics": (*METRICS_TWINS, *METRICS_TWINS.values()), "tasks": (*TASKS_TWINS, *TASKS_TWINS.values()),
             "ui": (*UI_TWINS, *UI_TWINS.values()), "tracing": (*TRACING_TWINS, *TRACING_TWINS.values()),
             "tracing-sdk": (*TRACING_SDK_TWINS, *TRACING_SDK_TWINS.values())}


class OtlpSink:
    """Answers OTLP/HTTP exports with 200 and reads nothing into objects: a collector that costs the server nothing."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


class CallgrindServer(Server):
    """A :class:`Server` whose Python runs under callgrind, instrumentation off until asked."""

    def __init__(self, *args, out_dir: Path, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.out_dir = out_dir

    def command(self) -> list[str]:
        command = super().command()
        python = command.index(sys.executable)
        return command[:python] + ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                   f"--callgrind-out-file={self.out_dir}/callgrind.out.%p"] + command[python:]

    def control(self, *options: str) -> None:
        assert self.proc is not None
        subprocess.run(["callgrind_control", *options, str(self.proc.pid)], check=True, capture_output=True)


def dumped_instructions(out_dir: Path, pid: int) -> int:
    """The instruction total of the one dump ``callgrind_control -d`` wrote (``<file>.1``)."""
    total = 0
    for path in glob.glob(f"{out_dir}/callgrind.out.{pid}.1"):
        with open(path, errors="replace") as dump:
            for line in dump:
                if line.startswith("totals:"):
                    total += int(line.split()[1])
    return total


def measure(kind: str, mode: str, django_env: dict, conns: int, duration: float,
            otlp_endpoint: str = "") -> tuple[int, int, str]:
    """(answered requests, instructions, problem) of one point on a fresh server."""
    out_dir = Path(tempfile.mkdtemp(prefix="django-mcp-callgrind-"))
    if mode == BARE:
        server = CallgrindServer(kind, "benchmarks.baseline_asgi:application", "cg-bare",
                                 {"DJANGO_SETTINGS_MODULE": None}, out_dir=out_dir)
    else:
        metrics = "0" if mode in METRICS_TWINS else "1"
        tasks = "0" if mode in TASKS_TWINS else "1"
        ui = "0" if mode in UI_TWINS else "1"
        tracing = "0" if mode in TRACING_TWINS or mode in TRACING_SDK_TWINS else "1"
        env = {**django_env, "MCP_TEST_WITHOUT_METRICS": metrics, "MCP_TEST_WITHOUT_TASKS": tasks,
               "MCP_TEST_WITHOUT_UI": ui, "MCP_TEST_WITHOUT_TRACING": tracing}
        if mode in TRACING_SDK_TWINS:
            # The SDK as tests/tracing/otel_setup.py configures it: a batch processor exporting over
            # OTLP/HTTP, the database driver instrumented.
            env.update({"DJANGO_SETTINGS_MODULE": "tests.tracing.otel_settings", "OTEL_SERVICE_NAME": "bench",
                        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint})
        server = CallgrindServer(kind, "tests.asgi:application", "cg-django-mcp", env, out_dir=out_dir)
    try:
        server.start(timeout=300)
        if mode in MODERN_MODES:
            spec = workload.modern_call("echo_async")
        else:
            session = workload.new_session(server.port)
            spec = workload.legacy_call(session, numbered=True,
                                        tool="echo" if mode == LEGACY_SYNC else "echo_async")
        problem = workload.check(server.port, spec)
        if problem:
            return 0, 0, problem

        def load(seconds: float) -> loadgen.Result:
            return loadgen.run_wrk(pinned([], LOAD_CPU), spec, server.port, conns, seconds)

        load(4)  # lazy imports, validators, caches: before anything is counted
        server.control("-i", "on")
        load(3)  # what instrumenting changes (valgrind's translation cache) settles here
        server.control("-z")
        result = load(duration)
        server.control("-i", "off")
        server.control("-d")
        time.sleep(0.5)
        if result.bad or result.errors:
            return result.requests, 0, f"{result.bad} wrong answers, {result.errors} socket errors"
        return result.requests, dumped_instructions(out_dir, server.proc.pid), ""
    finally:
        server.stop()
        shutil.rmtree(out_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="uvicorn,daphne", help="comma-separated: uvicorn, daphne")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per timed run (default 20)")
    parser.add_argument("--concurrency", type=int, default=32, help="connections (default 32)")
    parser.add_argument("--modes", default="", help=f"comma-separated, of: {', '.join(MODE_KEYS)} (default: all)")
    args = parser.parse_args()
    wanted = {mode for key in args.modes.split(",") if key for mode in MODE_KEYS[key.strip()]}
    modes = [mode for mode in MODES if not wanted or mode in wanted or mode == BARE]
    setup_process()
    missing = [tool for tool in ("valgrind", "callgrind_control", "wrk") if shutil.which(tool) is None]
    if missing:
        print(f"instructions per request: skipped, {' and '.join(missing)} not installed "
              "(apt-get install -y valgrind wrk)")
        return 0
    kinds = [kind for kind in args.servers.split(",") if kind != "uvicorn" or have_uvicorn()]
    workdir = Path(tempfile.mkdtemp(prefix="django-mcp-bench-"))
    django_env = {"MCP_TEST_SQLITE": str(workdir / "bench.sqlite3")}
    migrate(django_env)
    rows = []
    sink = OtlpSink()
    try:
        for kind in kinds:
            for mode in modes:
                requests, instructions, problem = measure(kind, mode, django_env, args.concurrency, args.duration,
                                                          sink.endpoint)
                per_request = instructions / requests if requests and instructions else 0.0
                rows.append((kind, mode, requests, per_request, problem))
                print(f"  {kind:7} {mode:34} {requests:6} requests  {per_request / 1e3:8.1f} k instructions/request"
                      + (f"  ! {problem}" if problem else ""), flush=True)
    finally:
        stop_all()
        sink.server.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nInstructions per tools/call (callgrind, c={args.concurrency}; ratio = bare consumer / django_mcp on the "
          "same server, the instruction-count twin of run.py's CPU ratio)")
    print(f"{'server':7} {'mode':34} {'requests':>8} {'k instr/req':>12} {'ratio':>7}")
    for kind in kinds:
        bare = next((r[3] for r in rows if r[0] == kind and r[1] == BARE), 0.0)
        for row_kind, mode, requests, per_request, problem in rows:
            if row_kind != kind:
                continue
            ratio = f"{bare / per_request:6.2f}x" if bare and per_request and mode != BARE else ""
            flag = f"  ! {problem}" if problem else ""
            print(f"{kind:7} {mode:34} {requests:8} {per_request / 1e3:12.1f} {ratio:>7}{flag}")
    per_mode = {(row[0], row[1]): row[3] for row in rows}
    for title, twins in (("What the metrics app costs a call", METRICS_TWINS),
                         ("What the tasks app costs a call that is not a task", TASKS_TWINS),
                         ("What the views app costs a call (a tool without a view)", UI_TWINS),
                         ("What the tracing app costs a call with no OpenTelemetry SDK configured", TRACING_TWINS),
                         ("What tracing costs a call with the SDK and a batch exporter", TRACING_SDK_TWINS)):
        print(f"\n{title}: instructions per request with it, minus without it")
        for kind in kinds:
            for with_app, twin in twins.items():
                installed, without = per_mode.get((kind, with_app)), per_mode.get((kind, twin))
                if installed and without:
                    print(f"  {kind:7} {with_app:34} {(installed - without) / 1e3:+8.1f} k instructions/request "
                          f"({(installed - without) / without:+.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
