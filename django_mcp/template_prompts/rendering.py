"""
From a rendered prompt template to ``PromptMessage`` objects (MCP spec 2025-11-25, server/prompts).

A template renders to one string. The tags of ``{% load mcp_prompts %}`` (``message``, ``embed``,
``image``) cannot return content blocks through a string, so each records what it stands for in
the render's :class:`PromptRender` and leaves a *marker* in the text: a NUL byte, a random token
made for this render, the item's index and another NUL. Splitting the output on markers gives the
messages in template order. The token is drawn after the arguments are fixed, so no argument
value can forge a marker: whatever a value contains stays text.

Embedded resources are read after rendering, on the event loop, through the site's
``read_resource`` (the requesting user's permissions apply), so the render itself stays a plain
sync call that may use the ORM.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from django.template import Context as TemplateContext

from ..protocol.errors import InvalidParams, McpError


ROLES = ("user", "assistant")
_ATTRIBUTE = "mcp_prompt_render"


class PromptRender:
    """What one render collects beside its text: message boundaries, content blocks, embeds."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self.items: list[tuple[Any, ...]] = []
        self.pattern = re.compile(f"\x00{self.token}:(\\d+)\x00")

    def marker(self, *item: Any) -> str:
        """Record ``item`` and return the marker that stands for it in the text."""
        self.items.append(item)
        return f"\x00{self.token}:{len(self.items) - 1}\x00"


def current_render(context: TemplateContext) -> PromptRender | None:
    """The render a tag is part of; None when the template is rendered outside a prompt."""
    return getattr(context, _ATTRIBUTE, None)


def render(template: Any, data: dict[str, Any]) -> tuple[str, PromptRender]:
    """
    Render a compiled template (``django.template.base.Template``) with ``data``. Autoescaping
    is off: prompt text is not HTML, and ``&lt;`` would reach the model as four characters.
    """
    collector = PromptRender()
    context = TemplateContext(data, autoescape=False)
    # An attribute, not a variable: it survives {% include … only %}, which copies the Context
    # object but starts its variables afresh, and no template can read or shadow it.
    setattr(context, _ATTRIBUTE, collector)
    return template.render(context), collector


def split(text: str, collector: PromptRender) -> list[tuple[str, str, Any]]:
    """
    ``(kind, role, value)`` entries in template order: ``("text", role, str)``,
    ``("block", role, content)`` and ``("embed", role, (uri, optional))``. Text outside any
    ``{% message %}`` is the user's; whitespace-only text is dropped and the rest is stripped.
    """
    roles = ["user"]
    entries: list[tuple[str, str, Any]] = []
    pieces = collector.pattern.split(text)
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            if piece.strip():
                entries.append(("text", roles[-1], piece.strip()))
            continue
        item = collector.items[int(piece)]
        if item[0] == "start":
            roles.append(item[1])
        elif item[0] == "end":
            roles.pop()
        elif item[0] == "block":
            entries.append(("block", roles[-1], item[1]))
        elif item[0] == "embed":
            entries.append(("embed", roles[-1], item[1:]))
    return entries


ReadResource = Callable[[str], Awaitable[list[dict[str, Any]]]]


async def to_messages(entries: list[tuple[str, str, Any]], read: ReadResource) -> list[dict[str, Any]]:
    """
    The ``PromptMessage`` dicts; embeds are read now, one message per resource contents item.

    A resource the request may not read is reported exactly like one that does not exist (the
    site answers both the same way), as ``-32602`` naming the URI, so a prompt never leaks what it
    embeds and the user learns why the prompt failed; ``{% embed … optional %}`` leaves it out.
    """
    messages = []
    for kind, role, value in entries:
        if kind == "text":
            messages.append({"role": role, "content": {"type": "text", "text": value}})
        elif kind == "block":
            messages.append({"role": role, "content": value})
        else:
            uri, optional = value
            try:
                contents = await read(uri)
            except McpError as error:
                if optional:
                    continue
                raise InvalidParams(f"Unknown resource: {uri}", {"uri": uri}) from error
            messages.extend({"role": role, "content": {"type": "resource", "resource": item}} for item in contents)
    return messages
