"""
The endpoint itself, as a client first meets it: HTTPS, redirects, the ``Host`` and ``Origin`` a
request carries, and the 401 challenge that starts OAuth (MCP spec 2025-11-25, basic/authorization
#authorization-server-discovery; RFC 9728 section 5.1).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from . import http
from .findings import Finding, fail, ok, skip, warn
from .http import origin_of
from .visit import FOREIGN_ORIGIN, Visit, challenge_params


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_https(visit: Visit) -> Finding:
    """OAuth 2.1 (MCP spec 2025-06-18, basic/authorization#communication-security): HTTPS, loopback excepted."""
    scheme = urlsplit(visit.url).scheme
    if scheme == "https":
        return ok("https", "The endpoint is served over HTTPS")
    if scheme == "http" and is_loopback(visit.url):
        return ok("https", "Plain HTTP on a loopback address",
                  "Clients accept http:// only for loopback addresses (local development).")
    return fail("https", "The endpoint is not served over HTTPS",
                f"{visit.url} is plain HTTP: remote clients (Claude, ChatGPT) refuse it, and OAuth "
                "needs HTTPS for every endpoint but loopback ones.",
                "End TLS at the proxy (docs/howto/deployment.md) and give clients the https:// URL; set "
                'DJANGO_MCP["PUBLIC_BASE_URL"] to it.', fault="not HTTPS")


def redirect_finding(check: str, what: str, response: http.Response) -> Finding:
    """A redirect where a client expects an answer: it is not followed, so it is the fault."""
    location = response.header("location") or "(no Location)"
    fix = "Give clients the URL the server answers at."
    if location.startswith("https://") and response.url.startswith("http://"):
        fix = "Give clients the https:// URL; they do not re-send a POST after a redirect to HTTPS."
    elif location.rstrip("/") == response.url.rstrip("/") or location.rstrip("/").endswith(
            urlsplit(response.url).path.rstrip("/")):
        fix = ("Give clients the exact path (a trailing slash differs): Django's APPEND_SLASH or the proxy "
               "redirects, and a redirected POST loses its body or becomes a GET.")
    return fail(check, f"{what} answers with a redirect",
                f"HTTP {response.status} to {location}: clients do not follow it (a POST would be re-sent as a "
                "GET, or not at all).", fix, fault="redirect", location=location)


def probe(visit: Visit) -> tuple[list[Finding], bool]:
    """
    An anonymous request, as a client's first: reachability, redirect, Host, then the challenge.
    Returns the findings and whether the walk can go on.
    """
    try:
        response = visit.modern("server/discover", token=False)
    except http.HttpError as error:
        return [fail("reachable", "The endpoint does not answer", str(error),
                     "Check the URL, DNS, the firewall and that the proxy forwards to a running worker.",
                     fault="unreachable")], False
    if response.is_redirect:
        return [redirect_finding("reachable", "The endpoint", response)], False
    if response.status == 421 or (response.status == 400 and b"host" in response.body.lower()):
        return [fail("host", "The endpoint refuses the Host of its own URL",
                     f"HTTP {response.status}: {response.text()}",
                     f"Add {urlsplit(visit.url).hostname!r} to ALLOWED_HOSTS, and have the proxy pass the client's "
                     "Host on (nginx: proxy_set_header Host $http_host).", fault="host refused")], False
    findings = [ok("reachable", "The endpoint answers", f"HTTP {response.status} to an anonymous request"),
                ok("host", "The endpoint accepts the Host of its own URL", urlsplit(visit.url).netloc)]
    if response.status == 401:
        visit.requires_auth = True
        findings.append(check_challenge(visit, response))
    elif response.status == 200:
        visit.requires_auth = False
        findings.append(skip("challenge", "No 401 challenge: the endpoint answers without a token",
                             "Clients connect without OAuth."))
    else:
        findings.append(fail("challenge", "The endpoint answers an anonymous request unexpectedly",
                             f"HTTP {response.status}: {response.text()}",
                             "A protected endpoint answers 401 with WWW-Authenticate; an open one, 200.",
                             fault="unexpected status"))
    return findings, True


def check_challenge(visit: Visit, response: http.Response) -> Finding:
    """The 401's ``WWW-Authenticate`` must point at the RFC 9728 document (MCP spec 2025-06-18, basic/authorization)."""
    header = response.header("www-authenticate")
    if not header:
        return fail("challenge", "The 401 has no WWW-Authenticate header",
                    "HTTP 401 without a challenge: clients cannot find the authorization server, and most give up.",
                    "Something between client and server strips WWW-Authenticate: let the proxy pass it.",
                    fault="challenge missing")
    visit.challenge = challenge_params(header)
    url = visit.challenge.get("resource_metadata")
    if not url:
        return warn("challenge", "The 401 challenge has no resource_metadata", f"WWW-Authenticate: {header}",
                    "Send resource_metadata=\"<RFC 9728 document URL>\" (RFC 9728 section 5.1); without it clients "
                    "must guess the well-known locations.", fault="resource_metadata missing")
    if origin_of(url) != visit.origin_of_url:
        return fail("challenge", "The 401 sends clients to another host",
                    f"resource_metadata={url}, but the endpoint is {visit.url}: clients look for the metadata there "
                    "and find another server's, or none.",
                    f'Set DJANGO_MCP["PUBLIC_BASE_URL"] = "{visit.origin_of_url}" (the address clients use), or give '
                    "clients the public URL.", fault="wrong public URL", resource_metadata=url)
    return ok("challenge", "The 401 challenge points at the protected-resource metadata",
              f"resource_metadata={url}" + (f", scope={visit.challenge['scope']!r}" if "scope" in visit.challenge
                                            else ""))


def check_origins(visit: Visit) -> list[Finding]:
    """
    ``Origin`` (MCP spec 2025-11-25, basic/transports#security-warning): the browser client's own
    must pass, a foreign one must get 403 (DNS-rebinding protection).
    """
    origin = visit.origin or visit.origin_of_url
    findings = []
    try:
        own = visit.modern("server/discover", Origin=origin)
        foreign = visit.modern("server/discover", token=False, Origin=FOREIGN_ORIGIN)
    except http.HttpError as error:
        return [fail("origin", "A request with an Origin got no answer", str(error), "Check the proxy.",
                     fault="unreachable")]
    if own.status == 403:
        findings.append(fail("origin", f"Requests from {origin} are refused",
                             f"HTTP 403 ({own.text()}): a browser-based client on that origin cannot connect.",
                             f'Add "{origin}" to DJANGO_MCP["ALLOWED_ORIGINS"] (and CORS_ALLOWED_ORIGINS for a '
                             'browser client), or set DJANGO_MCP["PUBLIC_BASE_URL"] to the public address.',
                             fault="origin refused"))
    else:
        findings.append(ok("origin", f"Requests from {origin} are accepted", f"HTTP {own.status}"))
    if foreign.status == 403:
        findings.append(ok("foreign-origin", "A foreign Origin is refused", f"HTTP 403 for Origin: {FOREIGN_ORIGIN}"))
    else:
        findings.append(warn("foreign-origin", "A foreign Origin is accepted",
                             f"HTTP {foreign.status} for Origin: {FOREIGN_ORIGIN}: any web page could call the "
                             "endpoint through a visitor's browser (DNS rebinding).",
                             'List the trusted origins in DJANGO_MCP["ALLOWED_ORIGINS"]; never "*".',
                             fault="any origin accepted"))
    return findings
