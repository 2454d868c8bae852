"""HTTP statuses for JSON-RPC errors per era (MCP spec 2026-07-28, basic/transports/streamable-http; MCP spec 2026-07-28, basic#error-codes)."""

import pytest

from django_mcp.protocol.versions import Era
from django_mcp.transports.status import status_for_error


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (-32601, 404),
        (-32700, 400),
        (-32600, 400),
        (-32602, 400),
        (-32020, 400),
        (-32021, 400),
        (-32022, 400),
        (-32603, 200),
        (-32002, 200),
        (-32042, 200),
        (1234, 200),
    ],
)
def test_modern_statuses(code, status):
    assert status_for_error(code, Era.MODERN) == status


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (-32700, 400),
        (-32600, 400),
        (-32601, 200),
        (-32602, 200),
        (-32603, 200),
        (-32002, 200),
        (-32021, 200),
    ],
)
def test_legacy_statuses(code, status):
    assert status_for_error(code, Era.LEGACY) == status
