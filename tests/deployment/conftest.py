"""
The fleet of docs/howto/deployment.md, started once for the module: ``python -m deploy.fleet``
(what ``scripts/fleet`` runs, minus the venv bootstrap) with two daphne workers behind nginx on
``deploy/nginx.conf``, a throwaway PostgreSQL database and Redis prefix, on free ports.

Needs nginx (``scripts/install-nginx``), PostgreSQL on 127.0.0.1:5432 and Redis on
127.0.0.1:6379. Without them the tests skip; under ``CI=true`` they fail instead, so CI cannot
pass without running them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from deploy.fleet import nginx, services
from tests.conftest import in_ci, missing_services
from tests.live import ROOT


#: Starting takes about 10 s (migrate, collectstatic, demo data, workers); a loaded CI machine more.
START_TIMEOUT = 120


@dataclass(frozen=True)
class Fleet:
    """A running fleet, as its ``fleet.json`` describes it."""

    public_url: str
    port: int
    workers: tuple[str, ...]  # "127.0.0.1:PORT" of each worker, as nginx's access log names them
    access_log: Path
    output: Path

    @property
    def mcp_url(self) -> str:
        return f"{self.public_url}/mcp"


def require_fleet() -> None:
    """Skip (fail under CI=true) when nginx, PostgreSQL or Redis is missing."""
    missing = list(missing_services())
    if nginx.find_binary() is None:
        missing.append("nginx (run scripts/install-nginx)")
    if not missing:
        return
    reason = f"the deployment test needs {', '.join(missing)}"
    if in_ci():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason=reason)


def _stop(process: subprocess.Popen[bytes], state: dict | None) -> None:
    """SIGTERM the fleet (it stops its children); SIGKILL whatever is left if it could not."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    # Each child runs in a process group of its own: after a fleet that died without stopping
    # them, they go here, nginx included.
    for child in (state or {}).get("processes", []):
        try:
            os.killpg(child["pid"], signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if state and state.get("throwaway"):  # normally dropped by the fleet itself; not after a SIGKILL
        services.drop_database(services.Services(), state["database"])


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    require_fleet()
    run_dir = tmp_path_factory.mktemp("fleet")
    output = run_dir / "fleet.out"
    command = [sys.executable, "-m", "deploy.fleet", "--workers", "2", "--server", "daphne", "--port", "0",
               "--throwaway", "--run-dir", str(run_dir), "--no-install", "--no-start-services"]
    with output.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    state_path, state = run_dir / "fleet.json", None
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while state is None:
            if process.poll() is not None:
                pytest.fail(f"the fleet exited ({process.returncode}) before it was ready:\n{output.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the fleet was not ready within {START_TIMEOUT} s:\n{output.read_text()}")
            if state_path.is_file():
                state = json.loads(state_path.read_text())
            else:
                time.sleep(0.2)
        workers = tuple(f"127.0.0.1:{child['port']}" for child in state["processes"] if child["name"] != "nginx")
        yield Fleet(state["public_url"], state["port"], workers, Path(state["access_log"]), output)
    finally:
        _stop(process, state)
    assert not state_path.exists(), "the fleet did not clean up after SIGTERM:\n" + output.read_text()
