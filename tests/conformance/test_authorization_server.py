"""
The official conformance harness's *authorization-server* scenarios against our issuer.

``@modelcontextprotocol/conformance@0.2.0-alpha.12`` has a third mode beside ``server`` and
``client``: ``conformance authorization --url <issuer>``. It runs every authorization-server
scenario in one process, in order, and exits 1 if any check failed:

- ``authorization-server-metadata-endpoint``: RFC 8414 metadata at
  ``<issuer>/.well-known/oauth-authorization-server`` (200, JSON, ``issuer`` equal to the URL given,
  endpoints, ``code`` and ``S256``), plus a WARNING-level check for
  ``client_id_metadata_document_supported``;
- ``authorization-code-grant``: a full authorization code + PKCE grant. It needs a client that is
  already registered with ``http://127.0.0.1:<port>/callback`` as a redirect URI (``--client-id``,
  ``--port``); it prints the authorization URL, starts a callback server on that port and waits up
  to five minutes for a person to log in and consent in a browser; then it redeems the code and
  checks the token response (200, JSON, ``Cache-Control: no-store``, ``access_token``,
  ``token_type``). Without ``--client-id`` the check is SKIPPED, which does not fail the run.

This test plays the person: it registers a public client through our RFC 7591 endpoint, reads the
harness's output until the authorization URL appears, logs in as alice and approves the consent page
with :class:`tests.oauth.flow.Browser`, and delivers the redirect to the harness's callback server.
Two runs: with ``--resource <mcp url>``, as MCP clients must (MCP spec 2025-11-25,
basic/authorization, "Resource Parameter Implementation"; RFC 8707), and without it, as a plain
OAuth 2.1 client.

A run passes when the harness exits 0 *and* both scenarios really ran (each has a SUCCESS check and
none was SKIPPED), since a skipped grant would leave the exit code at 0. The ``authorization``
subcommand has no ``--expected-failures`` option, and no run needs one today.

By hand, with a server from ``tests/live.py`` on the OAuth test settings (``MCP_TEST_OAUTH=1``)::

    cd tools/conformance/alpha && npx --no-install conformance authorization \\
        --url http://127.0.0.1:PORT --client-id ID --resource http://127.0.0.1:PORT/mcp -p 3000
"""

from __future__ import annotations

import dataclasses
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest

from tests.conformance.test_official_suite import (
    _ANSI,
    LEGS,
    Check,
    _harness_command,
    failure_report,
    read_checks,
    summary_block,
)
from tests.live import LiveServer, free_port
from tests.oauth import conftest as oauth_fixtures
from tests.oauth.conftest import PASSWORDS
from tests.oauth.flow import Browser

pytestmark = [pytest.mark.conformance, pytest.mark.live]

# The alpha harness the official legs pin (the stable 0.1.16 has no authorization mode).
ALPHA = next(leg for leg in LEGS if leg.harness == "alpha")
RUN_TIMEOUT = 120  # seconds; a run takes a few seconds, but the harness would wait 300 s for a callback
SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")
USER = "alice"

# tests/oauth/conftest.py's fixtures, which pytest only offers to tests under tests/oauth/: the live
# server on the test settings with MCP_TEST_OAUTH=1 and the users alice, admin and carol.
oauth_env = oauth_fixtures.oauth_env
oauth_server = oauth_fixtures.oauth_server

# The harness names its result folders ``authorization-server-<scenario>-<ISO time>``.
_RUN_DIR = re.compile(r"^authorization-server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def register_client(server: LiveServer, callback: str) -> str:
    """A public client (``none`` auth, as MCP clients are) registered through RFC 7591; its id."""
    metadata = httpx2.get(f"{server.url}/.well-known/oauth-authorization-server").json()
    response = httpx2.post(metadata["registration_endpoint"], json={
        "client_name": "MCP conformance (authorization server)", "redirect_uris": [callback],
        "grant_types": ["authorization_code"], "response_types": ["code"], "token_endpoint_auth_method": "none"})
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def deliver(callback_url: str, timeout: float = 10.0) -> None:
    """
    Send the browser's final redirect to the harness's callback server. The harness prints the URL
    right after asking Node to listen, so retry briefly in case the socket is not bound yet.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx2.get(callback_url, timeout=5.0)
            return
        except httpx2.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def scenario_checks(output_dir: Path) -> list[Check]:
    """The checks of every scenario, named by scenario rather than by result folder."""
    checks = []
    for check in read_checks(output_dir):
        match = _RUN_DIR.match(check.scenario)
        checks.append(dataclasses.replace(check, scenario=match["scenario"]) if match else check)
    return checks


def vacuous_scenarios(checks: list[Check]) -> list[str]:
    """Scenarios that did not run, or ran without a SUCCESS, or skipped a check: a hollow exit 0."""
    problems = []
    for scenario in SCENARIOS:
        own = [c for c in checks if c.scenario == scenario]
        if not own:
            problems.append(f"{scenario}: no checks.json")
        elif not any(c.status == "SUCCESS" for c in own):
            problems.append(f"{scenario}: no SUCCESS check")
        problems += [f"{scenario} :: {c.id}: SKIPPED: {c.message}" for c in own if c.status == "SKIPPED"]
    return problems


@pytest.mark.parametrize("with_resource", [True, False], ids=["resource", "no-resource"])
def test_authorization_server_scenarios(with_resource: bool, oauth_server: LiveServer, tmp_path: Path) -> None:
    name = "authorization-server" + ("" if with_resource else "-no-resource")
    command, folder = _harness_command(dataclasses.replace(ALPHA, name=name))
    port = free_port()
    client_id = register_client(oauth_server, f"http://127.0.0.1:{port}/callback")
    authorization_endpoint = httpx2.get(
        f"{oauth_server.url}/.well-known/oauth-authorization-server").json()["authorization_endpoint"]

    output_dir = tmp_path / f"results-{name}"
    argv = [*command, "authorization", "--url", oauth_server.url, "--client-id", client_id, "-p", str(port),
            "-o", str(output_dir)]
    if with_resource:
        argv += ["--resource", oauth_server.mcp_url]

    env = dict(os.environ)
    # Any `node` the harness spawns must be the local Node 22, too.
    env["PATH"] = f"{folder / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env["FORCE_COLOR"] = "0"
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)

    # A thread reads the output, so the main thread can act on the authorization URL while the
    # harness blocks on its callback, and can give up on a harness that hangs.
    lines: list[str] = []
    urls: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = _ANSI.sub("", line)
            lines.append(line)
            if line.startswith(authorization_endpoint + "?"):
                urls.put(line.strip())
        urls.put(None)  # end of output

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + RUN_TIMEOUT
    browser = Browser(oauth_server.url)
    problem = ""
    try:
        try:
            url = urls.get(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            url = None
            problem = f"the harness printed no authorization URL within {RUN_TIMEOUT} s"
        if url is not None:
            try:
                # The redirect is handed over as is, errors included: the harness judges it.
                deliver(browser.authorize(url, USER, PASSWORDS[USER]))
            except (AssertionError, httpx2.HTTPError) as exc:
                problem = f"logging in as {USER} and consenting to {url} failed: {str(exc)[:500]}"
        if problem:
            proc.kill()
        try:
            returncode: int | None = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            returncode = None
            problem = problem or f"the harness did not finish within {RUN_TIMEOUT} s"
    finally:
        browser.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
    stdout = "".join(lines)
    (tmp_path / f"harness-{name}.log").write_text(stdout)

    total = re.findall(r"^Total:.*$", stdout, flags=re.MULTILINE)
    print(f"[{name}] conformance {ALPHA.version} authorization: {total[-1] if total else '(no Total: line)'}")
    print(summary_block(stdout))
    checks = scenario_checks(output_dir)
    report = failure_report(checks, set())
    print(report)

    hollow = vacuous_scenarios(checks)
    if returncode == 0 and not problem and not hollow:
        return
    header = f"authorization-server leg {name!r} ({ALPHA.version}) " + (
        f"exited with {returncode}" if returncode is not None else "was killed")
    details = [problem] if problem else []
    if hollow:
        details.append("scenarios that did not really run:\n  " + "\n  ".join(hollow))
    tail = "\n".join(stdout.splitlines()[-25:])
    pytest.fail(
        f"{header}\n{total[-1] if total else '(no Total: line)'}\n" + "\n".join(details) + f"\n{report}\n"
        f"harness output (tail):\n{tail}\nresults: {output_dir}\n"
        f"server log {oauth_server.log_path} (tail):\n{oauth_server.log_tail(15)}",
        pytrace=False,
    )
