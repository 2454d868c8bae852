"""
The example project as the fleet serves it: the environment of every Django process
(``example_project.settings_fleet`` reads it), what runs once before the workers start, and the
worker command lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from .processes import HOST, FleetError


ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "example_project.settings_fleet"
APP = "example_project.asgi:application"
SERVERS = ("daphne", "uvicorn")
# The listen backlog of docs/howto/deployment.md ("Reconnections after a restart"); the kernel
# caps it at net.core.somaxconn.
BACKLOG = 4096


def django_env(*, secret_key: str, public_url: str, allowed_hosts: list[str], database: str, pg_host: str,
               pg_port: int, pg_user: str, redis_url: str, channels_prefix: str, static_root: Path) -> dict[str, str]:
    """The environment of every Django process of the fleet: the same everywhere, as it must be."""
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "DJANGO_SECRET_KEY": secret_key,
        "PUBLIC_BASE_URL": public_url,
        "DJANGO_ALLOWED_HOSTS": ",".join(allowed_hosts),
        "POSTGRES_DB": database,
        "POSTGRES_HOST": pg_host,
        "POSTGRES_PORT": str(pg_port),
        "POSTGRES_USER": pg_user,
        "REDIS_URL": redis_url,
        "CHANNELS_PREFIX": channels_prefix,
        "STATIC_ROOT": str(static_root),
        "PYTHONUNBUFFERED": "1",
    })
    env.pop("DJANGO_DEBUG", None)
    return env


def manage(env: Mapping[str, str], *args: str, log: Path) -> None:
    """``python manage.py ARGS`` with the fleet's environment; its output appended to ``log``."""
    with log.open("ab") as out:
        out.write(("$ manage.py " + " ".join(args) + "\n").encode())
        out.flush()
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=dict(env), stdout=out,
                                stderr=subprocess.STDOUT, timeout=600)
    if result.returncode != 0:
        text = log.read_text(errors="replace").splitlines()[-30:]
        raise FleetError(f"manage.py {' '.join(args)} failed (exit {result.returncode}); {log}:\n" + "\n".join(text))


def prepare(env: Mapping[str, str], log: Path) -> None:
    """What a deployment runs once, before any worker starts: the schema, the static files, the data."""
    manage(env, "migrate", "--noinput", log=log)
    manage(env, "collectstatic", "--noinput", log=log)
    manage(env, "mcp_demo_data", log=log)


def worker_command(server: str, port: int) -> list[str]:
    """
    One worker on 127.0.0.1 only, trusting the proxy headers nginx sets (and nobody else can reach
    it), listening with the guide's backlog: when a worker restarts its clients reconnect at once.
    """
    if server == "daphne":
        # daphne's -b/-p take Twisted's backlog of 50; its endpoint syntax takes a deeper one.
        endpoint = f"tcp:port={port}:interface={HOST}:backlog={BACKLOG}"
        return [sys.executable, "-m", "daphne", "-e", endpoint, "--proxy-headers", APP]
    if server == "uvicorn":
        # Channels applications do not speak ASGI lifespan; --forwarded-allow-ips names nginx. Idle
        # connections stay open longer than nginx keeps them (keepalive_timeout, 60 s): uvicorn's
        # own 5 s would close connections nginx is about to reuse, failing the POST sent on one.
        return [sys.executable, "-m", "uvicorn", "--host", HOST, "--port", str(port), "--backlog", str(BACKLOG),
                "--proxy-headers", "--forwarded-allow-ips", HOST, "--timeout-keep-alive", "75", "--lifespan", "off",
                APP]
    raise FleetError(f"unknown server {server!r}; choose one of {', '.join(SERVERS)}")


def require_server(server: str) -> None:
    """Fail early, and say how to install it, when the chosen server is not importable."""
    try:
        __import__(server)
    except ImportError as exc:
        hint = 'pip install -e ".[bench]"  (uvicorn[standard])' if server == "uvicorn" else "pip install daphne"
        raise FleetError(f"{server} is not installed in {sys.prefix}: {hint}") from exc
