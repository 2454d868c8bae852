"""
The plain-result shortcut of ``Dispatcher.shape_result``: what it lets through must be exactly
what the schema round trip (``serialize_server_result``) would have returned, in every revision.
"""

import pytest
from mcp_types.methods import serialize_server_result

from django_mcp.protocol.plain_results import is_plain_server_info, is_plain_text_call_result
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
    assert is_plain_text_call_result(result)
    assert serialize_server_result("tools/call", version, result) == result


@pytest.mark.parametrize("version", MODERN_VERSIONS)
@pytest.mark.parametrize("result", PLAIN)
@pytest.mark.parametrize("info", [None, {"name": "demo", "version": "1.0", "title": "Demo"}])
def test_a_plain_modern_result_is_what_the_schema_round_trip_returns(version, result, info):
    # A plain result with the dispatcher's members added around a plain server info.
    shaped = modern(result, info)
    assert is_plain_text_call_result(result) and is_plain_server_info(shaped["_meta"][META_SERVER_INFO])
    assert serialize_server_result("tools/call", version, shaped) == shaped


@pytest.mark.parametrize("result", NOT_PLAIN)
def test_anything_else_takes_the_round_trip(result):
    assert not is_plain_text_call_result(result)
    assert not is_plain_text_call_result(modern(result))


def test_a_tool_result_with_modern_members_takes_the_round_trip():
    # resultType and _meta a tool returned itself are dropped or checked by the schema, never
    # passed through.
    assert not is_plain_text_call_result(modern(PLAIN[0]))
    assert not is_plain_text_call_result({**PLAIN[0], "_meta": {"tool/own": 1}})


@pytest.mark.parametrize("info", [
    {"name": "demo"},
    {"name": "demo", "version": None},
    {"name": "demo", "version": "1", "icons": []},
])
def test_a_server_info_with_other_members_takes_the_round_trip(info):
    assert not is_plain_server_info(info)


def test_a_tool_result_must_not_say_its_own_result_type():
    assert not is_plain_text_call_result({**PLAIN[0], "resultType": "input_required"})


# What the dispatcher sends --------------------------------------------------------------------


class InfoBackend:
    """A backend that only knows its server info (all shape_result asks of it)."""

    def __init__(self, info):
        self.info = info
        self.asked = 0

    def server_info(self):
        self.asked += 1
        return self.info


def shaped_by_dispatcher(result, version, info):
    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.dispatcher import Dispatcher
    from django_mcp.protocol.versions import Era

    era = Era.MODERN if version in MODERN_VERSIONS else Era.LEGACY
    dispatcher = Dispatcher(InfoBackend(info), state_codec=None)
    return dispatcher.shape_result("tools/call", dict(result), RequestContext(era=era, protocol_version=version))


@pytest.mark.parametrize("version", MODERN_VERSIONS)
@pytest.mark.parametrize("result", PLAIN + NOT_PLAIN[:1] + NOT_PLAIN[3:5])
@pytest.mark.parametrize("info", [
    {"name": "demo", "version": "1.0"},
    {"name": "demo", "version": "1.0", "title": "Demo"},
    {"name": "demo", "version": "1.0", "icons": [{"src": "https://example.com/a.png"}]},  # not plain
])
def test_the_dispatcher_sends_a_modern_call_result_as_the_round_trip_would(version, result, info):
    # Plain results skip the round trip (recognised before the 2026-07-28 members are added);
    # a server info that is not plain sends even a plain result through it.
    assert shaped_by_dispatcher(result, version, info) == serialize_server_result("tools/call", version,
                                                                                  modern(result, info))


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
@pytest.mark.parametrize("result", PLAIN + NOT_PLAIN[:1] + NOT_PLAIN[3:5])
def test_the_dispatcher_sends_a_legacy_call_result_as_the_round_trip_would(version, result):
    assert shaped_by_dispatcher(result, version, {"name": "demo", "version": "1.0"}) == \
        serialize_server_result("tools/call", version, result)


def test_a_tools_own_meta_is_kept_beside_the_server_info():
    result = {"content": [{"type": "text", "text": "hi"}], "isError": False, "_meta": {"tool/own": 1}}
    shaped = shaped_by_dispatcher(result, MODERN_VERSIONS[-1], {"name": "demo", "version": "1.0"})
    assert shaped["_meta"] == {"tool/own": 1, META_SERVER_INFO: {"name": "demo", "version": "1.0"}}


def test_the_server_info_is_asked_once_per_dispatcher():
    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.dispatcher import Dispatcher
    from django_mcp.protocol.versions import Era

    backend = InfoBackend({"name": "demo", "version": "1.0"})
    dispatcher = Dispatcher(backend, state_codec=None)
    ctx = RequestContext(era=Era.MODERN, protocol_version=MODERN_VERSIONS[-1])
    for _ in range(3):
        dispatcher.shape_result("tools/call", dict(PLAIN[0]), ctx)
        dispatcher.shape_result("ping", {}, ctx)
    assert backend.asked == 1
