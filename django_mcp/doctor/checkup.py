"""The walk: every check in the order a client meets its step, later ones building on what earlier ones found."""

from __future__ import annotations

from .card import check_server_card
from .cimd import check_client_id_document
from .cors import check_cors
from .endpoint import check_https, check_origins, probe
from .findings import Finding
from .metadata import check_resource_metadata, check_server_metadata
from .registration import check_registration
from .sse import check_sse
from .transport import check_legacy, check_modern, check_streaming, check_token
from .visit import Visit


def diagnose(visit: Visit) -> list[Finding]:
    """Check the endpoint ``visit`` names, as Claude, ChatGPT, Cursor and VS Code connect to it."""
    findings = [check_https(visit)]
    first, reachable = probe(visit)
    findings += first
    if not reachable:
        return findings
    findings += check_origins(visit)
    findings += check_resource_metadata(visit)
    findings += check_server_metadata(visit)
    findings += check_client_id_document(visit)
    findings += check_registration(visit)
    findings += check_cors(visit)
    findings.append(check_token(visit))
    findings.append(check_legacy(visit))
    findings.append(check_modern(visit))
    # After the handshakes, the extras: the optional card, whose sse remote the 2024-11-05 transport's check uses.
    findings.append(check_server_card(visit))
    findings.append(check_sse(visit))
    findings.append(check_streaming(visit))
    return findings
