"""Matching URIs against RFC 6570 templates."""

import pytest

from django_mcp.resources.uri_templates import UriTemplate


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
