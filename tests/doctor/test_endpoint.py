"""HTTPS, redirects, Host and Origin, and the 401 challenge of a server whose public URL is wrong."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from django_mcp.doctor.checkup import diagnose
from django_mcp.doctor.findings import FAIL, OK
from django_mcp.doctor.visit import Visit
from django_mcp.doctor.endpoint import check_https
from tests.live import LiveServer

from .conftest import by_check, doctor


class Redirecting(BaseHTTPRequestHandler):
    """What a proxy forcing a trailing slash answers: 308 to ``/mcp/``."""

    def do_POST(self) -> None:
        self.send_response(308)
        self.send_header("Location", self.path + "/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def redirecting() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()


def test_plain_http_is_fine_on_loopback_only() -> None:
    assert check_https(Visit("http://127.0.0.1:8000/mcp")).status == OK
    assert check_https(Visit("http://localhost:8000/mcp")).status == OK
    assert check_https(Visit("https://mcp.example.com/mcp")).status == OK
    remote = check_https(Visit("http://mcp.example.com/mcp"))
    assert (remote.status, remote.fault) == (FAIL, "not HTTPS")


def test_a_redirect_is_named_not_followed(redirecting: str) -> None:
    output, code = doctor(redirecting)
    assert code == 1
    assert "FAIL  reachable  The endpoint answers with a redirect  [redirect]" in output
    assert "HTTP 308 to /mcp/" in output and "trailing slash" in output


def test_a_wrong_public_url_is_named(wrong_url_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(wrong_url_server.mcp_url, register=False)))
    challenge = findings["challenge"]
    assert (challenge.status, challenge.fault) == (FAIL, "wrong public URL")
    assert "resource_metadata=https://mcp.example.com/.well-known/oauth-protected-resource/mcp" in challenge.seen
    assert f'PUBLIC_BASE_URL"] = "{wrong_url_server.url}"' in challenge.fix
    # The metadata this server publishes names the other address too, and so does its issuer.
    assert (findings["prm-path"].status, findings["prm-path"].fault) == (FAIL, "wrong public URL")
    assert '"resource": "https://mcp.example.com/mcp"' in findings["prm-path"].seen


def test_a_wrong_public_url_fails_the_command(wrong_url_server: LiveServer) -> None:
    output, code = doctor(wrong_url_server.mcp_url, "--no-register")
    assert code == 1
    assert "FAIL  challenge       The 401 sends clients to another host  [wrong public URL]" in output
    assert "challenge (wrong public URL), prm-path (wrong public URL), prm-root (wrong public URL)" in output
