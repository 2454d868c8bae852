"""Primitives used by django_mcp's own tests."""

import asyncio

from django.apps import apps
from pydantic import BaseModel

from django_mcp import Context, prompt, resource, tool

if apps.is_installed("django_mcp.tasks"):  # task_support is the tasks app's option
    from . import durable_task_tools  # noqa: F401


class Sum(BaseModel):
    """A structured result."""

    total: int
    count: int


@tool(annotations={"readOnlyHint": True})
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return " ".join([text] * times)


@tool(annotations={"readOnlyHint": True})
async def echo_async(text: str, times: int = 1) -> str:
    """Repeat the text (async: runs on the event loop)."""
    return " ".join([text] * times)


@tool()
async def add_numbers(numbers: list[int]) -> Sum:
    """Add numbers and return a structured result."""
    return Sum(total=sum(numbers), count=len(numbers))


@tool()
async def slow_steps(steps: int, ctx: Context, delay: float = 0.05) -> str:
    """Report progress for each step."""
    for step in range(1, steps + 1):
        await asyncio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done {steps} steps"


@tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name through elicitation."""
    answer = await ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                                     "required": ["name"]}, key="name")
    if answer.action != "accept":
        return "no name given"
    return f"Hello, {answer.content['name']}!"


@tool()
async def wait_forever(ctx: Context) -> str:
    """Sleep until cancelled."""
    await asyncio.sleep(3600)
    return "woke up"


@tool()
def sleep_sync(seconds: float) -> str:
    """Block a thread for a while (a slow sync tool: a report, an external API, a big query)."""
    import time

    time.sleep(min(seconds, 10))
    return f"slept {seconds}"


@resource("memo://greeting", name="greeting", description="A greeting.", mime_type="text/plain")
def greeting() -> str:
    return "Hello from the test app."


@resource("memo://items/{item_id}", name="item", description="One item by id.", mime_type="application/json",
          complete={"item_id": ["1", "2", "10", "20"]})
def item(item_id: str) -> dict:
    return {"id": item_id, "name": f"Item {item_id}"}


@prompt(description="Summarize a topic.", complete={"style": ["short", "detailed"]})
def summarize(topic: str, style: str = "short") -> str:
    return f"Write a {style} summary of {topic}."


@tool(annotations={"readOnlyHint": True})
async def whoami(ctx: Context) -> str:
    """Who the call runs as, and the scopes of its credential: "alice mcp:read", or "anonymous"."""
    who = ctx.user.username if ctx.user.is_authenticated else "anonymous"
    return " ".join([who, *sorted(ctx.scopes or ())])
