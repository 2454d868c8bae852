"""The metadata documents: missing ones named, and where clients look for an issuer's."""

from __future__ import annotations

from django_mcp.doctor.checkup import diagnose
from django_mcp.doctor.findings import FAIL, SKIP
from django_mcp.doctor.visit import Visit
from django_mcp.doctor.metadata import server_metadata_urls
from tests.live import LiveServer

from .conftest import by_check, doctor


def test_missing_metadata_is_named(no_metadata_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(no_metadata_server.mcp_url)))
    # The 401 still points at the document: the challenge is fine, the document is not there.
    assert findings["challenge"].status == "ok"
    for check in ("prm-path", "prm-root"):
        assert (findings[check].status, findings[check].fault) == (FAIL, "metadata path missing"), findings[check]
        assert findings[check].seen.startswith("HTTP 404")
    assert "django_mcp.oauth.urls" in findings["prm-path"].fix
    assert findings["as-metadata"].status == SKIP and findings["dcr"].status == SKIP


def test_missing_metadata_fails_the_command(no_metadata_server: LiveServer) -> None:
    output, code = doctor(no_metadata_server.mcp_url)
    assert code == 1
    assert ("FAIL  prm-path        Protected-resource metadata at /.well-known/oauth-protected-resource/mcp  "
            "[metadata path missing]") in output


def test_where_clients_look_for_an_issuers_metadata() -> None:
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]
    assert server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
