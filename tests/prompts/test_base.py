"""Function-backed prompts (MCP spec 2026-07-28, server/prompts)."""

import mcp_types
import pytest

from django_mcp import content
from django_mcp.context import Context
from django_mcp.prompts.base import Prompt, assistant, to_messages, user
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era


# Sync callables run through database_sync_to_async, which checks the thread's DB connections.
pytestmark = pytest.mark.django_db


def ctx() -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25")


def review(code: str, language: str = "python", ctx: Context = None) -> str:
    """Review some code."""
    return f"Review this {language}: {code}"


def test_definition():
    prompt = Prompt.from_function(review, title="Code review", argument_descriptions={"code": "The code"},
                    icons=[{"src": "data:,"}], meta={"com.example/x": True})
    assert prompt.definition() == {
        "name": "review",
        "title": "Code review",
        "description": "Review some code.",
        "icons": [{"src": "data:,"}],
        "_meta": {"com.example/x": True},
        "arguments": [
            {"name": "code", "required": True, "description": "The code"},
            {"name": "language", "required": False},
        ],
    }


def test_definition_without_arguments():
    def hello() -> str:
        return "hi"

    assert Prompt.from_function(hello, name="hi").definition() == {"name": "hi"}


def test_var_args_are_not_arguments():
    def f(a: str, *rest: str, **kw: str) -> str:
        return a

    assert [arg["name"] for arg in Prompt.from_function(f).arguments] == ["a"]


async def test_render_text_with_defaults_and_description():
    result = await Prompt.from_function(review).get({"code": "x = 1"}, ctx())
    assert result == {
        "description": "Review some code.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Review this python: x = 1"}}],
    }


async def test_render_ignores_unknown_arguments():
    result = await Prompt.from_function(review).get({"code": "y", "language": "go", "bogus": "1"}, ctx())
    assert result["messages"][0]["content"]["text"] == "Review this go: y"


async def test_missing_required_argument_is_32602():
    with pytest.raises(InvalidParams) as info:
        await Prompt.from_function(review).get({"language": "go"}, ctx())
    assert info.value.code == -32602
    assert "code" in info.value.message


async def test_async_prompt_with_context():
    async def who(ctx: Context) -> str:
        return f"era {ctx.era}"

    prompt = Prompt.from_function(who)
    assert prompt.arguments == []
    result = await prompt.get({}, ctx())
    assert result == {"messages": [{"role": "user", "content": {"type": "text", "text": "era legacy"}}]}


def test_message_builders():
    assert user("hi") == {"role": "user", "content": {"type": "text", "text": "hi"}}
    assert assistant(content.image("QUJD", "image/png")) == {
        "role": "assistant", "content": {"type": "image", "data": "QUJD", "mimeType": "image/png"}}


def test_to_messages_conversions():
    message = mcp_types.PromptMessage(role="assistant", content=mcp_types.TextContent(text="ok"))
    assert to_messages("plain") == [{"role": "user", "content": {"type": "text", "text": "plain"}}]
    assert to_messages(assistant("a")) == [{"role": "assistant", "content": {"type": "text", "text": "a"}}]
    assert to_messages(content.text("t")) == [{"role": "user", "content": {"type": "text", "text": "t"}}]
    assert to_messages(message) == [{"role": "assistant", "content": {"type": "text", "text": "ok"}}]
    assert to_messages(["q", assistant("a"), content.resource_link("b://1", "Book"), message]) == [
        {"role": "user", "content": {"type": "text", "text": "q"}},
        {"role": "assistant", "content": {"type": "text", "text": "a"}},
        {"role": "user", "content": {"type": "resource_link", "uri": "b://1", "name": "Book"}},
        {"role": "assistant", "content": {"type": "text", "text": "ok"}},
    ]


async def test_completion():
    async def langs(value: str, context: dict) -> list:
        return [lang for lang in ("python", "perl", "go") if lang.startswith(value)] + [context.get("code", "")]

    prompt = Prompt.from_function(review, complete={"language": langs, "code": ["print()", "pass"]})
    assert await prompt.get_completions(Context(ctx()), "language", "p", {"code": "c"}) == ["python", "perl", "c"]
    assert await prompt.get_completions(Context(ctx()), "code", "pa", {}) == ["pass"]
    assert await prompt.get_completions(Context(ctx()), "other", "", {}) == []
