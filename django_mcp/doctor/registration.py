"""
Dynamic client registration as a client does it (RFC 7591), with a throwaway client that is
deleted again where the server offers client configuration (RFC 7592 section 2.3).
"""

from __future__ import annotations

from . import http
from .endpoint import redirect_finding
from .findings import Finding, fail, ok, skip, warn
from .visit import Visit


#: What a desktop client registers: a loopback redirect, a public client, refresh (MCP spec
#: 2026-07-28, basic/authorization/client-registration: application_type is sent).
THROWAWAY = {
    "client_name": "mcp-doctor (throwaway registration, deleted at once)",
    "redirect_uris": ["http://127.0.0.1:33418/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}


def check_registration(visit: Visit) -> list[Finding]:
    metadata = visit.server_metadata
    if metadata is None:
        return [skip("dcr", "Dynamic client registration", "No authorization server metadata to start from.")]
    endpoint = metadata.get("registration_endpoint")
    if not endpoint:
        if metadata.get("client_id_metadata_document_supported") is True:
            return [warn("dcr", "No dynamic client registration",
                         "Clients with client ID metadata documents connect; older ones (2025-06-18 and before) "
                         "need registration and stop.", "Offer a registration_endpoint (DOT's DCR_ENABLED).",
                         fault="DCR not offered")]
        return [fail("dcr", "No way for a client to register",
                     "Neither registration_endpoint nor client_id_metadata_document_supported: clients need a "
                     "pre-registered client ID, which Claude, ChatGPT and Cursor users do not have.",
                     "Turn on DOT's DCR_ENABLED or CIMD_ENABLED (django_mcp.oauth.provider does both).",
                     fault="DCR not offered")]
    if not visit.register:
        return [skip("dcr", "Dynamic client registration", f"Not tried (--no-register); offered at {endpoint}.")]
    try:
        response = http.request("POST", endpoint, body=THROWAWAY, timeout=visit.timeout,
                                headers={"Accept": "application/json"})
    except http.HttpError as error:
        return [fail("dcr", "Dynamic client registration", str(error), "Check the proxy.", fault="unreachable")]
    if response.is_redirect:
        return [redirect_finding("dcr", "The registration endpoint", response)]
    answer = response.json() if isinstance(response.json(), dict) else {}
    if response.status in (401, 403):
        return [fail("dcr", "Registration is closed to anonymous clients",
                     f"HTTP {response.status}: every MCP client registers before it has any credential, so all stop "
                     "here.", 'Let anyone register: OAUTH2_PROVIDER["DCR_REGISTRATION_PERMISSION_CLASSES"] = '
                     '("oauth2_provider.dcr.AllowAllDCRPermission",), and review registrations in the admin.',
                     fault="registration closed")]
    if response.status != 201 or not answer.get("client_id"):
        error = f"{answer.get('error', '')} {answer.get('error_description', '')}".strip() or response.text()
        return [fail("dcr", "A client like Claude's cannot register", f"HTTP {response.status}: {error}",
                     "Accept loopback redirect URIs on any port and public clients (token_endpoint_auth_method "
                     '"none"); see docs/oauth.md.', fault="registration refused")]
    registered = ok("dcr", "A client registers", f"HTTP 201, client_id {answer['client_id']}")
    return [registered, delete_registration(visit, answer)]


def delete_registration(visit: Visit, answer: dict) -> Finding:
    """RFC 7592 section 2.3: DELETE the client configuration URI with the registration access token."""
    uri, token = answer.get("registration_client_uri"), answer.get("registration_access_token")
    if not uri or not token:
        return warn("dcr-delete", "The throwaway registration stays",
                    "The server offers no client configuration endpoint (RFC 7592).",
                    f"Delete the application \"{THROWAWAY['client_name']}\" by hand.", fault="cannot delete")
    try:
        response = http.request("DELETE", uri, headers={"Authorization": f"Bearer {token}"}, timeout=visit.timeout)
    except http.HttpError as error:
        return warn("dcr-delete", "The throwaway registration stays", str(error),
                    f"Delete the application \"{THROWAWAY['client_name']}\" by hand.", fault="cannot delete")
    if response.status in (200, 204):
        return ok("dcr-delete", "The throwaway registration is deleted", f"DELETE answered {response.status}")
    return warn("dcr-delete", "The throwaway registration stays", f"DELETE answered {response.status}",
                f"Delete the application \"{THROWAWAY['client_name']}\" by hand.", fault="cannot delete")
