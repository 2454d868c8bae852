"""
The plain-result shortcut of ``Dispatcher.shape_result``: what it lets through must be exactly
what the schema round trip (``serialize_server_result``) would have returned, in every revision.
"""

import pytest
from mcp_types.methods import serialize_server_result

from django_mcp.protocol.plain_results import is_plain_text_call_result
from django_mcp.protocol.versions import LEGACY_VERSIONS, META_SERVER_INFO, MODERN_VERSIONS


def modern(result, info=None):
    meta = {META_SERVER_INFO: info or {"name": "demo", "version": "1.0"}}
    return {"resultType": "complete", **result, "_meta": meta}


PLAIN = [
    {"content": [{"type": "text", "text": "hi"}], "isError": False},
    {"content": [], "isError": False},
    {"content": [{"type": "text", "text": "bad input"}], "isError": True},
    {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "é\u2028"}], "isError": False},
]

NOT_PLAIN = [
    {"content": [{"type": "text", "text": "hi"}]},  # isError missing: the schema decides
    {"content": [{"type": "text", "text": "hi"}], "isError": 0},
    {"content": [{"type": "text", "text": None}], "isError": False},
    {"content": [{"type": "text", "text": "hi", "annotations": {"priority": 1}}], "isError": False},
    {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "isError": False},
    {"content": ({"type": "text", "text": "hi"},), "isError": False},
    {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False},
    {"content": [{"type": "text", "text": "hi"}], "isError": False, "extra": 1},
]


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
@pytest.mark.parametrize("result", PLAIN)
def test_a_plain_legacy_result_is_what_the_schema_round_trip_returns(version, result):
    assert is_plain_text_call_result(result, modern=False)
    assert serialize_server_result("tools/call", version, result) == result


@pytest.mark.parametrize("version", MODERN_VERSIONS)
@pytest.mark.parametrize("result", PLAIN)
@pytest.mark.parametrize("info", [None, {"name": "demo", "version": "1.0", "title": "Demo"}])
def test_a_plain_modern_result_is_what_the_schema_round_trip_returns(version, result, info):
    shaped = modern(result, info)
    assert is_plain_text_call_result(shaped, modern=True)
    assert serialize_server_result("tools/call", version, shaped) == shaped


@pytest.mark.parametrize("result", NOT_PLAIN)
def test_anything_else_takes_the_round_trip(result):
    assert not is_plain_text_call_result(result, modern=False)
    assert not is_plain_text_call_result(modern(result), modern=True)


def test_a_legacy_result_with_modern_members_takes_the_round_trip():
    # resultType and _meta are dropped or checked by the legacy schema, never passed through.
    assert not is_plain_text_call_result(modern(PLAIN[0]), modern=False)


@pytest.mark.parametrize("meta", [
    {META_SERVER_INFO: {"name": "demo", "version": "1.0"}, "tool/own": 1},
    {META_SERVER_INFO: {"name": "demo"}},
    {META_SERVER_INFO: {"name": "demo", "version": None}},
    {META_SERVER_INFO: {"name": "demo", "version": "1", "icons": []}},
])
def test_a_modern_result_with_other_meta_takes_the_round_trip(meta):
    assert not is_plain_text_call_result({**modern(PLAIN[0]), "_meta": meta}, modern=True)


def test_a_modern_result_must_be_complete():
    assert not is_plain_text_call_result({**modern(PLAIN[0]), "resultType": "input_required"}, modern=True)
