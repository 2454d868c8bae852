"""
Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-01, "CIMD"), beyond the
advertised flag: with ``--client-id-url``, the doctor reads the client's document itself, then asks
the authorization server to use it, as VS Code and newer Claude clients do when they present an
``https`` client_id. Where the server cannot reach the document (an egress firewall, a proxy, DNS,
an SSRF guard) or refuses it, clients only say that authorization failed.

The second step is an authorization request with ``prompt=none`` (OpenID Connect Core 1.0 section
3.1.2.1): an anonymous request is then checked, client first, before any login page, and a client
the server accepts gets ``error=login_required`` at its redirect URI (section 3.1.2.6) instead of a
login form. Nothing is signed in, consented to or issued; the server only resolves the client
(django-oauth-toolkit stores its own cached application row for that client_id).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from . import http
from .findings import Finding, fail, ok, skip, warn
from .visit import Visit


DRAFT = "draft-ietf-oauth-client-id-metadata-document"
#: Methods built on a shared secret, which a client ID metadata document must not name (draft section 4.1).
SHARED_SECRET_METHODS = ("client_secret_basic", "client_secret_post", "client_secret_jwt")
#: What a server answers at the redirect URI when the client is fine but a user must sign in
#: (OpenID Connect Core 1.0 section 3.1.2.6).
NEEDS_A_USER = ("login_required", "interaction_required", "consent_required", "account_selection_required")
#: RFC 6749 section 4.1.2.1 and RFC 8707 section 2 error codes, to find the server's message on its error page.
_OAUTH_ERROR = re.compile(r"\b(invalid_request|invalid_client|unauthorized_client|access_denied|invalid_scope|"
                          r"unsupported_response_type|server_error|temporarily_unavailable|invalid_target)\b")
_HIDDEN = re.compile(r"<(script|style|head)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")

FETCH_FIX = ("Let the server reach the client's host: egress through the firewall (HTTPS, port 443) or the proxy "
             "(DOT's fetcher connects directly: set CIMD_METADATA_FETCHER to a fetcher that uses the proxy), and DNS "
             "for its name; DOT's default fetcher refuses non-public addresses. Check OAUTH2_PROVIDER: CIMD_ENABLED "
             "on, and with HostAllowlistCIMDPermission in CIMD_REGISTRATION_PERMISSION_CLASSES, the host in "
             "CIMD_ALLOWED_HOSTS. The server logs why (logger oauth2_provider.cimd, \"CIMD resolution failed\"); "
             "after a failure it waits CIMD_FAILURE_BACKOFF_SECONDS (60) before fetching that URL again.")


def check_client_id_document(visit: Visit) -> list[Finding]:
    """The doctor's own reading of the document, then the server's (after ``check_server_metadata``)."""
    if visit.server_metadata is None:
        return [] if not visit.client_id_url else [skip("cimd-fetch", "Fetching a client ID metadata document",
                                                        "No authorization server metadata to start from.")]
    if not visit.client_id_url:
        return [skip("cimd-fetch", "Whether the server can fetch a client ID metadata document",
                     "Not checked: give a client's document URL with --client-id-url (e.g. the one your MCP client "
                     "publishes), and the doctor reads it and asks the server to use it.")]
    finding, document = check_document(visit)
    return [finding, check_server_fetch(visit, document, finding.status == "ok")]


def url_problem(url: str) -> str:
    """What makes ``url`` no client identifier (draft section 3), or ""."""
    parts = urlsplit(url)
    if parts.scheme != "https":
        return "the client_id URL must use https"
    if not parts.hostname or not parts.path:
        return "the client_id URL must have a host and a path"
    if parts.username or parts.password or parts.fragment:
        return "the client_id URL must have no user name, password or fragment"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "the client_id URL must have no . or .. path segments"
    return ""


def check_document(visit: Visit) -> tuple[Finding, dict[str, Any] | None]:
    """GET the document as an authorization server does (draft sections 3, 4 and 4.1): the finding, and the JSON."""
    url = str(visit.client_id_url)
    title = f"The client ID metadata document at {url}"
    if problem := url_problem(url):
        return fail("cimd-document", title, f"{problem} ({DRAFT}, section 3): servers refuse it.",
                    "Give the client's https:// client_id URL, exactly as it presents it.",
                    fault="document invalid"), None
    try:
        response = http.request("GET", url, headers={"Accept": "application/json"}, timeout=visit.timeout)
    except http.HttpError as error:
        return fail("cimd-document", title, f"{error}: from here, nothing to read.",
                    "Check the URL; the client's publisher serves it (a TLS failure: its certificate).",
                    fault="document unreachable"), None
    if response.status != 200:
        moved = f" to {response.header('location')}" if response.is_redirect else ""
        return fail("cimd-document", title,
                    f"HTTP {response.status}{moved}: servers accept only a 200 and follow no redirect ({DRAFT}, "
                    "section 4).", "Give the URL the document is served at, exactly (the client's client_id).",
                    fault="document unreachable"), None
    document = response.json()
    media_type = response.content_type
    if not isinstance(document, dict) or not (media_type == "application/json" or media_type.endswith("+json")):
        return fail("cimd-document", title,
                    f"HTTP 200, {media_type or 'no Content-Type'}: {response.text(80)!r} is not a JSON object served "
                    f"as application/json ({DRAFT}, section 4.1).",
                    "The client's publisher must serve the JSON document.",
                    fault="document invalid"), None
    return judge_document(url, title, document), document


def judge_document(url: str, title: str, document: dict[str, Any]) -> Finding:
    """The properties a server checks (draft section 4.1; RFC 7591 section 2 for ``redirect_uris``)."""
    if document.get("client_id") != url:
        return fail("cimd-document", title,
                    f'"client_id": {json.dumps(document.get("client_id"))}, not the URL itself: servers compare by '
                    f"simple string comparison and refuse the document ({DRAFT}, section 4.1).",
                    "The document's client_id must be its own URL, character for character (scheme, host, port, "
                    "path, no trailing slash added or dropped).", fault="client_id mismatch")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) and uri for uri in uris):
        return fail("cimd-document", title,
                    f'"redirect_uris": {json.dumps(uris)}: servers need a non-empty list of URIs to send the user '
                    f"back to ({DRAFT}, section 4.5).", "List the client's redirect URIs in the document.",
                    fault="document invalid")
    method = document.get("token_endpoint_auth_method", "none")
    if method in SHARED_SECRET_METHODS or "client_secret" in document or "client_secret_expires_at" in document:
        return fail("cimd-document", title,
                    f'"token_endpoint_auth_method": {json.dumps(method)} or a client_secret: there is no shared '
                    f"secret with a client ID metadata document ({DRAFT}, section 4.1).",
                    'A public client (as MCP clients are) says "none" or leaves it out.', fault="document invalid")
    if method != "none":
        return warn("cimd-document", title,
                    f'"token_endpoint_auth_method": {json.dumps(method)}: a confidential client ({DRAFT}, section '
                    '6.2); django-oauth-toolkit takes only public ones ("none").',
                    'A public client (as MCP clients are) says "none" or leaves it out.', fault="not a public client")
    name = document.get("client_name")
    return ok("cimd-document", title, f'"client_id" is the URL, {len(uris)} redirect URI(s)'
              + (f', "client_name": {json.dumps(name)}' if name else ""))


def code_challenge() -> str:
    """The S256 challenge of a fresh PKCE verifier (RFC 7636 section 4.2), which nothing ever redeems."""
    verifier = secrets.token_urlsafe(48)
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorization_url(visit: Visit, endpoint: str, redirect_uri: str, state: str) -> str:
    """An authorization request as MCP clients send it (MCP spec 2025-11-25, basic/authorization), and prompt=none."""
    params = {"response_type": "code", "client_id": visit.client_id_url, "redirect_uri": redirect_uri,
              "code_challenge": code_challenge(), "code_challenge_method": "S256", "state": state,
              "resource": visit.url, "prompt": "none"}
    return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)


def error_text(response: http.Response) -> str:
    """The server's error: JSON ``error`` and ``error_description``, or its error page's text from the error code on."""
    body = response.json()
    if isinstance(body, dict) and body.get("error"):
        return f"{body['error']}: {body.get('error_description', '')}".rstrip(": ")
    text = " ".join(html.unescape(_TAG.sub(" ", _HIDDEN.sub(" ", response.body.decode("utf-8", "replace")))).split())
    found = _OAUTH_ERROR.search(text)
    return (text[found.start():] if found else text)[:160]


def check_server_fetch(visit: Visit, document: dict[str, Any] | None, document_ok: bool) -> Finding:
    """Ask the authorization endpoint to use the document (no redirect followed); what it answers decides."""
    title = "The authorization server fetches and accepts the document"
    endpoint = (visit.server_metadata or {}).get("authorization_endpoint")
    if document is None:
        return skip("cimd-fetch", title, "Not asked: the doctor could not read the document itself.")
    if visit.server_metadata.get("client_id_metadata_document_supported") is not True or not endpoint:
        return skip("cimd-fetch", title, "Not asked: the server advertises no client ID metadata documents "
                    "(or no authorization_endpoint), so clients do not present one.")
    uris = document.get("redirect_uris")
    redirect_uri = uris[0] if isinstance(uris, list) and uris and isinstance(uris[0], str) else ""
    if not redirect_uri:
        return skip("cimd-fetch", title, "Not asked: the document names no redirect URI to ask with.")
    state = secrets.token_urlsafe(16)
    try:
        response = http.request("GET", authorization_url(visit, str(endpoint), redirect_uri, state),
                                headers={"Accept": "text/html"}, timeout=visit.timeout + 5)
    except http.HttpError as error:
        return fail("cimd-fetch", title, f"{endpoint}: {error}", "Check the proxy.", fault="unreachable")
    location = response.header("location") or ""
    if response.is_redirect and location.split("?")[0] == redirect_uri.split("?")[0]:
        answer = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
        error = answer.get("error", "")
        if error and error not in NEEDS_A_USER:
            return fail("cimd-fetch", title,
                        f"The server accepted the client but refused the request: error={error}"
                        + (f", {answer['error_description']}" if answer.get("error_description") else ""),
                        "Clients stop here too: see the error (invalid_target: the resource; invalid_request: PKCE "
                        "or the redirect URI).", fault="request refused")
        return ok("cimd-fetch", title, f"HTTP {response.status} to the client's redirect URI with "
                  f"{'error=' + error if error else 'an answer'}: the server fetched the document, accepted it and "
                  "its redirect URI, and would now ask the user to sign in")
    if response.is_redirect or (response.status == 200 and response.content_type == "text/html"):
        where = f"HTTP {response.status} to {location}" if location else "HTTP 200, an HTML page"
        return ok("cimd-fetch", title, f"{where}: the server shows its login or consent page (it ignores "
                  "prompt=none, so it may check the client only after the login)")
    seen = f"HTTP {response.status}: {(error_text(response) or response.reason).rstrip('.')}"
    if response.status >= 500:
        return fail("cimd-fetch", title, seen + ": the authorization endpoint fails.",
                    "See the server's log for the error.", fault="authorization endpoint error")
    if document_ok:
        return fail("cimd-fetch", title,
                    seen + ". The doctor read the document, but the server could not (or may not): clients see "
                    "\"invalid client\" and stop.", FETCH_FIX, fault="server cannot fetch the document")
    return fail("cimd-fetch", title, seen + ": the server refuses the document, for what cimd-document names.",
                "Fix the document (the client's publisher), or present another client.", fault="document rejected")
