"""The 2026-07-28 per-request ``_meta`` envelope (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28,
basic/versioning, SEP-2575)."""

import pytest

from django_mcp.protocol.errors import InvalidParams, UnsupportedProtocolVersion
from django_mcp.protocol.envelope import ModernEnvelope, modern_version_of, read_envelope
from django_mcp.protocol.versions import ALL_VERSIONS


PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"


def test_modern_version_of():
    assert modern_version_of({"params": {"_meta": {PV: "2026-07-28"}}}) == "2026-07-28"
    assert modern_version_of({"params": {"_meta": {PV: "1999-01-01"}}}) == "1999-01-01"
    assert modern_version_of({"params": {"_meta": {}}}) is None
    assert modern_version_of({"params": {"_meta": "x"}}) is None
    assert modern_version_of({"params": []}) is None
    assert modern_version_of({"method": "ping"}) is None


def test_read_envelope_complete():
    envelope = read_envelope({"_meta": {PV: "2026-07-28", CAPS: {"elicitation": {}},
                                        INFO: {"name": "c", "version": "1"}, LEVEL: "warning"}})
    assert envelope == ModernEnvelope("2026-07-28", {"elicitation": {}}, {"name": "c", "version": "1"}, "warning")


def test_read_envelope_minimal():
    envelope = read_envelope({"_meta": {PV: "2026-07-28", CAPS: {}}})
    assert envelope.protocol_version == "2026-07-28"
    assert envelope.client_capabilities == {}
    assert envelope.client_info is None
    assert envelope.log_level is None


def test_non_object_client_info_is_dropped():
    assert read_envelope({"_meta": {PV: "2026-07-28", CAPS: {}, INFO: "me"}}).client_info is None


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        (None, "Missing params._meta"),
        ({}, "Missing params._meta"),
        ({"_meta": "x"}, "Missing params._meta"),
        ({"_meta": {CAPS: {}}}, PV),
        ({"_meta": {PV: "2026-07-28"}}, CAPS),
        ({"_meta": {PV: "2026-07-28", CAPS: None}}, CAPS),
        ({"_meta": {PV: "2026-07-28", CAPS: []}}, CAPS),
        ({"_meta": {PV: "2026-07-28", CAPS: {}, LEVEL: "verbose"}}, "Unknown log level"),
    ],
)
def test_missing_or_invalid_meta_is_invalid_params(params, fragment):
    with pytest.raises(InvalidParams) as info:
        read_envelope(params)
    assert info.value.code == -32602
    assert fragment in info.value.message


@pytest.mark.parametrize("version", ["1900-01-01", "2025-11-25", "2024-11-05", 20260728])
def test_version_not_served_statelessly_is_32022(version):
    with pytest.raises(UnsupportedProtocolVersion) as info:
        read_envelope({"_meta": {PV: version, CAPS: {}}})
    assert info.value.code == -32022
    # The error repeats what was asked for only when it is a string (issue 11: errors echo
    # strings only, and ``requested`` is a string in the error's schema).
    assert info.value.data.get("requested") == (version if isinstance(version, str) else None)
    supported = info.value.data["supported"]
    assert supported[0] == "2026-07-28"
    assert sorted(supported) == sorted(ALL_VERSIONS)


def test_version_is_checked_before_capabilities():
    with pytest.raises(UnsupportedProtocolVersion):
        read_envelope({"_meta": {PV: "1900-01-01"}})
