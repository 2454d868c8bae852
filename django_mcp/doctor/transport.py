"""
Both eras' first exchanges (MCP spec 2025-11-25, basic/lifecycle: ``initialize`` and a session;
MCP spec 2026-07-28, basic/lifecycle: ``server/discover``, no session), an authenticated call with
``--token``, and whether events of a stream reach the client as they are sent: a proxy that buffers
holds every progress notification back until the result (MCP spec 2026-07-28,
basic/transports/streamable-http: servers send ``X-Accel-Buffering: no`` for that reason).
"""

from __future__ import annotations

from typing import Any

from ..protocol.versions import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION
from . import http
from .findings import Finding, fail, ok, skip, warn
from .visit import Visit, answer_of, challenge_params


#: A stream shorter than this cannot show whether its events were held back.
MIN_STREAM_SECONDS = 0.4
#: Progress arriving less than this share of the call's time before the result was held back.
BUFFERED_SHARE = 0.1


def needs_token(visit: Visit, check: str, title: str) -> Finding | None:
    if visit.requires_auth and not visit.token:
        return skip(check, title, "Not checked: the endpoint needs a token; give one with --token.")
    return None


def rpc_error(response: http.Response) -> str:
    answer = answer_of(response) or {}
    if "error" in answer:
        return f"JSON-RPC error {answer['error'].get('code')}: {answer['error'].get('message')}"
    return f"HTTP {response.status}: {response.text()}"


def result_of(response: http.Response) -> dict[str, Any] | None:
    answer = answer_of(response)
    if response.status == 200 and answer and isinstance(answer.get("result"), dict):
        return answer["result"]
    return None


def check_token(visit: Visit) -> Finding:
    """With ``--token``: the token opens the endpoint (RFC 6750 section 3.1 for the errors)."""
    if not visit.token:
        return skip("token", "An authenticated call", "Not checked: no --token given.")
    try:
        response = visit.modern("tools/list")
    except http.HttpError as error:
        return fail("token", "An authenticated call", str(error), "Check the proxy.", fault="unreachable")
    if response.status in (401, 403):
        params = challenge_params(response.header("www-authenticate") or "")
        said = " ".join(filter(None, (params.get("error"), params.get("error_description"))))
        fault = "insufficient scope" if response.status == 403 else "token refused"
        return fail("token", "The token is refused", f"HTTP {response.status}: {said or response.text()}",
                    "Use a token issued for this endpoint (its resource is this URL) with the scopes it needs; "
                    "behind a proxy, check that Authorization reaches the workers.", fault=fault)
    result = result_of(response)
    if result is None:
        return fail("token", "An authenticated call", rpc_error(response), "See the server's log.",
                    fault="call failed")
    return ok("token", "The token opens the endpoint", f"tools/list answered {len(result.get('tools', []))} tools")


def check_legacy(visit: Visit) -> Finding:
    """``initialize``, ``notifications/initialized``, ``tools/list`` in the session, ``DELETE``."""
    title = f"Legacy handshake ({LATEST_LEGACY_VERSION}: initialize and a session)"
    if (skipped := needs_token(visit, "legacy", title)) is not None:
        return skipped
    try:
        init = visit.legacy("initialize", visit.initialize_params())
        result = result_of(init)
        if result is None:
            return fail("legacy", title, rpc_error(init), "See the server's log.", fault="initialize failed")
        session = init.header("mcp-session-id")
        if not session:
            return fail("legacy", title, "initialize answered without Mcp-Session-Id: every later request of the "
                        "session is refused.", "Let the proxy pass the Mcp-Session-Id header both ways.",
                        fault="session header missing")
        visit.legacy("notifications/initialized", session=session, notification=True)
        listed = visit.legacy("tools/list", {}, session=session)
        http.request("DELETE", visit.url, timeout=visit.timeout, headers={
            **visit.headers(), "Mcp-Session-Id": session, "MCP-Protocol-Version": LATEST_LEGACY_VERSION})
    except http.HttpError as error:
        return fail("legacy", title, str(error), "Check the proxy.", fault="unreachable")
    tools = result_of(listed)
    if tools is None:
        return fail("legacy", title, "tools/list in the session: " + rpc_error(listed),
                    "With several workers, sessions must live in a shared database (docs/howto/several-workers.md).",
                    fault="session lost")
    visit.tool_names = [tool.get("name") for tool in tools.get("tools", [])]
    negotiated = result.get("protocolVersion")
    return ok("legacy", title, f"protocolVersion {negotiated}, a session, {len(visit.tool_names)} tools")


def check_modern(visit: Visit) -> Finding:
    """``server/discover`` must name 2026-07-28 among ``supportedVersions`` (MCP spec 2026-07-28, basic/lifecycle)."""
    title = f"Modern handshake ({LATEST_MODERN_VERSION}: server/discover)"
    if (skipped := needs_token(visit, "modern", title)) is not None:
        return skipped
    try:
        response = visit.modern("server/discover")
        listed = visit.modern("tools/list")
    except http.HttpError as error:
        return fail("modern", title, str(error), "Check the proxy.", fault="unreachable")
    result = result_of(response)
    if result is None or LATEST_MODERN_VERSION not in result.get("supportedVersions", []):
        return fail("modern", title, rpc_error(response) if result is None else
                    f"supportedVersions {result.get('supportedVersions')}",
                    "Clients of 2026-07-28 need it; a proxy that drops the Mcp-* headers makes the server refuse "
                    "(-32020).", fault="discover failed")
    tools = result_of(listed)
    if tools is not None and visit.tool_names is None:
        visit.tool_names = [tool.get("name") for tool in tools.get("tools", [])]
    return ok("modern", title, f"supportedVersions {result['supportedVersions']}")


def check_streaming(visit: Visit) -> Finding:
    """A tool that reports progress: its first notification must arrive well before its result."""
    title = "Unbuffered event streams (progress before the result)"
    if not visit.progress_tool:
        return skip("sse-buffering", title, "Not checked: name a tool that reports progress with --progress-tool.")
    if (skipped := needs_token(visit, "sse-buffering", title)) is not None:
        return skipped
    if visit.tool_names is not None and visit.progress_tool not in visit.tool_names:
        return skip("sse-buffering", title, f"Not checked: tools/list has no tool {visit.progress_tool!r}.")
    params = {"name": visit.progress_tool, "arguments": visit.progress_arguments,
              "_meta": {"progressToken": "mcp-doctor"}}
    try:
        response = visit.modern("tools/call", params, name=visit.progress_tool)
    except http.HttpError as error:
        return fail("sse-buffering", title, str(error), "Check the proxy's read timeout.", fault="unreachable")
    if response.content_type != "text/event-stream":
        return warn("sse-buffering", title, f"The call answered {response.content_type or rpc_error(response)}, "
                    "not an event stream: nothing to time.", "Give a tool that reports progress.",
                    fault="no stream")
    progress = [when for when, event in response.events if event.get("method") == "notifications/progress"]
    done = response.events[-1][0] if response.events else response.elapsed
    if not progress:
        return warn("sse-buffering", title, "No progress notification arrived.",
                    "Give a tool that reports progress (--progress-tool, --progress-arguments).", fault="no progress")
    if done < MIN_STREAM_SECONDS:
        return warn("sse-buffering", title, f"The call took {done:.2f} s: too short to tell.",
                    "Give --progress-arguments that make the tool run for a second or more.", fault="too quick")
    timing = f"first progress at {progress[0]:.2f} s, result at {done:.2f} s"
    if done - progress[0] < BUFFERED_SHARE * done:
        encoding = response.header("content-encoding")
        return fail("sse-buffering", title,
                    f"{timing}: every event arrived at once, when the response ended"
                    + (f" (compressed: Content-Encoding {encoding})" if encoding else "")
                    + ". Clients see no progress, and long calls time out.",
                    "Turn buffering off for the MCP paths: nginx proxy_buffering off (and do not ignore "
                    "X-Accel-Buffering), no gzip of text/event-stream; other proxies and CDNs have their own switch "
                    "(docs/howto/deployment.md).", fault="buffering", first_progress=progress[0], result=done)
    return ok("sse-buffering", title, timing, first_progress=progress[0], result=done)
