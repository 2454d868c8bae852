"""
One run of the doctor against one endpoint: the options it was given and what it learned on the
way (the challenge, the metadata documents), which later checks build on, as a client's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..protocol.versions import (LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, META_CLIENT_CAPABILITIES,
                                 META_CLIENT_INFO, META_PROTOCOL_VERSION)
from . import http
from .http import origin_of


CLIENT_INFO = {"name": "mcp-doctor", "version": "1"}
#: Both, as every Streamable HTTP client must send them (MCP spec 2025-11-25, basic/transports#sending-messages-to-the-server).
ACCEPT = "application/json, text/event-stream"
#: An origin no deployment trusts: a page there must be refused (DNS rebinding, MCP spec 2025-11-25,
#: basic/transports#security-warning). ``.invalid`` never resolves (RFC 2606 section 2).
FOREIGN_ORIGIN = "https://mcp-doctor.invalid"

# auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 9110 section 11.2.
_PARAM = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def challenge_params(header: str) -> dict[str, str]:
    """The auth-params of a ``Bearer`` challenge (RFC 6750 section 3); {} for another scheme."""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return {}
    return {key.lower(): (quoted.replace('\\"', '"') if quoted or not bare else bare)
            for key, quoted, bare in _PARAM.findall(rest)}


@dataclass
class Visit:
    """What the doctor was asked to check, and what it found so far."""

    url: str
    token: str | None = None
    origin: str | None = None
    timeout: float = 10.0
    register: bool = True
    progress_tool: str | None = None
    progress_arguments: dict[str, Any] = field(default_factory=dict)
    #: A client ID metadata document URL (``--client-id-url``) to read and have the server fetch.
    client_id_url: str | None = None
    #: The 2024-11-05 HTTP+SSE stream's URL (``--sse-url``); without it, the Server Card's ``sse`` remote.
    sse_url: str | None = None
    #: The endpoint answered the anonymous probe with 401 (None: the probe got no usable answer).
    requires_auth: bool | None = None
    challenge: dict[str, str] = field(default_factory=dict)
    resource_metadata: dict[str, Any] | None = None
    server_metadata: dict[str, Any] | None = None
    #: The tools/list of the legacy handshake, so the progress check knows whether its tool exists.
    tool_names: list[str] | None = None
    #: The Server Card, when one was served (SEP-2127 draft), for its ``sse`` remote.
    server_card: dict[str, Any] | None = None
    next_id: int = 0

    @property
    def origin_of_url(self) -> str:
        return origin_of(self.url)

    @property
    def path(self) -> str:
        return urlsplit(self.url).path.rstrip("/") or ""

    def well_known(self, name: str, suffix: str = "") -> str:
        """``/.well-known/NAME`` at the endpoint's origin, then ``suffix`` (RFC 8615; RFC 9728 section 3.1)."""
        return f"{self.origin_of_url}/.well-known/{name}{suffix}"

    def request_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def headers(self, *, token: bool = True, **extra: str) -> dict[str, str]:
        """The headers of an MCP POST: content negotiation, the bearer token if any, ``extra``."""
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if token and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update({name.replace("_", "-"): value for name, value in extra.items()})
        return headers

    def modern(self, method: str, params: dict[str, Any] | None = None, *, token: bool = True,
               name: str | None = None, **headers: str) -> http.Response:
        """A 2026-07-28 request: version and capabilities in ``_meta``, mirrored in headers (basic/transports)."""
        meta = {META_PROTOCOL_VERSION: LATEST_MODERN_VERSION, META_CLIENT_CAPABILITIES: {},
                META_CLIENT_INFO: CLIENT_INFO}
        body = {"jsonrpc": "2.0", "id": self.request_id(), "method": method,
                "params": {**(params or {}), "_meta": {**(params or {}).get("_meta", {}), **meta}}}
        mirrored = {"MCP-Protocol-Version": LATEST_MODERN_VERSION, "Mcp-Method": method}
        if name is not None:
            mirrored["Mcp-Name"] = name
        return http.exchange(self.url, headers={**self.headers(token=token), **mirrored, **headers}, body=body,
                             timeout=self.timeout)

    def legacy(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
               notification: bool = False, **headers: str) -> http.Response:
        """A 2025-11-25 message, in the session ``session`` (basic/transports#session-management)."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not notification:
            body["id"] = self.request_id()
        if params is not None:
            body["params"] = params
        extra = dict(headers)
        if method != "initialize":
            extra["MCP-Protocol-Version"] = LATEST_LEGACY_VERSION
        if session:
            extra["Mcp-Session-Id"] = session
        return http.exchange(self.url, headers={**self.headers(), **extra}, body=body, timeout=self.timeout)

    def initialize_params(self) -> dict[str, Any]:
        return {"protocolVersion": LATEST_LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}


def answer_of(response: http.Response) -> dict[str, Any] | None:
    """The JSON-RPC response in an answer (its JSON body, or the last event of its stream)."""
    if response.events:
        return response.events[-1][1]
    body = response.json()
    return body if isinstance(body, dict) else None
