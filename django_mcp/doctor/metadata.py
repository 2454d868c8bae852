"""
The documents a client reads before it registers: the protected-resource metadata (RFC 9728) at
the path-suffixed and the root well-known locations, then the authorization server's (RFC 8414,
or OpenID Connect Discovery), its PKCE methods (RFC 7636) and whether it takes client ID metadata
documents (MCP spec 2025-11-25, basic/authorization).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..protocol.versions import LATEST_LEGACY_VERSION
from . import http
from .endpoint import redirect_finding
from .findings import Finding, fail, ok, skip, warn
from .http import origin_of, same_resource
from .visit import Visit


RESOURCE = "oauth-protected-resource"


def fetch_json(visit: Visit, url: str) -> tuple[http.Response | None, Any, str]:
    """GET a metadata document as clients do (2025-03-26 clients send MCP-Protocol-Version): answer, JSON, error."""
    try:
        response = http.request("GET", url, headers={"Accept": "application/json",
                                                     "MCP-Protocol-Version": LATEST_LEGACY_VERSION},
                                timeout=visit.timeout)
    except http.HttpError as error:
        return None, None, str(error)
    return response, response.json() if response.status == 200 else None, ""


def check_resource_document(visit: Visit, check: str, url: str, expected: tuple[str, ...]) -> tuple[Finding, bool]:
    """One RFC 9728 document: found, JSON, ``resource`` one of ``expected``, an authorization server named."""
    title = f"Protected-resource metadata at {urlsplit(url).path}"
    response, document, error = fetch_json(visit, url)
    if response is None:
        return fail(check, title, error, "Check the proxy forwards /.well-known/ to Django.", fault="unreachable"), False
    if response.is_redirect:
        return redirect_finding(check, title, response), False
    if response.status == 404:
        return fail(check, title, "HTTP 404: clients that look here find no metadata.",
                    'Mount django_mcp.oauth.urls at the site\'s root (path("", include("django_mcp.oauth.urls"))), '
                    "and have the proxy forward /.well-known/ to Django.", fault="metadata path missing"), False
    if not isinstance(document, dict):
        return fail(check, title, f"HTTP {response.status}, {response.content_type or 'no type'}: {response.text(120)}",
                    "Serve the JSON document here (something else answers: a catch-all page, the proxy).",
                    fault="metadata not JSON"), False
    resource = str(document.get("resource", ""))
    if not any(same_resource(resource, candidate) for candidate in expected):
        return fail(check, title,
                    f'"resource": "{resource}", but clients connect to {visit.url}: they refuse metadata for another '
                    "resource (RFC 9728 section 3.3).",
                    f'Set DJANGO_MCP["PUBLIC_BASE_URL"] = "{visit.origin_of_url}" (the address clients use).',
                    fault="wrong public URL", resource=resource), False
    servers = document.get("authorization_servers")
    if not servers or not isinstance(servers, list):
        return fail(check, title, "No authorization_servers: clients cannot find where to get a token.",
                    "Name at least one issuer in authorization_servers (MCP spec 2025-06-18, basic/authorization).",
                    fault="no authorization server"), False
    return ok(check, title, f'"resource": "{resource}", authorization_servers {servers}'), True


def check_resource_metadata(visit: Visit) -> list[Finding]:
    """
    Path-suffixed first, then the root: the order clients try when the challenge names none (MCP
    spec 2025-11-25, basic/authorization#protected-resource-metadata-discovery-requirements).
    """
    path_url = visit.well_known(RESOURCE, visit.path)
    root_url = visit.well_known(RESOURCE)
    found: list[tuple[Finding, bool, str]] = []
    if visit.path:
        found.append((*check_resource_document(visit, "prm-path", path_url, (visit.url,)), path_url))
    # The root document may name the origin (django_mcp's choice) or the endpoint.
    found.append((*check_resource_document(visit, "prm-root", root_url, (visit.url, visit.origin_of_url)), root_url))
    named = visit.challenge.get("resource_metadata")
    if named and named not in (path_url, root_url) and origin_of(named) == visit.origin_of_url:
        found.insert(0, (*check_resource_document(visit, "prm-challenge", named, (visit.url,)), named))
    good = [url for _, fine, url in found if fine]
    if not good and visit.requires_auth is False and all(f.fault == "metadata path missing" for f, _, _ in found):
        return [skip(f.check, f.title, "The endpoint is open and publishes no OAuth metadata.") for f, _, _ in found]
    findings = [finding for finding, _, _ in found]
    if good:
        # One good document is enough for clients that follow the challenge or try the other place.
        for finding in findings:
            if finding.status == "fail" and finding.fault == "metadata path missing" and visit.requires_auth:
                finding.status = "warn"
                finding.seen += " Clients that follow the challenge, or try the other location, still find one."
        visit.resource_metadata = fetch_json(visit, named if named in good else good[0])[1]
    return findings


def server_metadata_urls(issuer: str) -> list[str]:
    """Where clients look for an issuer's metadata, in order (MCP spec 2025-11-25, basic/authorization)."""
    origin = origin_of(issuer)
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}", f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


def check_server_metadata(visit: Visit) -> list[Finding]:
    """RFC 8414 or OpenID metadata of the first authorization server, then PKCE and CIMD support."""
    if not visit.resource_metadata:
        return [skip("as-metadata", "Authorization server metadata", "No protected-resource metadata to start from.")]
    issuer = str(visit.resource_metadata["authorization_servers"][0])
    tried = []
    for url in server_metadata_urls(issuer):
        response, document, error = fetch_json(visit, url)
        tried.append(f"{urlsplit(url).path}: {error or (response.status if response else '')}")
        if isinstance(document, dict):
            break
    else:
        return [fail("as-metadata", f"Authorization server metadata of {issuer}",
                     "Nothing at " + "; ".join(tried) + ": clients cannot find the authorize and token endpoints.",
                     "Serve RFC 8414 metadata at /.well-known/oauth-authorization-server (django_mcp.oauth.urls at the "
                     "site's root).", fault="metadata path missing")]
    findings = [check_issuer(issuer, url, document)]
    visit.server_metadata = document
    findings.append(check_pkce(document))
    findings.append(check_cimd(document))
    return findings


def check_issuer(issuer: str, url: str, document: dict[str, Any]) -> Finding:
    title = f"Authorization server metadata at {urlsplit(url).path}"
    if document.get("issuer") != issuer:
        # Clients compare exactly, without normalising (MCP spec 2026-07-28, basic/authorization; RFC 8414 section 3.3).
        return fail("as-metadata", title,
                    f'"issuer": "{document.get("issuer")}", but the resource metadata names {issuer}: clients stop.',
                    'Make both the same: DJANGO_MCP["PUBLIC_BASE_URL"] is the issuer behind a proxy.',
                    fault="issuer mismatch")
    missing = [name for name in ("authorization_endpoint", "token_endpoint") if not document.get(name)]
    if missing:
        return fail("as-metadata", title, f"No {', '.join(missing)}: clients cannot get a token.",
                    "Publish the endpoints (RFC 8414 section 2).", fault="endpoints missing")
    elsewhere = [name for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint")
                 if document.get(name) and origin_of(str(document[name])) != origin_of(issuer)]
    if elsewhere:
        return warn("as-metadata", title,
                    f"{', '.join(elsewhere)} on another origin ({document[elsewhere[0]]}) than the issuer {issuer}.",
                    'If that is an inner address, set DJANGO_MCP["PUBLIC_BASE_URL"] to the public one.',
                    fault="endpoints on another origin")
    return ok("as-metadata", title, f'"issuer": "{issuer}", token endpoint {document["token_endpoint"]}')


def check_pkce(document: dict[str, Any]) -> Finding:
    """Clients MUST refuse an authorization server without ``code_challenge_methods_supported`` (MCP spec 2025-11-25)."""
    methods = document.get("code_challenge_methods_supported")
    if not methods:
        return fail("pkce", "PKCE support is not advertised",
                    "No code_challenge_methods_supported: 2025-11-25 clients refuse to go on.",
                    "Advertise [\"S256\"] (RFC 7636; DOT's PKCE_REQUIRED).", fault="PKCE not advertised")
    if "S256" not in methods:
        return fail("pkce", "PKCE S256 is not supported", f"code_challenge_methods_supported: {methods}",
                    "Support S256 (RFC 7636 section 4.2); MCP clients use it.", fault="no S256")
    return ok("pkce", "PKCE S256 is supported", f"code_challenge_methods_supported: {methods}")


def check_cimd(document: dict[str, Any]) -> Finding:
    """Client ID metadata documents: what 2025-11-25 clients try before DCR (MCP spec 2025-11-25, basic/authorization)."""
    if document.get("client_id_metadata_document_supported") is True:
        return ok("cimd", "Client ID metadata documents are accepted", "client_id_metadata_document_supported: true")
    return warn("cimd", "Client ID metadata documents are not advertised",
                "Clients that present an HTTPS client_id (VS Code, newer Claude) fall back to registration.",
                "Turn on DOT's CIMD_ENABLED (django_mcp.oauth.provider.oauth2_provider_settings does).",
                fault="CIMD not advertised")
