"""The Server Card check (SEP-2127 draft) and how the 2024-11-05 SSE check finds its URL through it."""

from __future__ import annotations

from django_mcp.doctor.card import check_server_card, judge_headers
from django_mcp.doctor.checkup import diagnose
from django_mcp.doctor.findings import FAIL, OK, SKIP, WARN
from django_mcp.doctor.http import Response
from django_mcp.doctor.sse import check_sse
from django_mcp.doctor.visit import Visit
from tests.live import LiveServer

from .conftest import by_check, doctor


def test_a_good_server_serves_the_card_and_the_sse_transport_it_names(live_server_mcp: LiveServer) -> None:
    visit = Visit(live_server_mcp.mcp_url)
    card = check_server_card(visit)
    assert card.status == OK, card
    assert card.seen == "application/mcp-server-card+json, remotes: streamable-http, sse"
    # No --sse-url: the card's sse remote is checked.
    sse = check_sse(visit)
    assert sse.status == OK, sse
    assert sse.seen.startswith("endpoint event /messages/, initialize answered on the stream in ")
    assert sse.seen.endswith("(protocolVersion 2024-11-05)")


def test_a_wrong_public_url_is_named_on_the_card(wrong_url_server: LiveServer) -> None:
    findings = by_check(diagnose(Visit(wrong_url_server.mcp_url, register=False)))
    card = findings["server-card"]
    assert (card.status, card.fault) == (FAIL, "card URL mismatch")
    assert card.seen.startswith("The card names https://mcp.example.com/mcp, but clients connect to "
                                f"{wrong_url_server.mcp_url}")
    assert f'PUBLIC_BASE_URL"] = "{wrong_url_server.url}"' in card.fix
    # The card's sse remote is on that other host: the doctor does not go there.
    assert findings["sse"].status == SKIP
    assert findings["sse"].seen == ("Not checked: the Server Card's sse remote https://mcp.example.com/sse is on "
                                    "another host; give --sse-url.")


def test_without_the_card_both_are_skipped(no_card_server: LiveServer) -> None:
    output, code = doctor(no_card_server.mcp_url, "--no-register")
    assert code == 0, output
    assert "skip  server-card     Server Card (SEP-2127 draft)" in output
    assert 'Not served (HTTP 404 at ' + no_card_server.mcp_url + '/server-card)' in output
    assert 'path("", include("django_mcp.server_card.urls"))' in output
    findings = by_check(diagnose(Visit(no_card_server.mcp_url, register=False)))
    assert findings["sse"].status == SKIP
    assert findings["sse"].seen.startswith("Not checked: no SSE URL (no Server Card names one)")


def test_an_sse_url_that_is_not_served_is_named(no_card_server: LiveServer) -> None:
    output, code = doctor(no_card_server.mcp_url, "--no-register", "--sse-url", f"{no_card_server.url}/legacy/sse")
    assert code == 1
    assert "FAIL  sse             HTTP+SSE transport" in output and "[SSE not served]" in output
    assert f"GET {no_card_server.url}/legacy/sse (from --sse-url): HTTP 404" in output
    assert output.rstrip().endswith("1 check(s) failed: sse (SSE not served)")


def test_the_given_sse_url_of_a_protected_server_needs_a_token(no_card_server: LiveServer) -> None:
    finding = check_sse(Visit(no_card_server.mcp_url, sse_url=f"{no_card_server.url}/sse"))
    assert finding.status == SKIP and "needs a token (HTTP 401)" in finding.seen


def test_a_card_without_caching_or_cors_headers_is_a_warning() -> None:
    card = {"remotes": [{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}]}
    bare = Response("https://mcp.example.com/mcp/server-card", 200, "OK",
                    [("Content-Type", "application/mcp-server-card+json")])
    finding = judge_headers(bare, "https://mcp-doctor.invalid", card)
    assert (finding.status, finding.fault) == (WARN, "card not cacheable, card CORS missing")
    assert "neither ETag nor Cache-Control" in finding.seen and "Access-Control-Allow-Origin" in finding.fix
    cached = Response(bare.url, 200, "OK", [*bare.headers, ("ETag", '"1"'), ("Access-Control-Allow-Origin", "*")])
    assert judge_headers(cached, "https://mcp-doctor.invalid", card).status == OK
