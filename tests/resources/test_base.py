"""Function-backed resources and templates (MCP spec 2026-07-28, server/resources)."""

import threading

import mcp_types
import pytest
from django.contrib.auth.models import User
from pydantic import BaseModel

from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import ResourceNotFound
from django_mcp.protocol.versions import Era
from django_mcp.resources.base import Resource, ResourceTemplate


# Sync callables run through database_sync_to_async, which checks the thread's DB connections.
pytestmark = pytest.mark.django_db


class Book(BaseModel):
    title: str
    pages: int


def ctx() -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", request_id=3)


def test_resource_definition():
    def catalogue() -> str:
        """All books."""
        return ""

    resource = Resource.from_function(catalogue, uri="books://all", title="Catalogue", mime_type="application/json", size=10,
                        annotations={"audience": ["user"], "priority": 0.5}, icons=[{"src": "data:,"}],
                        meta={"com.example/k": 1})
    assert resource.definition() == {
        "uri": "books://all", "name": "catalogue", "title": "Catalogue", "description": "All books.",
        "mimeType": "application/json", "annotations": {"audience": ["user"], "priority": 0.5},
        "icons": [{"src": "data:,"}], "_meta": {"com.example/k": 1}, "size": 10,
    }


def test_minimal_definitions():
    def f(id: str = "") -> str:
        return ""

    assert Resource.from_function(f, uri="x://1").definition() == {"uri": "x://1", "name": "f"}
    assert ResourceTemplate.from_function(f, uri_template="x://{id}", name="items").definition() == {"uriTemplate": "x://{id}", "name": "items"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hello", [{"uri": "u://1", "mimeType": "text/plain", "text": "hello"}]),
        (b"\x00\x01\x02", [{"uri": "u://1", "mimeType": "application/octet-stream", "blob": "AAEC"}]),
        (bytearray(b"ab"), [{"uri": "u://1", "mimeType": "application/octet-stream", "blob": "YWI="}]),
        ({"a": 1, "é": [True, None]}, [{"uri": "u://1", "mimeType": "application/json",
                                         "text": '{"a": 1, "é": [true, null]}'}]),
        ([1, 2], [{"uri": "u://1", "mimeType": "application/json", "text": "[1, 2]"}]),
        (Book(title="Dune", pages=412), [{"uri": "u://1", "mimeType": "application/json",
                                          "text": '{"title": "Dune", "pages": 412}'}]),
        ({"uri": "u://other", "text": "t"}, [{"uri": "u://other", "text": "t"}]),
        ([{"uri": "u://a", "text": "a"}, {"uri": "u://b", "blob": "Yg=="}],
         [{"uri": "u://a", "text": "a"}, {"uri": "u://b", "blob": "Yg=="}]),
        (mcp_types.TextResourceContents(uri="u://m", text="m", mime_type="text/markdown"),
         [{"uri": "u://m", "mimeType": "text/markdown", "text": "m"}]),
        ([mcp_types.BlobResourceContents(uri="u://b", blob="AA==")], [{"uri": "u://b", "blob": "AA=="}]),
    ],
)
def test_contents_conversions(value, expected):
    def f() -> str:
        return ""

    assert Resource.from_function(f, uri="u://1").contents("u://1", value) == expected


def test_declared_mime_type_wins():
    def f() -> str:
        return ""

    resource = Resource.from_function(f, uri="u://1", mime_type="text/csv")
    assert resource.contents("u://1", "a,b") == [{"uri": "u://1", "mimeType": "text/csv", "text": "a,b"}]
    assert resource.contents("u://1", b"x")[0]["mimeType"] == "text/csv"


async def test_read_async_resource():
    async def motd() -> str:
        return "hi"

    assert await Resource.from_function(motd, uri="app://motd").read_contents("app://motd", {}, ctx()) == [
        {"uri": "app://motd", "mimeType": "text/plain", "text": "hi"}]


async def test_read_sync_resource_runs_in_a_thread():
    threads = []

    def motd() -> str:
        threads.append(threading.get_ident())
        return "hi"

    assert (await Resource.from_function(motd, uri="app://motd").read_contents("app://motd", {}, ctx()))[0]["text"] == "hi"
    assert threads and threads[0] != threading.get_ident()


async def test_template_variables_become_arguments():
    async def chapter(book: str, number: str, ctx: Context) -> dict:
        return {"book": book, "number": number, "request": ctx.request_id}

    template = ResourceTemplate.from_function(chapter, uri_template="books://{book}/chapters/{number}")
    uri = "books://dune/chapters/3"
    variables = template.match(uri)
    assert variables == {"book": "dune", "number": "3"}
    contents = await template.read_contents(uri, variables, ctx())
    assert contents == [{"uri": uri, "mimeType": "application/json",
                         "text": '{"book": "dune", "number": "3", "request": 3}'}]
    assert template.match("books://dune") is None


@pytest.mark.parametrize("error", [KeyError("x"), LookupError("y"), IndexError(0)])
async def test_lookup_errors_mean_not_found(error):
    async def missing(id: str) -> str:
        raise error

    with pytest.raises(ResourceNotFound) as info:
        await ResourceTemplate.from_function(missing, uri_template="b://{id}").read_contents("b://9", {"id": "9"}, ctx())
    assert info.value.code == -32002
    assert info.value.data == {"uri": "b://9"}


async def test_object_does_not_exist_means_not_found():
    def missing(id: str) -> str:
        raise User.DoesNotExist("gone")

    with pytest.raises(ResourceNotFound):
        await ResourceTemplate.from_function(missing, uri_template="u://{id}").read_contents("u://1", {"id": "1"}, ctx())


async def test_other_errors_propagate():
    async def broken() -> str:
        raise ValueError("disk")

    with pytest.raises(ValueError):
        await Resource.from_function(broken, uri="x://1").read_contents("x://1", {}, ctx())


async def test_template_completion():
    async def f(genre: str, author: str, year: str) -> str:
        return ""

    async def authors(value: str, context: dict) -> list:
        return [f"{value}-{context.get('genre')}"]

    def years(value: str, context: dict) -> list:
        return [2000, 2001]

    template = ResourceTemplate.from_function(f, uri_template="b://{genre}/{author}/{year}",
                                complete={"genre": ["scifi", "science", "poetry"], "author": authors, "year": years})
    assert await template.get_completions(Context(ctx()), "genre", "sci", {}) == ["scifi", "science"]
    assert await template.get_completions(Context(ctx()), "author", "le", {"genre": "scifi"}) == ["le-scifi"]
    assert await template.get_completions(Context(ctx()), "year", "", {}) == ["2000", "2001"]
    assert await template.get_completions(Context(ctx()), "unknown", "", {}) == []
