"""
Conformance prompts.

Scenarios: ``prompts-list`` (every prompt has a description), ``prompts-get-simple``,
``prompts-get-with-args``, ``prompts-get-embedded-resource``, ``prompts-get-with-image``,
``completion-complete`` (completion of ``arg1``), and at 2026-07-28
``input-required-result-non-tool-request`` (a prompt that needs an elicitation answer).
"""

from django_mcp import Context, content, prompt
from django_mcp.prompts import assistant, user

from .resources import EXAMPLE_RESOURCE_TEXT, PNG_BYTES


# Suggestions for test_prompt_with_arguments' arg1 (the suite completes "test" and "par").
ARG1_SUGGESTIONS = ("paris", "park", "party", "test", "testValue1", "testValue2")


def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
    """The suggestions that start with what the user typed so far (case-insensitive)."""
    prefix = value.lower()
    return [suggestion for suggestion in ARG1_SUGGESTIONS if suggestion.lower().startswith(prefix)]


@prompt(name="test_simple_prompt", description="A simple prompt without arguments.")
def simple_prompt() -> str:
    return "This is a simple prompt for testing."


@prompt(name="test_prompt_with_arguments", complete={"arg1": complete_arg1},
        description="A prompt with two required arguments, arg1 (with completion) and arg2.")
def prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt(name="test_prompt_with_embedded_resource",
        description="A prompt that embeds the resource at resourceUri, then asks to process it.")
def prompt_with_embedded_resource(resourceUri: str) -> list:  # noqa: N803 - the suite's argument name
    return [
        user(content.embedded_text(resourceUri, EXAMPLE_RESOURCE_TEXT, mime_type="text/plain")),
        user("Please process the embedded resource above."),
    ]


@prompt(name="test_prompt_with_image", description="A prompt with a PNG image, then a request to analyse it.")
def prompt_with_image() -> list:
    return [
        user(content.image(PNG_BYTES, mime_type="image/png")),
        user("Please analyze the image above."),
    ]


@prompt(name="test_input_required_result_prompt",
        description="A prompt that first asks the user, by elicitation, what context to use.")
async def input_required_result_prompt(ctx: Context) -> list:
    answer = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    given = answer.content.get("context") if answer.action == "accept" and answer.content else None
    if not given:
        return [user(f"No context was provided (elicitation action: {answer.action}). Answer in general terms.")]
    return [
        user(f"Use the following context for this conversation: {given}"),
        assistant(f"Understood. I will use this context: {given}"),
    ]
