"""
Issue 29: "A project migrated on the current main upgrades with ``migrate`` alone and keeps its
tool rows, call log, query tools, prompts, sessions and tokens."

The test migrates a fresh database with the code of ``OLD_LAYOUT_COMMIT`` (every model in the
``django_mcp`` app), fills it with rows of everything the issue lists, upgrades it with the current
checkout's ``migrate --noinput``, checks that ``makemigrations --check --dry-run`` finds nothing to
do, and finds every row again: each model by its class name, in whatever app it lives now.

1. ``git archive OLD_LAYOUT_COMMIT`` is unpacked in a temporary directory (read-only for the
   repository). No git, no repository or no such commit: skipped, a failure under ``CI=true``.
2. Old half, cwd and ``PYTHONPATH`` the unpacked tree (so ``django_mcp`` and ``tests.settings`` are
   the old ones; ``fill_old_layout.py`` checks where they came from): ``migrate``, then
   ``fill_old_layout.py``, which prints the inventory (per model: app, table, count, rows).
3. New half, cwd and ``PYTHONPATH`` this checkout: ``migrate --noinput``, ``makemigrations --check
   --dry-run``, then ``check_upgraded.py``, which prints where each model lives now and what is missing.
   It also asks, as the admin does (``user.has_perm("<current app label>.<codename>")``), whether a
   staff user still holds every permission on the MCP models it held before: a move that leaves
   the old content types behind takes staff's admin access to the moved models away.

On SQLite always, on PostgreSQL (127.0.0.1:5432, user postgres) in a database the test creates
and drops; without PostgreSQL the PostgreSQL leg skips, except under ``CI=true``. The report of each
leg is printed (``pytest -rP`` shows it): model, old app.table → new app.table, rows.
"""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import in_ci
from tests.live import ROOT, server_env

pytestmark = pytest.mark.live

#: The last commit with every model in the ``django_mcp`` app (McpTool, McpToolCall, McpQueryTool,
#: McpPrompt, McpSession, McpEvent; PersonalAccessToken in django_mcp.oauth), before issue 29 moves
#: feature models into apps of their own. Databases migrated on it must upgrade with ``migrate``.
OLD_LAYOUT_COMMIT = "bec472d46972d6a3c41ee8c3abc57f756d954aff"

HERE = Path(__file__).resolve().parent
FILL_SCRIPT = HERE / "fill_old_layout.py"
CHECK_SCRIPT = HERE / "check_upgraded.py"

#: What the issue says an upgrade keeps: the inventory must hold rows of each (by class name).
REQUIRED_MODELS = {
    "McpTool": "tool rows", "McpToolCall": "call log", "McpQueryTool": "query tools", "McpPrompt": "prompts",
    "McpSession": "sessions", "McpEvent": "stream events", "PersonalAccessToken": "personal access tokens",
    "Application": "OAuth applications", "AccessToken": "OAuth access tokens", "RefreshToken": "OAuth refresh tokens",
}

POSTGRES = ("127.0.0.1", 5432)
PG_ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
STEP_TIMEOUT = 180.0

#: Settings switches a developer's shell may have set; the children run with tests.settings' defaults
#: (no tool admin sync after migrate: it would add tool rows of its own between fill and check).
UNSET = ("MCP_TEST_TOOL_ADMIN", "MCP_TEST_CALL_LOG", "MCP_TEST_OAUTH", "MCP_TEST_SITE", "MCP_TEST_CHANNEL_LAYER",
         "MCP_TEST_PG_HOST", "MCP_TEST_PG_PORT", "MCP_TEST_PG_USER", "MCP_TEST_DEBUG")


def unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"CI=true but the old layout cannot be exported: {reason}", pytrace=False)
    pytest.skip(reason=reason)


def export_old_layout(destination: Path) -> None:
    """``git archive OLD_LAYOUT_COMMIT | tar -x -C destination``; skips (fails in CI) without git or the commit."""
    git = shutil.which("git")
    if git is None:
        unavailable("git is not installed: cannot export the old layout")
    probe = subprocess.run([git, "-C", str(ROOT), "rev-parse", "--git-dir"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        unavailable(f"{ROOT} is not a git checkout: cannot export the old layout ({probe.stderr.strip()})")
    probe = subprocess.run([git, "-C", str(ROOT), "cat-file", "-e", f"{OLD_LAYOUT_COMMIT}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        unavailable(f"commit {OLD_LAYOUT_COMMIT} (OLD_LAYOUT_COMMIT) is not in the repository "
                    f"(a shallow clone?): {probe.stderr.strip()}")
    archive = subprocess.run([git, "-C", str(ROOT), "archive", "--format=tar", OLD_LAYOUT_COMMIT],
                             capture_output=True, timeout=120, check=False)
    if archive.returncode != 0:
        unavailable(f"git archive {OLD_LAYOUT_COMMIT} failed: {archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
            tar.extractall(destination, filter="data")
        else:  # pragma: no cover - our own commit's archive
            tar.extractall(destination)


@pytest.fixture(scope="module")
def old_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked old layout, shared by the SQLite and the PostgreSQL leg."""
    destination = tmp_path_factory.mktemp("old-layout")
    started = time.monotonic()
    export_old_layout(destination)
    assert (destination / "django_mcp" / "models.py").is_file(), "the export has no django_mcp/models.py"
    assert (destination / "tests" / "settings.py").is_file(), "the export has no tests/settings.py"
    print(f"exported {OLD_LAYOUT_COMMIT[:12]} to {destination} in {time.monotonic() - started:.1f} s")
    return destination


def _postgres_up() -> bool:
    try:
        with socket.create_connection(POSTGRES, timeout=1.0):
            return True
    except OSError:
        return False


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """tests.settings' environment for a fresh, empty database (PostgreSQL: created and dropped here)."""
    if request.param == "sqlite":
        yield {"MCP_TEST_DATABASE": "sqlite", "MCP_TEST_SQLITE": str(tmp_path / "upgrade.sqlite3")}
        return
    if not _postgres_up():
        reason = "needs PostgreSQL on 127.0.0.1:5432 (trust auth, user postgres) for the PostgreSQL upgrade leg"
        if in_ci():
            pytest.fail(f"CI=true but PostgreSQL is down: {reason}", pytrace=False)
        pytest.skip(reason=reason)
    import psycopg
    from psycopg import sql

    name = f"test_upgrade_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield {"MCP_TEST_DATABASE": "postgres", "MCP_TEST_PG_NAME": name}
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


class Steps:
    """Runs each step in a subprocess, times it, and fails the test with its output when it fails."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def run(self, step: str, args: list[str], *, tree: Path, database: Mapping[str, str],
            ok_codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        env: dict[str, str | None] = dict.fromkeys(UNSET)
        env.update(database)
        # Only the tree of this half on the path: django_mcp and tests.settings come from it.
        env["PYTHONPATH"] = str(tree)
        env["DJANGO_SETTINGS_MODULE"] = "tests.settings"
        started = time.monotonic()
        try:
            result = subprocess.run([sys.executable, *args], cwd=tree, env=server_env(env), stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=STEP_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"{step} timed out after {STEP_TIMEOUT:g} s:\n{exc.stdout or ''}\n{exc.stderr or ''}",
                        pytrace=False)
        self.timings[step] = time.monotonic() - started
        if result.returncode not in ok_codes:
            pytest.fail(f"{step} failed (exit {result.returncode}; cwd {tree}; "
                        f"{' '.join(f'{k}={v}' for k, v in database.items())}):\n"
                        f"--- stdout ---\n{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-6000:]}",
                        pytrace=False)
        return result


def summary(inventory: dict[str, Any], report: dict[str, Any]) -> str:
    """One line per model: where it was, where it is now (app, table, many-to-many tables), rows before → after."""
    lines = []
    for name, entry in inventory["models"].items():
        result = report["models"][name]
        old = f"{entry['app_label']}.{name} [{', '.join([entry['db_table'], *entry['m2m_tables']])}]"
        if result["now"]:
            now = f"{result['now']} [{', '.join([result['db_table'], *result.get('m2m_tables', [])])}]"
            if result["now"] != f"{entry['app_label']}.{name}":
                now += " (moved)"
        else:
            now = "NOT FOUND"
        lines.append(f"{name}: {old} -> {now}; rows {entry['count']} -> {result['count']}")
        lines.extend(f"    PROBLEM: {problem}" for problem in result["problems"])
    for username, names in inventory.get("permissions", {}).items():
        lost = report["permissions"].get(username, [])
        lines.append(f"permissions of {username} on MCP models: {len(names) - len(lost)} of {len(names)} still granted")
        lines.extend(f"    PROBLEM: {problem}" for problem in lost)
    return "\n".join(lines)


def test_upgrade_keeps_rows(old_tree: Path, database: dict[str, str], tmp_path: Path) -> None:
    steps = Steps()
    started = time.monotonic()

    # Old half: the old code migrates and fills the database.
    steps.run("old: migrate", ["-m", "django", "migrate", "--noinput"], tree=old_tree, database=database)
    filled = steps.run("old: fill", ["-P", str(FILL_SCRIPT), str(old_tree)], tree=old_tree, database=database)
    inventory = json.loads(filled.stdout)
    (tmp_path / "inventory.json").write_text(json.dumps(inventory, indent=1))
    for origin in inventory["origins"].values():
        assert Path(origin).is_relative_to(old_tree.resolve()), f"the fill ran {origin}, not the old layout's"
    assert inventory["vendor"] == ("postgresql" if database["MCP_TEST_DATABASE"] == "postgres" else "sqlite")
    made = {name: entry["count"] for name, entry in inventory["models"].items()}
    missing = {name: what for name, what in REQUIRED_MODELS.items() if not made.get(name)}
    assert not missing, f"the fill made no rows of {missing}"

    # New half: this checkout upgrades the same database, finds nothing left to migrate, and the rows.
    steps.run("new: migrate", ["-m", "django", "migrate", "--noinput"], tree=ROOT, database=database)
    steps.run("new: makemigrations --check", ["-m", "django", "makemigrations", "--check", "--dry-run", "--noinput"],
              tree=ROOT, database=database)
    checked = steps.run("new: check rows", ["-P", str(CHECK_SCRIPT), str(ROOT), str(tmp_path / "inventory.json")],
                        tree=ROOT, database=database, ok_codes=(0, 1))
    report = json.loads(checked.stdout)
    for origin in report["origins"].values():
        assert Path(origin).is_relative_to(ROOT), f"the check ran {origin}, not this checkout's"

    table = summary(inventory, report)
    timings = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in steps.timings.items())
    print(f"upgrade from {OLD_LAYOUT_COMMIT[:12]} on {inventory['vendor']} "
          f"({time.monotonic() - started:.1f} s: {timings})\n{table}")
    problems = {name: result["problems"] for name, result in report["models"].items() if result["problems"]}
    assert not problems, f"rows lost in the upgrade on {inventory['vendor']}:\n{table}"
    assert not report["permissions"], f"permissions lost in the upgrade on {inventory['vendor']}:\n{table}"
