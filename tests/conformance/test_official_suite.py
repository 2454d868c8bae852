"""
The official MCP conformance suite (``@modelcontextprotocol/conformance``) against a live daphne server.

Three legs, one test each:

- ``stable``: 0.1.16, ``server --suite all`` (2025-06-18 / 2025-11-25, the stateful wire);
- ``r2025``: 0.2.0-alpha.12, ``server --requirements 2025-11-25``;
- ``r2026``: 0.2.0-alpha.12, ``server --requirements 2026-07-28`` (the stateless wire).

The harnesses live in ``tools/conformance/{stable,alpha}/`` with a local Node 22 (both crash on Node
20); ``scripts/install-conformance`` installs them and ``scripts/test`` runs it first. A leg passes
when the harness exits 0 and reports no failed check at all, unscored scenarios included. If
``tests/conformance/expected-failures-<leg>.yml`` exists it is passed with ``--expected-failures``
(the harness then exits 0 only if the failures match it exactly); those files are temporary while
work is in progress.

By hand (server in one shell, harness in another)::

    scripts/conformance-server 3001
    cd tools/conformance/stable && npx --no-install conformance server --url http://127.0.0.1:3001/mcp --suite all
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.live import ROOT, GunicornServer, LiveServer, UvicornServer, all_started, fresh_sqlite_env


pytestmark = [pytest.mark.conformance, pytest.mark.live]

HERE = Path(__file__).resolve().parent
TOOLS = ROOT / "tools" / "conformance"
LEG_TIMEOUT = 300  # seconds per leg; a full run takes a few seconds against a healthy local server


@dataclass(frozen=True)
class Leg:
    name: str
    harness: str  # folder under tools/conformance/
    version: str  # the pinned harness version
    args: tuple[str, ...]


LEGS = [
    Leg("stable", "stable", "0.1.16", ("--suite", "all")),
    Leg("r2025", "alpha", "0.2.0-alpha.12", ("--requirements", "2025-11-25")),
    Leg("r2026", "alpha", "0.2.0-alpha.12", ("--requirements", "2026-07-28")),
]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def _harness_command(leg: Leg) -> tuple[list[str], Path]:
    """``[node, bin.js]`` for the leg's harness, and its folder; skips if it is not installed."""
    folder = TOOLS / leg.harness
    node = folder / "node_modules" / ".bin" / "node"
    package_dir = folder / "node_modules" / "@modelcontextprotocol" / "conformance"
    package_json = package_dir / "package.json"
    if not node.exists() or not package_json.exists():
        if shutil.which("npm") is None:
            reason = "npm is not installed, so the official conformance harness is not available"
        else:
            reason = f"the conformance harness is not installed in {folder.relative_to(ROOT)}: run scripts/install-conformance"
        if _in_ci():
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason=reason)
    package = json.loads(package_json.read_text())
    if package.get("version") != leg.version:
        pytest.fail(
            f"{folder.relative_to(ROOT)} has conformance {package.get('version')}, expected {leg.version}: "
            "run scripts/install-conformance",
            pytrace=False,
        )
    bin_field = package.get("bin", "dist/index.js")
    entry = bin_field if isinstance(bin_field, str) else bin_field.get("conformance", "dist/index.js")
    return [str(node), str(package_dir / entry)], folder


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """
    A daphne server of ``tests.asgi:application`` on a migrated SQLite database of its own: the
    suite checks exact listings (every prompt has a description…), so rows other live tests
    leave in the shared database (stored prompts) must not reach it, whatever order they run in.
    """
    env = fresh_sqlite_env(tmp_path_factory.mktemp("conformance-sqlite"))
    with LiveServer(env=env, name="conformance") as server:
        yield server


# --- reading the results -----------------------------------------------------------------------

_RUN_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Check:
    scenario: str
    id: str
    status: str
    message: str


def read_checks(output_dir: Path) -> list[Check]:
    """Every check of every ``checks.json`` under ``output_dir``."""
    checks = []
    for path in sorted(output_dir.rglob("checks.json")):
        match = _RUN_DIR.match(path.parent.name)
        scenario = match["scenario"] if match else path.parent.name
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            checks.append(Check(scenario, "(checks.json)", "FAILURE", f"unreadable {path}: {exc}"))
            continue
        for entry in entries:
            message = entry.get("errorMessage") or ""
            if not message and entry.get("status") in {"FAILURE", "WARNING"}:
                message = entry.get("description") or ""
                details = entry.get("details")
                if details:
                    message = f"{message} details={json.dumps(details, sort_keys=True)[:500]}"
            checks.append(Check(scenario, entry.get("id", "?"), entry.get("status", "?"), message))
    return checks


def unscored_scenarios(stdout: str) -> set[str]:
    """Scenarios the alpha lists under ``Not scored for <rev>:`` (they do not affect its exit code)."""
    names: set[str] = set()
    in_block = False
    for line in stdout.splitlines():
        if line.startswith("Not scored for"):
            in_block = True
            continue
        if in_block:
            match = re.match(r"^\s+[✓✗]\s+(\S+)", line)
            if match:
                names.add(match[1])
            elif line.strip():
                in_block = False
    return names


def summary_block(stdout: str) -> str:
    """From ``=== SUMMARY ===`` to the end (the per-scenario lines, ``Total:`` and the unscored block)."""
    start = stdout.find("=== SUMMARY ===")
    return stdout[start:].strip() if start >= 0 else "(no summary printed)"


def failure_report(checks: list[Check], unscored: set[str]) -> str:
    """Failed checks (scored first), then warnings: ``scenario :: check-id: errorMessage``."""
    groups = [
        ("FAILURES", [c for c in checks if c.status == "FAILURE" and c.scenario not in unscored]),
        ("FAILURES in scenarios not scored", [c for c in checks if c.status == "FAILURE" and c.scenario in unscored]),
        ("WARNINGS", [c for c in checks if c.status == "WARNING"]),
    ]
    lines = []
    for title, selected in groups:
        if selected:
            lines.append(f"{title} ({len(selected)}):")
            lines += [f"  {c.scenario} :: {c.id}: {c.message}" for c in selected]
    return "\n".join(lines) or "(no failed or warning checks in checks.json)"


# --- the legs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("leg", LEGS, ids=[leg.name for leg in LEGS])
def test_official_conformance_suite(leg: Leg, conformance_server: LiveServer, tmp_path: Path) -> None:
    expected = HERE / f"expected-failures-{leg.name}.yml"
    run_leg(leg, conformance_server, tmp_path, expected if expected.exists() else None)


@pytest.fixture(scope="module")
def plain_view_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LiveServer]]:
    """
    The plain view (``django_mcp.views.McpView``) on gunicorn, two sync workers (WSGI), and on
    uvicorn running Django's own ASGI handler, each on a migrated SQLite database of its own.
    """
    with all_started({
        "wsgi": GunicornServer(env=fresh_sqlite_env(tmp_path_factory.mktemp("conformance-wsgi")), workers=2,
                               name="conformance-gunicorn"),
        "asgi": UvicornServer(env=fresh_sqlite_env(tmp_path_factory.mktemp("conformance-asgi")),
                              name="conformance-uvicorn"),
    }) as servers:
        yield dict(servers)


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
@pytest.mark.parametrize("leg", LEGS, ids=[leg.name for leg in LEGS])
def test_official_conformance_suite_on_the_plain_view(leg: Leg, kind: str, plain_view_servers: dict[str, LiveServer],
                                                     tmp_path: Path) -> None:
    """
    Under Django's ASGI handler the plain view passes every scenario, as the Channels endpoint
    does. Under WSGI it answers each request with one JSON body, and the scenarios that need more
    fail as ``expected-failures-wsgi-<leg>.yml`` lists them, each with the spec's reason; the
    harness checks the list exactly (a listed scenario that passes fails the leg too).
    """
    expected = HERE / f"expected-failures-wsgi-{leg.name}.yml" if kind == "wsgi" else None
    run_leg(leg, plain_view_servers[kind], tmp_path, expected)


def run_leg(leg: Leg, server: LiveServer, tmp_path: Path, expected: Path | None) -> None:
    """Run one leg of the harness against ``server``; fail with every failed check named."""
    command, folder = _harness_command(leg)
    output_dir = tmp_path / f"results-{leg.name}"
    argv = [*command, "server", "--url", server.mcp_url, *leg.args, "-o", str(output_dir)]
    if expected is not None:
        argv += ["--expected-failures", str(expected)]

    env = dict(os.environ)
    # Any `node` the harness spawns must be the local Node 22, too.
    env["PATH"] = f"{folder / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env["FORCE_COLOR"] = "0"
    try:
        result = subprocess.run(
            argv,
            check=False,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=LEG_TIMEOUT,
        )
        stdout, returncode = _ANSI.sub("", result.stdout), result.returncode
    except subprocess.TimeoutExpired as exc:
        partial = exc.output.decode(errors="replace") if isinstance(exc.output, bytes) else (exc.output or "")
        stdout, returncode = _ANSI.sub("", partial), None
    (tmp_path / f"harness-{leg.name}.log").write_text(stdout)

    total = re.findall(r"^Total:.*$", stdout, flags=re.MULTILINE)
    print(f"[{leg.name}] conformance {leg.version} {' '.join(leg.args)}: {total[-1] if total else '(no Total: line)'}")
    print(summary_block(stdout))

    checks = read_checks(output_dir)
    report = failure_report(checks, unscored_scenarios(stdout))
    print(report)

    # Every check counts, the unscored extension scenarios (tasks-*) included: the harness's exit
    # code ignores those under --requirements, and they all pass since django_mcp.tasks.
    counted = re.search(r"(\d+) passed, (\d+) failed", total[-1]) if total else None
    if returncode == 0 and counted is not None and (counted.group(2) == "0" or expected is not None):
        return  # with a list of expected failures, the harness's exit code says they match it exactly
    header = (
        f"conformance leg {leg.name!r} ({leg.version}, {' '.join(leg.args)}) "
        + (f"timed out after {LEG_TIMEOUT} s" if returncode is None else f"exited with {returncode}")
        + (f" with --expected-failures {expected.relative_to(ROOT)}" if expected is not None else "")
    )
    tail = "\n".join(stdout.splitlines()[-25:]) if not checks else ""
    pytest.fail(
        f"{header}\n{total[-1] if total else '(no Total: line)'}\n{report}\n"
        + (f"harness output (tail):\n{tail}\n" if tail else "")
        + f"results: {output_dir}\nserver log {server.log_path} (tail):\n{server.log_tail(15)}",
        pytrace=False,
    )
