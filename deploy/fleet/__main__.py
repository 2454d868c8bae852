"""
``python -m deploy.fleet`` (what ``scripts/fleet`` runs): start the fleet, or stop a detached one.

    scripts/fleet                          # 2 daphne workers behind nginx on http://127.0.0.1:8080
    scripts/fleet --workers 4 --server uvicorn --port 9000
    scripts/fleet --throwaway --port 0     # a fresh database, dropped at the end; any free port
    scripts/fleet --detach                 # start, print, return; later: scripts/fleet stop

In the foreground it runs until Ctrl-C (or SIGTERM), or until one of its processes dies, and then
stops everything it started. When it is ready it writes ``fleet.json`` in its run folder (the
addresses, ports, pids and logs), which ``stop`` and tests/deployment read.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

from . import nginx, project, services
from .processes import HOST, Child, FleetError, free_port, reserve_port, stop_group


ROOT = project.ROOT
#: The last run folder, so that ``scripts/fleet stop`` finds a detached fleet (.tmp/ is ignored by git).
CURRENT = ROOT / ".tmp" / "fleet-current"
STATE = "fleet.json"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/fleet", description=(
        "Start the deployment of docs/howto/deployment.md on this machine: N workers serving the example "
        "project behind nginx (deploy/nginx.conf), on PostgreSQL and Redis. Ctrl-C stops everything it started."))
    parser.add_argument("action", nargs="?", choices=["run", "stop"], default="run",
                        help="run (the default) or stop a fleet started with --detach")
    parser.add_argument("--workers", type=int, default=2, help="how many workers (default 2)")
    parser.add_argument("--server", choices=project.SERVERS, default="daphne",
                        help="the ASGI server of the workers (uvicorn: the 'bench' extra)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")),
                        help="nginx's port on 127.0.0.1 (default $PORT or 8080; 0 picks a free one)")
    parser.add_argument("--public-url", help="the address clients use, if not http://127.0.0.1:PORT "
                        "(e.g. an https:// address of a TLS terminator in front)")
    parser.add_argument("--database", default="django_mcp_fleet", help="the PostgreSQL database (created if missing)")
    parser.add_argument("--throwaway", action="store_true",
                        help="a fresh database and Redis prefix of their own, dropped when the fleet stops")
    parser.add_argument("--run-dir", type=Path, help="where the rendered configuration, logs and static files go "
                        "(default: a new folder under the system's temporary folder)")
    parser.add_argument("--detach", action="store_true", help="return once everything runs; stop it with "
                        "'scripts/fleet stop'")
    parser.add_argument("--no-start-services", action="store_true",
                        help="never start PostgreSQL or Redis; fail when they are not running")
    parser.add_argument("--keep-services", action="store_true",
                        help="leave running the services the fleet had to start")
    parser.add_argument("--no-install", action="store_true", help="never install nginx with apt")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


@dataclass
class Fleet:
    """What one run started, so that it can all be stopped, by this process or by ``stop``."""

    run_dir: Path
    services: services.Services
    database: str
    prefix: str
    throwaway: bool
    keep_services: bool
    workers: list[Child] = field(default_factory=list)
    nginx: Child | None = None
    created_database: bool = False

    def children(self) -> list[Child]:
        return ([self.nginx] if self.nginx else []) + self.workers

    def stop(self) -> None:
        """nginx first (no new requests), then the workers, the throwaway database, started services."""
        for child in self.children():
            child.stop()
        if self.throwaway:
            forget(self.services, self.database if self.created_database else None, self.prefix)
        if not self.keep_services:
            services.stop_started(self.services)
        # The logs and the rendered configuration stay for a look afterwards; the copies go.
        for folder in ("static", "nginx-temp"):
            shutil.rmtree(self.run_dir / folder, ignore_errors=True)


def forget(fleet_services: services.Services, database: str | None, prefix: str) -> None:
    """A throwaway fleet's database and Redis keys go; a failure is reported, and stopping goes on."""
    try:
        if database:
            services.drop_database(fleet_services, database)
        services.forget_prefix(fleet_services, prefix)
    except Exception as exc:  # noqa: BLE001 - say what is left behind
        print(f"fleet: could not remove database {database} or Redis keys {prefix}*: {exc}", file=sys.stderr)


def new_worker(name: str, server: str, env: dict[str, str], run_dir: Path) -> Child:
    """A worker on a port free right now, started."""
    port = free_port()
    child = Child(name, project.worker_command(server, port), env=env, cwd=ROOT,
                  log=run_dir / "logs" / f"{name}.log", port=port)
    child.start()
    return child


def start_workers(fleet: Fleet, count: int, server: str, env: dict[str, str]) -> None:
    """``count`` workers started together, each answering /healthz; a port taken meanwhile is picked again."""
    fleet.workers.extend(new_worker(f"worker-{n}", server, env, fleet.run_dir) for n in range(1, count + 1))
    for index, child in enumerate(fleet.workers):
        for attempt in range(3):
            try:
                child.wait_until_answering("/healthz", timeout=60)
                break
            except FleetError as exc:
                child.stop()
                if attempt == 2 or "Address already in use" not in str(exc):
                    raise
                child = fleet.workers[index] = new_worker(child.name, server, env, fleet.run_dir)


def start(args: argparse.Namespace, say: Callable[[str], None] = print) -> Fleet:
    """Everything, in order; on any failure what was started is stopped again."""
    # nginx's port is held from now until nginx starts, some seconds later: the workers must know
    # the public URL, port included, before they start.
    holder = reserve_port(args.port)
    port = holder.getsockname()[1]
    public_url = (args.public_url or f"http://{HOST}:{port}").rstrip("/")
    run_dir = (args.run_dir or Path(tempfile.mkdtemp(prefix="django-mcp-fleet-"))).resolve()
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    # nginx's workers run as an unprivileged user when it starts as root: they must read the static
    # files and enter the folder.
    run_dir.chmod(0o755)

    token = secrets.token_hex(5)
    database = f"{args.database}_{token}" if args.throwaway else args.database
    prefix = f"django_mcp_fleet_{token}" if args.throwaway else "django_mcp_fleet"
    fleet = Fleet(run_dir, services.Services(), database, prefix, args.throwaway, args.keep_services)
    try:
        project.require_server(args.server)
        services.ensure(fleet.services, may_start=not args.no_start_services, say=say)
        binary = nginx.ensure_binary(may_install=not args.no_install)
        fleet.created_database = services.create_database(fleet.services, database)
        host = urlsplit(public_url).hostname or HOST
        allowed = [host] + ([name for name in ("127.0.0.1", "localhost") if name != host]
                            if host in ("127.0.0.1", "localhost") else [])
        env = project.django_env(
            secret_key=os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50), public_url=public_url,
            allowed_hosts=allowed, database=database, pg_host=fleet.services.pg_host,
            pg_port=fleet.services.pg_port, pg_user=fleet.services.pg_user, redis_url=fleet.services.redis_url,
            channels_prefix=prefix,
            static_root=run_dir / "static")
        say(f"fleet: migrate, collectstatic, demo data ({run_dir / 'logs' / 'prepare.log'})")
        project.prepare(env, run_dir / "logs" / "prepare.log")

        say(f"fleet: starting {args.workers} {args.server} worker(s)")
        start_workers(fleet, args.workers, args.server, env)

        main = nginx.write_config(run_dir, [f"{HOST}:{worker.port}" for worker in fleet.workers],
                                  listen=f"{HOST}:{port}", static_root=run_dir / "static")
        nginx.check(binary, run_dir, main)
        fleet.nginx = Child("nginx", nginx.command(binary, run_dir, main), env=dict(os.environ), cwd=run_dir,
                            log=run_dir / "logs" / "nginx.log", port=port)
        holder.close()
        fleet.nginx.start()
        fleet.nginx.wait_until_answering("/readyz", timeout=30)
    except BaseException:
        ignore_signals()  # a second Ctrl-C must not cut the cleanup short
        holder.close()
        fleet.stop()
        raise
    write_state(fleet, public_url, args)
    return fleet


def write_state(fleet: Fleet, public_url: str, args: argparse.Namespace) -> None:
    state = {
        "pid": os.getpid(),
        "detached": args.detach,
        "public_url": public_url,
        "mcp_url": f"{public_url}/mcp",
        "port": fleet.nginx.port if fleet.nginx else None,
        "server": args.server,
        "run_dir": str(fleet.run_dir),
        "access_log": str(fleet.run_dir / "logs" / "access.log"),
        "database": fleet.database,
        "redis_prefix": fleet.prefix,
        "throwaway": fleet.throwaway,
        "created_database": fleet.created_database,
        "services_started": [] if fleet.keep_services else fleet.services.started,
        "processes": [{"name": child.name, "pid": child.pid, "port": child.port, "log": str(child.log)}
                      for child in fleet.children()],
    }
    path = fleet.run_dir / STATE
    path.with_suffix(".tmp").write_text(json.dumps(state, indent=2))
    path.with_suffix(".tmp").replace(path)  # whoever polls for it never reads half a file
    CURRENT.parent.mkdir(exist_ok=True)
    CURRENT.write_text(str(fleet.run_dir))


def banner(fleet: Fleet, public_url: str, args: argparse.Namespace) -> str:
    mcp_url = f"{public_url}/mcp"
    workers = "\n".join(f"    {child.name}: http://{HOST}:{child.port} (pid {child.pid}, log {child.log})"
                        for child in fleet.workers)
    config = json.dumps({"mcpServers": {"django-mcp-fleet": {"type": "http", "url": mcp_url}}})
    stop = "scripts/fleet stop" + ("" if args.run_dir is None else f" --run-dir {fleet.run_dir}")
    return f"""
django_mcp fleet: {len(fleet.workers)} {args.server} worker(s) behind nginx, PostgreSQL database {fleet.database}, Redis
  MCP endpoint:   {mcp_url}
  Client configuration (Claude Desktop, Cursor, VS Code, ... "mcpServers" JSON):
    {config}
  Python SDK:     mcp.Client("{mcp_url}", mode="auto")
  Admin:          {public_url}/admin/  (admin / {os.environ.get('DEMO_ADMIN_PASSWORD', 'admin-demo-password')}; static files from nginx)
  OAuth metadata: {public_url}/.well-known/oauth-protected-resource/mcp
  Health:         {public_url}/healthz  {public_url}/readyz
  Workers (nginx round robin, no sticky sessions):
{workers}
  nginx:          pid {fleet.nginx.pid if fleet.nginx else '-'}, configuration {fleet.run_dir / 'nginx-site.conf'}
  Access log:     {fleet.run_dir / 'logs' / 'access.log'}  (upstream= names the worker of each request)
  Run folder:     {fleet.run_dir}
  {"Stop: " + stop if args.detach else "Ctrl-C stops everything the fleet started."}
"""


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def ignore_signals() -> None:
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def run(args: argparse.Namespace) -> int:
    stopping = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        raise KeyboardInterrupt

    for sig in SIGNALS:
        signal.signal(sig, on_signal)
    try:
        fleet = start(args)
    except KeyboardInterrupt:
        print("fleet: interrupted while starting; stopped what had started", file=sys.stderr)
        return 130
    except FleetError as exc:
        print(f"fleet: {exc}", file=sys.stderr)
        return 1
    public_url = json.loads((fleet.run_dir / STATE).read_text())["public_url"]
    print(banner(fleet, public_url, args), flush=True)
    if args.detach:
        return 0
    status = 0
    try:
        while not stopping:
            dead = [child for child in fleet.children() if not child.running]
            if dead:
                for child in dead:
                    print(f"fleet: {child.name} exited ({child.proc.returncode if child.proc else '?'}); "
                          f"log {child.log}", file=sys.stderr)
                status = 1
                break
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        ignore_signals()  # a second Ctrl-C must not cut the teardown short
        print("fleet: stopping nginx and the workers", file=sys.stderr, flush=True)
        fleet.stop()
        (fleet.run_dir / STATE).unlink(missing_ok=True)
        print(f"fleet: stopped (logs kept in {fleet.run_dir / 'logs'})", file=sys.stderr, flush=True)
    return status


def stop(args: argparse.Namespace) -> int:
    """Stop a fleet from its ``fleet.json``: the foreground process if alive, else each process."""
    run_dir = args.run_dir or (Path(CURRENT.read_text().strip()) if CURRENT.is_file() else None)
    state_path = run_dir / STATE if run_dir else None
    if state_path is None or not state_path.is_file():
        print("fleet: no running fleet found (pass --run-dir)", file=sys.stderr)
        return 1
    state = json.loads(state_path.read_text())
    if not state["detached"]:
        try:
            os.kill(state["pid"], signal.SIGTERM)  # the foreground fleet stops itself and removes the file
            return 0
        except ProcessLookupError:
            pass  # it died without stopping its processes: stop them here
    for process in state["processes"]:
        stop_group(process["pid"], 5.0)
    fleet_services = services.Services(started=list(state["services_started"]))
    if state["throwaway"]:
        forget(fleet_services, state["database"] if state["created_database"] else None, state["redis_prefix"])
    services.stop_started(fleet_services)
    for folder in ("static", "nginx-temp"):
        shutil.rmtree(Path(state["run_dir"]) / folder, ignore_errors=True)
    state_path.unlink()
    print(f"fleet: stopped (logs kept in {Path(state['run_dir']) / 'logs'})")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    return stop(args) if args.action == "stop" else run(args)


if __name__ == "__main__":
    sys.exit(main())
