"""The 2026-07-28 mirrored request headers (MCP spec 2026-07-28, basic/transports/streamable-http)."""

import base64

import pytest

from django_mcp.protocol.errors import HeaderMismatch
from django_mcp.transports import headers as mirrored
from django_mcp.transports.headers import decode_value, header_properties


V = "2026-07-28"


def validate(hdrs, message, version, tool_schema=None):
    """What the consumer does: the headers every request has, then a known tool's Mcp-Param-* ones."""
    mirrored.validate(hdrs, message, version)
    if message["method"] == "tools/call" and tool_schema is not None:
        params = message.get("params") or {}
        mirrored.validate_params(hdrs, params.get("arguments"), tool_schema(params.get("name")) or {})
TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "note": {"type": "string"},
    },
}


def b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def schemas(name: str):
    return TOOL_SCHEMA if name == "forecast" else None


def headers(**extra: str) -> dict[bytes, str]:
    base = {b"mcp-protocol-version": V, b"mcp-method": "tools/call", b"mcp-name": "forecast"}
    base.update({key.replace("_", "-").encode(): value for key, value in extra.items()})
    return base


def tools_call(arguments=None, name="forecast"):
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


# decode_value ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain", "plain"),
        ("  padded\t", "padded"),
        ("with inner space", "with inner space"),
        (b64("café"), "café"),
        (b64(" leading"), " leading"),
        (b64("=?base64?x?="), "=?base64?x?="),
        ("=?base64??=", ""),
        ("=?BASE64?YQ==?=", "=?BASE64?YQ==?="),  # sentinels are case-sensitive: a plain value
    ],
)
def test_decode_value(raw, expected):
    assert decode_value(raw, "Mcp-Name") == expected


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?not base64!?=",
        "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?=",  # not UTF-8
        "a\x00b",
        "line\nbreak",
        "del\x7f",
        "caf\xe9",  # latin-1 decoded non-ASCII byte
    ],
)
def test_decode_value_rejects(raw):
    with pytest.raises(HeaderMismatch) as info:
        decode_value(raw, "Mcp-Name")
    assert info.value.code == -32020
    assert "Mcp-Name" in info.value.message


def test_header_properties():
    assert header_properties(TOOL_SCHEMA) == {"region": "Region", "count": "Count", "dry": "Dry-Run"}
    assert header_properties({"type": "object"}) == {}
    assert header_properties({"properties": {"a": True, "b": {"x-mcp-header": 5}}}) == {}


# validate ----------------------------------------------------------------------------------------


def test_valid_tools_call():
    validate(headers(mcp_param_region="eu", mcp_param_count="3", mcp_param_dry_run="true"),
             tools_call({"region": "eu", "count": 3, "dry": True, "note": "x"}), V, schemas)


def test_valid_other_methods():
    validate({b"mcp-protocol-version": V, b"mcp-method": "tools/list"},
             {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, V, schemas)
    validate({b"mcp-protocol-version": V, b"mcp-method": "resources/read", b"mcp-name": "books://1"},
             {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "books://1"}}, V, schemas)
    validate({b"mcp-protocol-version": V, b"mcp-method": "prompts/get", b"mcp-name": b64("résumé")},
             {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "résumé"}}, V, schemas)


def test_integers_compare_numerically_and_booleans_exactly():
    validate(headers(mcp_param_count="42.0"), tools_call({"count": 42}), V, schemas)
    with pytest.raises(HeaderMismatch):
        validate(headers(mcp_param_count="41"), tools_call({"count": 42}), V, schemas)
    with pytest.raises(HeaderMismatch):
        validate(headers(mcp_param_count="many"), tools_call({"count": 42}), V, schemas)
    with pytest.raises(HeaderMismatch):
        validate(headers(mcp_param_dry_run="True"), tools_call({"dry": True}), V, schemas)
    validate(headers(mcp_param_dry_run="false"), tools_call({"dry": False}), V, schemas)


def test_absent_or_null_argument_needs_no_header():
    validate(headers(), tools_call({"region": None}), V, schemas)
    validate(headers(), tools_call({}), V, schemas)


def test_header_for_null_argument_must_still_be_well_formed():
    with pytest.raises(HeaderMismatch):
        validate(headers(mcp_param_region="bad\x01"), tools_call({}), V, schemas)


def test_unknown_tool_has_no_param_headers():
    validate(headers(mcp_name="other"), tools_call({"region": "eu"}, name="other"), V, schemas)


@pytest.mark.parametrize(
    ("hdrs", "message", "fragment"),
    [
        ({b"mcp-method": "tools/call", b"mcp-name": "forecast"}, tools_call(), "Missing MCP-Protocol-Version"),
        (headers(mcp_protocol_version="2025-11-25"), tools_call(), "MCP-Protocol-Version header does not match"),
        ({b"mcp-protocol-version": V, b"mcp-name": "forecast"}, tools_call(), "Missing Mcp-Method"),
        (headers(mcp_method="tools/list"), tools_call(), "Mcp-Method header does not match"),
        ({b"mcp-protocol-version": V, b"mcp-method": "tools/call"}, tools_call(), "Missing Mcp-Name"),
        (headers(mcp_name="Forecast"), tools_call(), "Mcp-Name header does not match params.name"),
        (headers(mcp_name=b64("other")), tools_call(), "Mcp-Name header does not match"),
        (headers(), tools_call({"region": "eu"}), "Missing Mcp-Param-Region"),
        (headers(mcp_param_region="us"), tools_call({"region": "eu"}), "Mcp-Param-Region header does not match"),
        (headers(mcp_param_region="café"), tools_call({"region": "café"}), "not allowed"),
        ({b"mcp-protocol-version": V, b"mcp-method": "resources/read", b"mcp-name": "books://2"},
         {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "books://1"}}, "params.uri"),
    ],
)
def test_mismatches_are_32020(hdrs, message, fragment):
    with pytest.raises(HeaderMismatch) as info:
        validate(hdrs, message, V, schemas)
    assert info.value.code == -32020
    assert fragment in info.value.message


def test_non_ascii_argument_matches_when_base64_wrapped():
    validate(headers(mcp_param_region=b64("café")), tools_call({"region": "café"}), V, schemas)
