"""
What a browser-based client (the MCP Inspector, a web app) needs on top: CORS preflights of the
endpoint and the metadata documents, and the response headers it may read (Fetch standard, "CORS
protocol", https://fetch.spec.whatwg.org/#http-cors-protocol).
"""

from __future__ import annotations

from ..transports.cors import REQUEST_HEADERS, header_names
from . import http
from .findings import Finding, fail, ok, skip, warn
from .metadata import RESOURCE
from .visit import Visit


#: The request headers of an MCP POST beyond the safelisted ones (MCP spec 2025-11-25 and 2026-07-28,
#: basic/transports), which a page must be allowed to send: what the endpoint takes, but ``Accept``
#: (safelisted) and ``Last-Event-ID`` (a resumed GET's).
MCP_REQUEST_HEADERS = tuple(sorted(REQUEST_HEADERS - {"accept", "last-event-id"}))
#: Response headers a browser client must read: the session, the challenge.
MCP_RESPONSE_HEADERS = ("mcp-session-id", "www-authenticate")


def allows(response: http.Response, origin: str) -> bool:
    return response.header("access-control-allow-origin") in (origin, "*")


def check_cors(visit: Visit) -> list[Finding]:
    if not visit.origin:
        return [skip("cors", "CORS for browser clients",
                     "Not checked: give the browser client's origin with --origin (the MCP Inspector's is "
                     "http://localhost:6274).")]
    origin = visit.origin
    try:
        preflight = http.request("OPTIONS", visit.url, timeout=visit.timeout, headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": ", ".join(MCP_REQUEST_HEADERS)})
        actual = visit.modern("server/discover", Origin=origin)
    except http.HttpError as error:
        return [fail("cors", "CORS preflight", str(error), "Check the proxy.", fault="unreachable")]
    findings = [check_preflight(visit, preflight, origin), check_exposed(actual, origin)]
    findings.append(check_metadata_cors(visit, origin))
    return findings


def check_preflight(visit: Visit, response: http.Response, origin: str) -> Finding:
    fix = (f'Add "{origin}" to DJANGO_MCP["CORS_ALLOWED_ORIGINS"] (or django-cors-headers\' CORS_ALLOWED_ORIGINS), '
           "and let the proxy pass OPTIONS through.")
    if response.status >= 300 or not allows(response, origin):
        return fail("cors", f"CORS preflight from {origin}",
                    f"HTTP {response.status}, Access-Control-Allow-Origin: "
                    f"{response.header('access-control-allow-origin') or '(none)'}: the browser blocks every request.",
                    fix, fault="CORS preflight refused")
    allowed = set(header_names(response.header("access-control-allow-headers")))
    missing = [name for name in MCP_REQUEST_HEADERS if name not in allowed and "*" not in allowed]
    if missing:
        return fail("cors", f"CORS preflight from {origin}",
                    f"Access-Control-Allow-Headers lacks {', '.join(missing)}: the browser refuses to send them.",
                    "Allow the MCP request headers (django_mcp does; a proxy answering OPTIONS itself may not).",
                    fault="CORS headers missing")
    return ok("cors", f"CORS preflight from {origin}", f"HTTP {response.status}, every MCP request header allowed")


def check_exposed(response: http.Response, origin: str) -> Finding:
    exposed = set(header_names(response.header("access-control-expose-headers")))
    if not allows(response, origin):
        return fail("cors-response", f"Answers to {origin} carry no Access-Control-Allow-Origin",
                    f"HTTP {response.status} without it: the page cannot read the answer.",
                    "Let the proxy pass the header through (do not answer CORS at the proxy).",
                    fault="CORS answer blocked")
    missing = [name for name in MCP_RESPONSE_HEADERS if name not in exposed and "*" not in exposed]
    if missing:
        return warn("cors-response", "Some MCP response headers are hidden from pages",
                    f"Access-Control-Expose-Headers lacks {', '.join(missing)}: a browser client cannot read them "
                    "(no session, no OAuth discovery).", "Expose Mcp-Session-Id and WWW-Authenticate.",
                    fault="headers not exposed")
    return ok("cors-response", "Answers expose the MCP headers to pages", ", ".join(sorted(exposed)))


def check_metadata_cors(visit: Visit, origin: str) -> Finding:
    """A browser client fetches the metadata itself, with ``MCP-Protocol-Version``, so a preflight comes first."""
    url = visit.well_known(RESOURCE, visit.path)
    try:
        preflight = http.request("OPTIONS", url, timeout=visit.timeout, headers={
            "Origin": origin, "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "mcp-protocol-version"})
        document = http.request("GET", url, timeout=visit.timeout, headers={"Origin": origin})
    except http.HttpError as error:
        return fail("cors-metadata", "CORS of the metadata documents", str(error), "Check the proxy.",
                    fault="unreachable")
    if document.status == 404:
        return skip("cors-metadata", "CORS of the metadata documents", "No metadata document to read.")
    if not (allows(preflight, origin) and allows(document, origin)):
        return fail("cors-metadata", "The metadata documents are not readable from pages",
                    f"Preflight HTTP {preflight.status}, GET HTTP {document.status}, without Access-Control-Allow-Origin:"
                    " a browser client cannot discover the authorization server.",
                    "Serve the well-known documents with Access-Control-Allow-Origin: * (django_mcp.oauth.urls does).",
                    fault="metadata CORS missing")
    return ok("cors-metadata", "The metadata documents are readable from pages", "Access-Control-Allow-Origin present")
