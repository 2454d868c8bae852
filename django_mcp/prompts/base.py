"""The :class:`Prompt` options class, and the ``user()`` / ``assistant()`` message builders."""

import inspect
from typing import Any

import mcp_types
from django.core.exceptions import ImproperlyConfigured

from .. import content
from ..completions import Completer, run_completer
from ..context import Context
from ..primitives import Primitive, definition_without_none, parameters_of, takes_any_keyword
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
    A prompt the user picks (MCP spec 2025-11-25, server/prompts). ``render`` returns text (one
    user message), a message, or a list of messages and texts; its parameters are the prompt's
    arguments (strings on the wire; a default makes one optional)::

        class Recommend(Prompt):
            argument_descriptions = {"author": "Somebody you enjoy"}
            complete = {"author": author_names}

            def render(self, author: str, mood: str = "curious") -> str:
                "Ask for a recommendation."
                return f"I like {author} and feel {mood}."

    Set ``arguments`` to declare them by hand (a list of ``{"name", "description", "required"}``);
    ``render`` then receives the arguments given.
    """

    kind = "prompt"
    work_method = "render"
    # template_name and form_class make @prompt() build a TemplatePrompt (see from_function).
    options = Primitive.options | {"arguments", "argument_descriptions", "complete"}

    arguments: list[dict[str, Any]] | None = None
    argument_descriptions: dict[str, str] | None = None
    complete: dict[str, Completer] | None = None

    def __init__(self) -> None:
        super().__init__()
        if self.arguments is None:
            self.arguments = self.arguments_from_signature()
        declared = {argument["name"] for argument in self.arguments}
        strangers = sorted((set(self.argument_descriptions or {}) | set(self.complete or {})) - declared)
        if strangers:
            raise ImproperlyConfigured(f"{self.origin()}: argument_descriptions or complete name "
                                       f"{', '.join(strangers)}, which are not arguments of prompt {self.name!r}.")

    @classmethod
    def check_options(cls, options: dict[str, Any], where: str) -> None:
        if cls is Prompt and {"template_name", "form_class"} & set(options):
            raise TypeError(f"{where}: template_name and form_class are options of "
                            "django_mcp.template_prompts.template_prompt(); use that decorator (with "
                            '"django_mcp.template_prompts" in INSTALLED_APPS).')
        super().check_options(options, where)

    def arguments_from_signature(self) -> list[dict[str, Any]]:
        descriptions = self.argument_descriptions or {}
        arguments = []
        for parameter in parameters_of(self.callable.fn, self.callable.context_param):
            argument: dict[str, Any] = {"name": parameter.name,
                                        "required": parameter.default is inspect.Parameter.empty}
            if parameter.name in descriptions:
                argument["description"] = descriptions[parameter.name]
            arguments.append(argument)
        return arguments

    def get_arguments(self, ctx: Context) -> list[dict[str, Any]]:
        return self.arguments or []

    def get_definition_fields(self, ctx: Context) -> dict[str, Any]:
        """The ``Prompt`` object of ``prompts/list``."""
        return definition_without_none(name=self.name, arguments=self.get_arguments(ctx) or None)

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        """
        The ``GetPromptResult``; a missing required argument is ``-32602`` (MCP spec 2025-11-25,
        server/prompts, "Error Handling").
        """
        declared = self.arguments or []
        missing = [a["name"] for a in declared if a.get("required") and a["name"] not in arguments]
        if missing:
            raise InvalidParams(f"Missing required arguments for prompt {self.name}: {', '.join(missing)}")
        known = {argument["name"] for argument in declared}
        takes_all = takes_any_keyword(self.callable.fn)
        kwargs = {key: value for key, value in arguments.items() if key in known or takes_all}
        value = await self.callable(kwargs, ctx)
        result: dict[str, Any] = {"messages": to_messages(value)}
        if self.description:
            result["description"] = self.description
        return result

    async def get_completions(self, ctx: Context, argument: str, value: str, context: dict[str, str]) -> list[str]:
        """Suggestions for one argument (``completion/complete``); override for your own."""
        completer = (self.complete or {}).get(argument)
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
