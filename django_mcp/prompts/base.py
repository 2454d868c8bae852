"""Function-backed prompts, and the ``user()`` / ``assistant()`` message builders."""

import inspect
from collections.abc import Callable
from typing import Any

import mcp_types

from .. import content
from ..completions import Completer, run_completer
from ..primitives import Permission, Primitive
from ..protocol.context import RequestContext
from ..protocol.errors import InvalidParams


def _message(role: str, value: Any) -> dict[str, Any]:
    block = {"type": "text", "text": value} if isinstance(value, str) else content.dump(value)
    return {"role": role, "content": block}


def user(value: Any) -> dict[str, Any]:
    """A user message; ``value`` is text or a content block."""
    return _message("user", value)


def assistant(value: Any) -> dict[str, Any]:
    """An assistant message; ``value`` is text or a content block."""
    return _message("assistant", value)


class Prompt(Primitive):
    """
    A prompt built from a function: its parameters are the prompt's arguments (all strings on the
    wire; a default makes one optional), its docstring the description. The function returns text
    (one user message), a message, or a list of messages and texts.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, title: str | None = None,
                 description: str | None = None, icons: list[dict[str, Any]] | None = None,
                 meta: dict[str, Any] | None = None, permission: Permission = None,
                 complete: dict[str, Completer] | None = None,
                 argument_descriptions: dict[str, str] | None = None) -> None:
        super().__init__(fn, name=name, title=title, description=description, icons=icons, meta=meta,
                         permission=permission)
        self.completers = dict(complete or {})
        descriptions = argument_descriptions or {}
        self.arguments: list[dict[str, Any]] = []
        for name, parameter in inspect.signature(fn).parameters.items():
            if name == self.callable.context_param or parameter.kind in (parameter.VAR_POSITIONAL,
                                                                         parameter.VAR_KEYWORD):
                continue
            argument: dict[str, Any] = {"name": name, "required": parameter.default is inspect.Parameter.empty}
            if name in descriptions:
                argument["description"] = descriptions[name]
            self.arguments.append(argument)

    def definition(self) -> dict[str, Any]:
        """The ``Prompt`` object of ``prompts/list``."""
        return self.described({"name": self.name}, arguments=self.arguments or None)

    async def render(self, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        """The ``GetPromptResult``; missing required arguments are ``-32602`` (digest §4.3)."""
        known = {argument["name"] for argument in self.arguments}
        missing = [a["name"] for a in self.arguments if a["required"] and a["name"] not in arguments]
        if missing:
            raise InvalidParams(f"Missing required arguments for prompt {self.name}: {', '.join(missing)}")
        kwargs = {key: value for key, value in arguments.items() if key in known}
        value = await self.callable(kwargs, ctx)
        result: dict[str, Any] = {"messages": to_messages(value)}
        if self.description:
            result["description"] = self.description
        return result

    async def complete(self, argument: str, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        """Suggestions for one argument."""
        completer = self.completers.get(argument)
        return await run_completer(completer, value, context) if completer else []


def to_messages(value: Any) -> list[dict[str, Any]]:
    """Normalize a prompt function's return value into ``PromptMessage`` dicts."""
    if isinstance(value, (str, dict)) or content.is_content(value) or isinstance(value, mcp_types.PromptMessage):
        value = [value]
    messages = []
    for item in value:
        if isinstance(item, mcp_types.PromptMessage):
            messages.append(item.model_dump(by_alias=True, mode="json", exclude_none=True))
        elif isinstance(item, dict) and "role" in item:
            messages.append(item)
        else:
            messages.append(user(item))
    return messages
