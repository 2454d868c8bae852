"""Matching URIs against RFC 6570 templates, and refusing decoded values that would leave their place."""

import pytest

from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SignedStateCodec
from django_mcp.resources.uri_templates import UriTemplate
from django_mcp.sites import get_default_site


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("books://{id}", "books://42", {"id": "42"}),
        ("books://{id}", "books://a%20b", {"id": "a b"}),
        ("books://{id}.json", "books://7.json", {"id": "7"}),
        ("users://{org}/{user}", "users://acme/ada", {"org": "acme", "user": "ada"}),
        ("map://{x,y}", "map://1024,768", {"x": "1024", "y": "768"}),
        ("files://{+path}", "files://a/b/c.txt", {"path": "a/b/c.txt"}),
        ("files://{+path}/raw", "files://a/b/raw", {"path": "a/b"}),
        ("doc://page{#section}", "doc://page#intro", {"section": "intro"}),
        ("api://root{/id}", "api://root/5", {"id": "5"}),
        ("search://books{?q,lang}", "search://books?q=dune&lang=en", {"q": "dune", "lang": "en"}),
        ("search://books{?q,lang}", "search://books?lang=en&q=du%20ne", {"q": "du ne", "lang": "en"}),
        ("search://books{?q,lang}", "search://books?q=x", {"q": "x"}),
        ("search://books{?q,lang}", "search://books", {}),
        ("search://books{?q}", "search://books?q=x&other=1", {"q": "x"}),
        ("search://books{?q}{&page}", "search://books?q=x&page=3", {"q": "x", "page": "3"}),
        ("search://b?x=1{&page}", "search://b?x=1&page=2", {"page": "2"}),
        ("books://{id}{?fields}", "books://5?fields=a,b", {"id": "5", "fields": "a,b"}),
    ],
)
def test_match(template, uri, expected):
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("books://{id}", "books://"),
        ("books://{id}", "books://4/2"),
        ("books://{id}", "books://4?x=1"),
        ("books://{id}", "films://4"),
        ("books://{id}", "xbooks://4"),
        ("res://a.b/{id}", "res://aXb/1"),  # literal text is not a regex
        ("users://{org}/{user}", "users://acme"),
        ("api://root{/id}", "api://root5"),
    ],
)
def test_no_match(template, uri):
    assert UriTemplate(template).match(uri) is None


def test_variables_are_recorded():
    template = UriTemplate("s://{a}/{+b}{?c,d}{&e}")
    assert template.variables == ["a", "b"]
    assert template.query_variables == ["c", "d", "e"]
    assert template.template == "s://{a}/{+b}{?c,d}{&e}"


def test_label_expansion():
    assert UriTemplate("file://name{.ext}").match("file://name.txt") == {"ext": "txt"}


def test_multi_variable_path_and_label_expansion():
    assert UriTemplate("api://r{/a,b}").match("api://r/x/y") == {"a": "x", "b": "y"}
    assert UriTemplate("f://n{.a,b}").match("f://n.x.y") == {"a": "x", "b": "y"}


# Decoded values that must never reach a resource (issue 11) ------------------------------------
# Values are percent-decoded after matching (RFC 3986 section 2.1): a one-segment expression must
# still be one segment once decoded, a multi-segment one must not climb out of its place, and no
# value may carry a control character or bytes that are not UTF-8.


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("books://{id}", "books://..%2F..%2Fetc%2Fpasswd"),
        ("books://{id}", "books://%2Fetc%2Fpasswd"),
        ("books://{id}", "books://a%2Fb"),
        ("books://{id}", "books://a%5Cb"),
        ("books://{id}", "books://a\\b"),
        ("books://{id}", "books://.."),
        ("books://{id}", "books://%2E%2E"),
        ("books://{id}", "books://%2e"),
        ("books://{id}/raw", "books://%2E%2E/raw"),
        ("books://{id}", "books://%00"),
        ("books://{id}", "books://a%00b"),
        ("books://{id}", "books://a%0Ab"),
        ("books://{id}", "books://%7F"),
        ("books://{id}", "books://%C2%85"),  # NEL, a C1 control character
        ("books://{id}", "books://%FF"),  # not UTF-8
        ("map://{x,y}", "map://..,%2F"),
        ("file://name{.ext}", "file://name.%2E%2E"),
        ("file://name{.ext}", "file://name.a%2Fb"),
        ("api://root{/id}", "api://root/%2E%2E"),
        ("api://root{/id}", "api://root/a%2Fb"),
        ("files://{+path}", "files://a/../b"),
        ("files://{+path}", "files://../etc/passwd"),
        ("files://{+path}", "files://a/%2E%2E/b"),
        ("files://{+path}", "files://a%2F..%2Fb"),
        ("files://{+path}", "files://a%5C..%5Cb"),
        ("files://{+path}", "files://a/.."),
        ("files://{+path}", "files://a/%00"),
        ("files://{+path}/raw", "files://../raw"),
        ("doc://page{#section}", "doc://page#..%2F.."),
        ("search://books{?q}", "search://books?q=%00"),
        ("search://books{?q}", "search://books?q=../x"),
        ("search://books{?q}", "search://books?q=%FF"),
    ],
)
def test_unsafe_decoded_values_do_not_match(template, uri):
    assert UriTemplate(template).match(uri) is None


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("books://{id}", "books://...", {"id": "..."}),
        ("books://{id}", "books://..x", {"id": "..x"}),
        ("books://{id}", "books://%C3%A9t%C3%A9", {"id": "été"}),
        ("files://{+path}", "files://a/.hidden/..b/c.txt", {"path": "a/.hidden/..b/c.txt"}),
        ("files://{+path}", "files://a/./b", {"path": "a/./b"}),
        ("search://books{?q}", "search://books?q=a/b", {"q": "a/b"}),
    ],
)
def test_safe_decoded_values_still_match(template, uri, expected):
    assert UriTemplate(template).match(uri) == expected


def test_opaque_variables_keep_separators_but_not_control_characters():
    # A database key or slug is looked up, never used as a path: "/" and dots are just characters.
    template = UriTemplate("catalogue://writer/{slug}", opaque={"slug"})
    assert template.match("catalogue://writer/o%27brien%20%C3%A9%2Fx") == {"slug": "o'brien é/x"}
    assert template.match("catalogue://writer/..") == {"slug": ".."}
    assert template.match("catalogue://writer/a%00b") is None
    assert template.match("catalogue://writer/%FF") is None
    assert UriTemplate("catalogue://writer/{slug}").match("catalogue://writer/o%27brien%2Fx") is None


@pytest.mark.django_db
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("value", ["..%2F..%2Fetc%2Fpasswd", "%00", "%2E%2E", "a%5Cb"])
async def test_a_read_with_an_unsafe_value_is_resource_not_found(era, value):
    # test://template/{id}/data of the conformance fixtures (tests/conformance_app/resources.py):
    # the URI names nothing, so the answer is the era's resource-not-found (MCP spec 2026-07-28,
    # server/resources: -32602; -32002 before), and the resource function never runs.
    dispatcher = Dispatcher(get_default_site(), state_codec=SignedStateCodec())
    uri = f"test://template/{value}/data"
    params: dict = {"uri": uri}
    if era == "modern":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {}}
        ctx = RequestContext(era=Era.MODERN, protocol_version="2026-07-28")
    else:
        ctx = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25")
    answer = await dispatcher.handle_request({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                              "params": params}, ctx)
    assert answer["error"] == {"code": -32602 if era == "modern" else -32002,
                               "message": f"Resource not found: {uri}", "data": {"uri": uri}}
    good = await dispatcher.handle_request({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                                            "params": {**params, "uri": "test://template/a%20b/data"}}, ctx)
    assert '"id": "a b"' in good["result"]["contents"][0]["text"]
