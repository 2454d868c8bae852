"""
Conformance prompts, written as Django templates.

Scenarios: ``prompts-list`` (every prompt has a description), ``prompts-get-simple``,
``prompts-get-with-args``, ``prompts-get-embedded-resource``, ``prompts-get-with-image``,
``completion-complete`` (completion of ``arg1``), and at 2026-07-28
``input-required-result-non-tool-request`` (a prompt that needs an elicitation answer).

The first four are template files under ``templates/mcp/prompts/`` of this app, discovered
through the template loaders and named by their file names: their header blocks give the
descriptions and arguments, ``{% embed %}`` reads ``resourceUri`` through the site and ``{% image %}``
takes a PNG from this app's static files. The elicitation prompt needs Python before it renders,
so it is a :class:`TemplatePrompt` class whose ``get_context_data`` asks the user.
"""

from typing import Any

from django_mcp import Context, register
from django_mcp.template_prompts.templates import TemplatePrompt


# Suggestions for test_prompt_with_arguments' arg1 (the suite completes "test" and "par"); its
# header names complete_arg1 with "complete: tests.conformance_app.prompts.complete_arg1".
ARG1_SUGGESTIONS = ("paris", "park", "party", "test", "testValue1", "testValue2")


def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
    """The suggestions that start with what the user typed so far (case-insensitive)."""
    prefix = value.lower()
    return [suggestion for suggestion in ARG1_SUGGESTIONS if suggestion.lower().startswith(prefix)]


@register()
class InputRequiredResultPrompt(TemplatePrompt):
    """A prompt that first asks the user, by elicitation, what context to use."""

    name = "test_input_required_result_prompt"
    template_name = "conformance/input_required_prompt.txt"

    async def get_context_data(self, ctx: Context, **arguments: Any) -> dict[str, Any]:
        answer = await ctx.elicit(
            "What context should the prompt use?",
            {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
            key="user_context",
        )
        given = answer.content.get("context") if answer.action == "accept" and answer.content else None
        return {"given": given, "action": answer.action}
