"""
The CIMD probe (``--client-id-url``): documents served over real HTTPS on 127.0.0.1, read by the
doctor, then fetched by a live OAuth server that trusts their certificate and may reach loopback
(tests/doctor/cimd_fetcher.py), and by one that may not (DOT's default fetcher refuses loopback).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from django_mcp.doctor.checkup import diagnose
from django_mcp.doctor.cimd import judge_document, url_problem
from django_mcp.doctor.findings import FAIL, OK, SKIP, WARN
from django_mcp.doctor.visit import Visit
from tests.live import LiveServer

from .cimd_documents import DocumentServer, make_certificate
from .conftest import by_check, doctor


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    """The documents' HTTPS server; the doctor (in this process) trusts its certificate through SSL_CERT_FILE."""
    certificate, key = make_certificate(tmp_path_factory.mktemp("cimd"))
    with pytest.MonkeyPatch.context() as patch, DocumentServer(certificate, key) as server:
        patch.setenv("SSL_CERT_FILE", str(certificate))
        yield server


@pytest.fixture(scope="module")
def cimd_server(doctor_env: Mapping[str, str], documents: DocumentServer) -> Iterator[LiveServer]:
    """A protected server whose DOT fetches documents from the documents' server."""
    env = {**doctor_env, "DJANGO_SETTINGS_MODULE": "tests.doctor.settings_cimd",
           "MCP_DOCTOR_CIMD_CA": str(documents.certificate)}
    with LiveServer(env=env, name="doctor-cimd") as server:
        yield server


def cimd_findings(server: LiveServer, url: str) -> dict:
    return by_check(diagnose(Visit(server.mcp_url, register=False, client_id_url=url)))


def test_a_good_document_is_read_and_accepted(cimd_server: LiveServer, documents: DocumentServer) -> None:
    url = documents.publish("good")
    output, code = doctor(cimd_server.mcp_url, "--no-register", "--client-id-url", url)
    assert code == 0, output
    assert f"ok    cimd-document   The client ID metadata document at {url}" in output
    assert "ok    cimd-fetch      The authorization server fetches and accepts the document" in output
    assert "error=login_required: the server fetched the document, accepted it and its redirect URI" in output


def test_a_missing_document_is_unreachable(cimd_server: LiveServer, documents: DocumentServer) -> None:
    findings = cimd_findings(cimd_server, documents.url("missing"))
    assert (findings["cimd-document"].status, findings["cimd-document"].fault) == (FAIL, "document unreachable")
    assert findings["cimd-document"].seen.startswith("HTTP 404: servers accept only a 200")
    assert findings["cimd-fetch"].status == SKIP


def test_a_document_for_another_client_id_is_named_and_rejected(cimd_server: LiveServer,
                                                                 documents: DocumentServer) -> None:
    url = documents.publish("mismatch", client_id=documents.url("someone-else"))
    findings = cimd_findings(cimd_server, url)
    document, fetch = findings["cimd-document"], findings["cimd-fetch"]
    assert (document.status, document.fault) == (FAIL, "client_id mismatch")
    assert "someone-else.json" in document.seen and "section 4.1" in document.seen
    assert (fetch.status, fetch.fault) == (FAIL, "document rejected")
    assert fetch.seen.startswith("HTTP 400: invalid_request Invalid client_id parameter value:")


def test_a_server_that_cannot_reach_the_document_is_named(protected_server: LiveServer,
                                                          documents: DocumentServer) -> None:
    """The session's protected server keeps DOT's default fetcher, which refuses a loopback address."""
    url = documents.publish("unreachable-for-the-server")
    output, code = doctor(protected_server.mcp_url, "--no-register", "--client-id-url", url)
    assert code == 1
    assert "ok    cimd-document" in output
    assert ("FAIL  cimd-fetch      The authorization server fetches and accepts the document  "
            "[server cannot fetch the document]") in output
    assert "HTTP 400: invalid_request Invalid client_id parameter value. The doctor read" in output
    assert "CIMD_ALLOWED_HOSTS" in output and "egress" in output
    assert output.rstrip().endswith("1 check(s) failed: cimd-fetch (server cannot fetch the document)")


def test_without_a_url_the_fetch_is_not_checked(protected_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(protected_server.mcp_url, register=False)))
    assert findings["cimd"].status == OK
    assert findings["cimd-fetch"].status == SKIP and "--client-id-url" in findings["cimd-fetch"].seen
    assert "cimd-document" not in findings


def test_what_a_document_must_say() -> None:
    url = "https://client.example.com/oauth/client.json"
    good = {"client_id": url, "redirect_uris": ["http://127.0.0.1/callback"]}
    assert judge_document(url, "", good).status == OK
    assert judge_document(url, "", {**good, "client_id": url + "/"}).fault == "client_id mismatch"
    assert judge_document(url, "", {**good, "redirect_uris": []}).fault == "document invalid"
    secret = judge_document(url, "", {**good, "token_endpoint_auth_method": "client_secret_basic"})
    assert (secret.status, secret.fault) == (FAIL, "document invalid")
    assert judge_document(url, "", {**good, "token_endpoint_auth_method": "private_key_jwt"}).status == WARN
    assert url_problem(url) == ""
    assert url_problem("http://client.example.com/client.json") == "the client_id URL must use https"
    assert url_problem("https://client.example.com") and url_problem("https://client.example.com/a/../b.json")
