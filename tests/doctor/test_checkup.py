"""The whole walk against good servers: protected (with and without a token) and open, in both eras."""

from __future__ import annotations

import json

from django_mcp.doctor.checkup import diagnose
from django_mcp.doctor.findings import FAIL, OK, SKIP, WARN
from django_mcp.doctor.visit import Visit
from tests.live import LiveServer, free_port

from .conftest import INSPECTOR, PROGRESS, by_check, doctor


PROGRESS_ARGUMENTS = {"steps": 5, "delay": 0.2}
NEED_A_TOKEN = {"token", "legacy", "modern", "sse", "sse-buffering"}


def test_a_protected_server_passes_every_check_it_can_without_a_token(protected_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(protected_server.mcp_url, origin=INSPECTOR, progress_tool="slow_steps",
                                       progress_arguments=PROGRESS_ARGUMENTS)))
    # And the server's fetch of a client ID metadata document, without --client-id-url (tests/doctor/test_cimd.py).
    assert {check for check, finding in findings.items() if finding.status != OK} == NEED_A_TOKEN | {"cimd-fetch"}
    assert all(findings[check].status == SKIP for check in NEED_A_TOKEN)
    assert "--token" in findings["legacy"].seen
    assert findings["challenge"].seen.startswith(
        f"resource_metadata={protected_server.url}/.well-known/oauth-protected-resource/mcp")
    assert findings["dcr-delete"].seen == "DELETE answered 204"


def test_with_a_token_every_check_passes_in_both_eras(protected_server: LiveServer, token: str) -> None:
    output, code = doctor(protected_server.mcp_url, "--token", token, "--origin", INSPECTOR, *PROGRESS)
    assert code == 0, output
    assert output.rstrip().endswith("22 ok, 0 warning(s), 0 failed, 1 not checked"), output
    assert "ok    legacy          Legacy handshake (2025-11-25: initialize and a session)" in output
    assert "ok    modern          Modern handshake (2026-07-28: server/discover)" in output
    assert "ok    token           The token opens the endpoint" in output
    # The Server Card names the 2024-11-05 stream, which the token opens too.
    assert "ok    server-card     Server Card (SEP-2127 draft)" in output
    assert "ok    sse             HTTP+SSE transport (2024-11-05: an endpoint event, initialize answered" in output


def test_a_refused_token_is_named(protected_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(protected_server.mcp_url, token="not-a-token", register=False)))
    assert (findings["token"].status, findings["token"].fault) == (FAIL, "token refused")
    assert "invalid_token" in findings["token"].seen


def test_an_open_server_needs_no_oauth_and_passes_in_both_eras(live_server_mcp: LiveServer) -> None:
    findings = by_check(diagnose(Visit(live_server_mcp.mcp_url, origin=INSPECTOR, progress_tool="slow_steps",
                                       progress_arguments=PROGRESS_ARGUMENTS)))
    not_ok = {check for check, finding in findings.items() if finding.status != OK}
    assert not_ok == {"challenge", "token", "cimd-fetch"}
    assert findings["challenge"].seen == "Clients connect without OAuth."
    assert findings["legacy"].status == findings["modern"].status == findings["sse-buffering"].status == OK
    assert findings["sse-buffering"].details["result"] - findings["sse-buffering"].details["first_progress"] > 0.5


def test_json_output(protected_server: LiveServer) -> None:
    output, code = doctor(protected_server.mcp_url, "--json", "--no-register")
    report = json.loads(output)
    assert code == 0 and report["ok"] is True and report["url"] == protected_server.mcp_url
    assert report["summary"] == {OK: 12, SKIP: 8}
    dcr = next(finding for finding in report["findings"] if finding["check"] == "dcr")
    assert dcr["status"] == SKIP and "--no-register" in dcr["seen"]
    assert not [finding for finding in report["findings"] if finding["status"] in (WARN, FAIL)]


def test_nothing_listening_is_named_and_fails() -> None:
    output, code = doctor(f"http://127.0.0.1:{free_port()}/mcp")
    assert code == 1
    assert "FAIL  reachable  The endpoint does not answer  [unreachable]" in output
    assert output.rstrip().endswith("1 check(s) failed: reachable (unreachable)")
