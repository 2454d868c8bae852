"""Running tools: arguments, results, content conversion, errors (MCP spec 2026-07-28, server/tools)."""

import json
import threading

import mcp_types
import pytest
from channels.db import DatabaseSyncToAsync
from pydantic import BaseModel

from django_mcp import content
from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.input import InputRequired
from django_mcp.protocol.versions import Era
from django_mcp.tools.base import Tool, error_result, to_content


# Sync callables run through database_sync_to_async, which checks the thread's DB connections.
pytestmark = pytest.mark.django_db


class Point(BaseModel):
    x: int
    y: int = 0


def ctx(**kwargs) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", **kwargs)


def test_definition_from_function():
    def lookup(isbn: str) -> str:
        """
        Find a book.

        By ISBN.
        """
        return isbn

    tool = Tool.from_function(lookup, title="Lookup", annotations={"readOnlyHint": True}, icons=[{"src": "data:,"}],
                meta={"com.example/x": 1})
    assert tool.definition() == {
        "name": "lookup",
        "title": "Lookup",
        "description": "Find a book.\n\nBy ISBN.",
        "inputSchema": tool.input_schema,
        "annotations": {"readOnlyHint": True},
        "icons": [{"src": "data:,"}],
        "_meta": {"com.example/x": 1},
    }


def test_definition_overrides_and_minimal():
    def f() -> str:
        return ""

    tool = Tool.from_function(f, name="other", description="Explicit")
    assert tool.definition() == {"name": "other", "description": "Explicit", "inputSchema": tool.input_schema}


async def test_async_tool_result():
    async def greet(name: str) -> str:
        return f"Hello {name}"

    result = await Tool.from_function(greet).run({"name": "Ada"}, ctx())
    assert result == {"content": [{"type": "text", "text": "Hello Ada"}], "isError": False}


async def test_arguments_are_validated_and_coerced():
    seen = {}

    async def f(n: int, p: Point, flag: bool = False) -> str:
        seen.update(n=n, p=p, flag=flag)
        return "ok"

    result = await Tool.from_function(f).run({"n": "5", "p": {"x": 1}}, ctx())
    assert result["isError"] is False
    assert seen == {"n": 5, "p": Point(x=1, y=0), "flag": False}
    assert isinstance(seen["p"], Point)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "n: Field required"),
        ({"n": "abc"}, "n: Input should be a valid integer"),
        ({"n": 1, "extra": True}, "extra: Extra inputs are not permitted"),
    ],
)
async def test_invalid_arguments_are_error_results(arguments, fragment):
    called = []

    async def f(n: int) -> str:
        called.append(n)
        return "ok"

    result = await Tool.from_function(f).run(arguments, ctx())
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Invalid arguments for tool f: ")
    assert fragment in text
    assert called == []


async def test_hand_written_schema_passes_arguments_unvalidated():
    async def raw(**kwargs) -> str:
        return json.dumps(kwargs, sort_keys=True)

    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tool = Tool.from_function(raw, input_schema=schema)
    assert tool.definition()["inputSchema"] == schema
    result = await tool.run({"q": 1, "z": [2]}, ctx())
    assert result["content"][0]["text"] == '{"q": 1, "z": [2]}'


async def test_exception_becomes_is_error():
    from django_mcp import ToolError

    async def boom() -> str:
        raise ToolError("bad input value")

    async def silent() -> str:
        raise ToolError()

    async def unexpected() -> str:
        raise KeyError("secret")

    assert await Tool.from_function(boom).run({}, ctx()) == {"content": [{"type": "text", "text": "bad input value"}],
                                               "isError": True}
    assert (await Tool.from_function(silent).run({}, ctx()))["content"][0]["text"] == "ToolError"
    assert await Tool.from_function(unexpected).run({}, ctx()) == {
        "content": [{"type": "text", "text": "Tool unexpected failed with an internal error."}], "isError": True}


async def test_mcp_errors_and_input_requests_pass_through():
    async def refuse() -> str:
        raise InvalidParams("nope")

    async def ask() -> str:
        raise InputRequired({"k": {"method": "roots/list", "params": {}}})

    with pytest.raises(InvalidParams):
        await Tool.from_function(refuse).run({}, ctx())
    with pytest.raises(InputRequired):
        await Tool.from_function(ask).run({}, ctx())


async def test_sync_tool_runs_in_a_thread_via_database_sync_to_async():
    threads = []

    def blocking(a: int) -> int:
        threads.append(threading.get_ident())
        return a * 2

    tool = Tool.from_function(blocking)
    assert isinstance(tool.callable._sync_runner.pooled, DatabaseSyncToAsync)
    result = await tool.run({"a": 21}, ctx())
    assert result["structuredContent"] == {"result": 42}
    assert threads and threads[0] != threading.get_ident()


async def test_async_tool_runs_on_the_loop():
    threads = []

    async def quick() -> str:
        threads.append(threading.get_ident())
        return "x"

    tool = Tool.from_function(quick)
    assert tool.callable._sync_runner is None
    await tool.run({}, ctx())
    assert threads == [threading.get_ident()]


async def test_context_is_injected():
    async def who(ctx: Context, greeting: str = "hi") -> str:
        return f"{greeting} {ctx.era} {ctx.protocol_version} {ctx.request_id}"

    result = await Tool.from_function(who).run({}, ctx(request_id=9))
    assert result["content"][0]["text"] == "hi legacy 2025-11-25 9"


async def test_context_injected_into_sync_tool():
    def who(context: Context) -> str:
        return context.era

    assert (await Tool.from_function(who).run({}, RequestContext(era=Era.MODERN, protocol_version="2026-07-28"))
            )["content"][0]["text"] == "modern"


async def test_structured_output():
    async def where() -> Point:
        return Point(x=3)

    result = await Tool.from_function(where).run({}, ctx())
    assert result["structuredContent"] == {"x": 3, "y": 0}
    assert json.loads(result["content"][0]["text"]) == {"x": 3, "y": 0}
    assert result["isError"] is False


async def test_wrapped_structured_output():
    async def numbers() -> list[int]:
        return [1, 2]

    result = await Tool.from_function(numbers).run({}, ctx())
    assert result["structuredContent"] == {"result": [1, 2]}
    assert json.loads(result["content"][0]["text"]) == {"result": [1, 2]}


async def test_structured_output_that_does_not_match_is_an_error():
    async def wrong() -> int:
        return "many"

    result = await Tool.from_function(wrong).run({}, ctx())
    assert result["isError"] is True
    assert "structuredContent" not in result


async def test_output_validation_error_is_not_blamed_on_arguments():
    async def wrong(n: int) -> int:
        return "many"

    result = await Tool.from_function(wrong).run({"n": 1}, ctx())
    assert result["isError"] is True
    assert "Invalid arguments" not in result["content"][0]["text"]


async def test_ready_made_call_tool_result_is_returned_as_is():
    ready = {"content": [{"type": "text", "text": "custom"}], "isError": True}

    async def f() -> dict:
        return ready

    assert await Tool.from_function(f).run({}, ctx()) is ready


async def test_structured_output_disabled():
    async def f() -> int:
        return 5

    result = await Tool.from_function(f, structured_output=False).run({}, ctx())
    assert result == {"content": [{"type": "text", "text": "5"}], "isError": False}


# Content conversion ---------------------------------------------------------------------------


def test_to_content_conversions():
    assert to_content(None) == []
    assert to_content("hi") == [{"type": "text", "text": "hi"}]
    assert to_content(content.text("t")) == [{"type": "text", "text": "t"}]
    assert to_content(content.image(b"\x89PNG", "image/png")) == [
        {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]
    assert to_content({"a": 1, "b": "é"}) == [{"type": "text", "text": '{"a": 1, "b": "é"}'}]
    assert to_content(Point(x=1)) == [{"type": "text", "text": '{"x": 1, "y": 0}'}]
    assert to_content(7) == [{"type": "text", "text": "7"}]


def test_to_content_flattens_lists():
    blocks = to_content(["a", content.audio(b"RIFF", "audio/wav"), ["b", None], ("c",)])
    assert blocks == [
        {"type": "text", "text": "a"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {"type": "text", "text": "b"},
        {"type": "text", "text": "c"},
    ]


def test_to_content_embedded_and_links():
    blocks = to_content([
        content.embedded_text("books://1", "Dune"),
        content.embedded_blob("files://x", b"\x00\x01"),
        content.resource_link("books://2", "Emma", mime_type="text/plain"),
    ])
    assert blocks == [
        {"type": "resource", "resource": {"uri": "books://1", "mimeType": "text/plain", "text": "Dune"}},
        {"type": "resource", "resource": {"uri": "files://x", "mimeType": "application/octet-stream",
                                          "blob": "AAE="}},
        {"type": "resource_link", "uri": "books://2", "name": "Emma", "mimeType": "text/plain"},
    ]


COVER = {"content": [{"type": "text", "text": "Cover:"}, {"type": "image", "data": "QUJD", "mimeType": "image/jpeg"}],
         "isError": False}


async def test_list_of_content_blocks_from_a_tool():
    async def cover():
        return [content.text("Cover:"), content.image("QUJD", "image/jpeg")]

    async def typed() -> list[mcp_types.ContentBlock]:
        return [content.text("Cover:"), content.image("QUJD", "image/jpeg")]

    assert await Tool.from_function(cover).run({}, ctx()) == COVER
    assert Tool.from_function(typed).output_schema is None
    assert await Tool.from_function(typed).run({}, ctx()) == COVER


async def test_content_blocks_under_a_bare_list_annotation():
    async def cover() -> list:
        return [content.text("Cover:"), content.image("QUJD", "image/jpeg")]

    assert await Tool.from_function(cover).run({}, ctx()) == COVER


def test_error_result():
    assert error_result("x") == {"content": [{"type": "text", "text": "x"}], "isError": True}


async def test_only_errors_meant_for_the_model_reach_it(settings, caplog):
    from django.core.exceptions import PermissionDenied, ValidationError

    from django_mcp import ToolError

    def failing(exc: Exception) -> Tool:
        def fails() -> str:
            raise exc
        return Tool.from_function(fails)

    async def text(exc: Exception) -> str:
        result = await failing(exc).run({}, ctx())
        assert result["isError"] is True
        return result["content"][0]["text"]

    assert await text(ToolError("No book with id 7")) == "No book with id 7"
    assert await text(ValidationError("Enter a valid date.")) == "Enter a valid date."
    assert await text(PermissionDenied("Only librarians may do that.")) == "Only librarians may do that."
    leaky = RuntimeError("connection to /var/run/postgresql/.s.PGSQL.5432 failed: password=hunter2")
    with caplog.at_level("ERROR", logger="django_mcp.tools"):
        assert await text(leaky) == "Tool fails failed with an internal error."
    assert "hunter2" in caplog.text  # logged in full for the operator, never sent
    settings.DEBUG = True
    assert "hunter2" in await text(leaky)  # while developing, the real message helps
