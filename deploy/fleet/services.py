"""
PostgreSQL and Redis for the fleet: used when they answer, started when they do not and this
machine allows it (the commands CI uses, .ci/run), and stopped again at the end only when the fleet
started them. Also the fleet's database, created when missing, and at the end of a ``--throwaway``
run its database dropped and its Redis keys deleted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .processes import FleetError, port_open


@dataclass
class Services:
    """Where PostgreSQL and Redis are, and which of them this fleet started."""

    pg_host: str = "127.0.0.1"
    pg_port: int = 5432
    pg_user: str = "postgres"
    redis_host: str = "127.0.0.1"
    redis_port: int = 6379
    started: list[str] = field(default_factory=list)

    @property
    def redis_url(self) -> str:
        return f"redis://{self.redis_host}:{self.redis_port}/0"


def _wait_port(host: str, port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not port_open(host, port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _run(command: list[str]) -> bool:
    try:
        return subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _start_postgres() -> bool:
    clusters = sorted(os.listdir("/etc/postgresql")) if Path("/etc/postgresql").is_dir() else []
    if not clusters or not shutil.which("pg_ctlcluster"):
        return False
    return _run(["pg_ctlcluster", "--skip-systemctl-redirect", clusters[-1], "main", "start"])


def _stop_postgres() -> None:
    clusters = sorted(os.listdir("/etc/postgresql")) if Path("/etc/postgresql").is_dir() else []
    if clusters:
        _run(["pg_ctlcluster", "--skip-systemctl-redirect", clusters[-1], "main", "stop"])


def _start_redis(port: int) -> bool:
    if not shutil.which("redis-server"):
        return False
    for folder in ("/var/lib/redis", "/var/log/redis"):
        Path(folder).mkdir(parents=True, exist_ok=True)
    return _run(["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", str(port),
                 "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"])


def _stop_redis(port: int) -> None:
    if shutil.which("redis-cli"):
        _run(["redis-cli", "-p", str(port), "shutdown", "nosave"])


def ensure(services: Services, *, may_start: bool, say: Callable[[str], None] = print) -> None:
    """Make PostgreSQL and Redis answer, or raise ``FleetError`` saying how to provide them."""
    wanted = [("PostgreSQL", services.pg_host, services.pg_port, _start_postgres),
              ("Redis", services.redis_host, services.redis_port, lambda: _start_redis(services.redis_port))]
    for name, host, port, start in wanted:
        if port_open(host, port):
            continue
        local = host in ("127.0.0.1", "localhost")
        if not (may_start and local):
            raise FleetError(f"{name} does not answer on {host}:{port}; start it (the fleet starts local services "
                             "only without --no-start-services).")
        say(f"fleet: {name} is not running on {host}:{port}; starting it")
        try:
            ok = start() and _wait_port(host, port, 30)
        except OSError:
            ok = False
        if not ok:
            raise FleetError(f"{name} does not answer on {host}:{port} and could not be started here (needs the "
                             "system package and root); start it yourself.")
        services.started.append(name)


def stop_started(services: Services) -> None:
    """Stop what ``ensure`` started, and nothing else."""
    if "Redis" in services.started:
        _stop_redis(services.redis_port)
    if "PostgreSQL" in services.started:
        _stop_postgres()
    services.started.clear()


def _admin_connection(services: Services):  # -> psycopg.Connection
    import psycopg

    return psycopg.connect(host=services.pg_host, port=services.pg_port, user=services.pg_user,
                           password=os.environ.get("POSTGRES_PASSWORD", ""), dbname="postgres", autocommit=True,
                           connect_timeout=5)


def create_database(services: Services, name: str) -> bool:
    """Create database ``name`` unless it exists; True when it was created."""
    from psycopg import sql

    with _admin_connection(services) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return True


def drop_database(services: Services, name: str) -> None:
    from psycopg import sql

    with _admin_connection(services) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def forget_prefix(services: Services, prefix: str) -> None:
    """Delete a throwaway fleet's Redis keys (channel groups live for a day otherwise)."""
    import redis

    client = redis.Redis(host=services.redis_host, port=services.redis_port, socket_timeout=5)
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=500):
            client.delete(key)
    finally:
        client.close()
