"""Event streams through a proxy that buffers, and the progress check's own conditions."""

from __future__ import annotations

from django_mcp.doctor.findings import SKIP
from django_mcp.doctor.visit import Visit
from django_mcp.doctor.transport import check_legacy, check_streaming
from tests.live import LiveServer

from .conftest import PROGRESS, doctor
from .relay import BufferingRelay


def test_a_buffering_proxy_is_named(live_server_mcp: LiveServer) -> None:
    with BufferingRelay(live_server_mcp.port) as relay:
        output, code = doctor(f"http://127.0.0.1:{relay.port}/mcp", "--no-register", "--timeout", "3", *PROGRESS)
    assert code == 1, output
    assert "FAIL  sse-buffering   Unbuffered event streams (progress before the result)  [buffering]" in output
    assert "every event arrived at once" in output and "proxy_buffering off" in output
    # The 2024-11-05 stream, which never ends, reaches the client not at all: not even its endpoint event.
    assert "FAIL  sse             HTTP+SSE transport" in output and "nothing within 3 s" in output
    assert output.rstrip().endswith("2 check(s) failed: sse (no endpoint event), sse-buffering (buffering)")


def test_progress_is_not_checked_without_a_tool(live_server_mcp: LiveServer) -> None:
    visit = Visit(live_server_mcp.mcp_url)
    assert check_streaming(visit).status == SKIP
    assert "--progress-tool" in check_streaming(visit).seen
    visit = Visit(live_server_mcp.mcp_url, progress_tool="no_such_tool")
    check_legacy(visit)  # lists the tools
    finding = check_streaming(visit)
    assert finding.status == SKIP and "has no tool 'no_such_tool'" in finding.seen
