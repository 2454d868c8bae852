"""
Conformance tools, grouped by the suite release and scenario family that calls them.

Every tool has a description (``tools-list`` fails otherwise). Tools that ask the client for input
(elicitation, sampling, roots) do it through :class:`~django_mcp.Context`, so they work in both
eras: a legacy session gets real server->client requests, a 2026-07-28 request gets an
``InputRequiredResult`` and the tool runs again from the top on the retry. They therefore ask
before doing anything else, always in the same order and under fixed keys.
"""

import asyncio
import json
from typing import Annotated, Any

import mcp_types
from pydantic import Field

from django_mcp import Context, ToolError, content, tool
from django_mcp.notifications import anotify_list_changed

from .resources import PNG_BYTES, WAV_BYTES


# --- Helpers -------------------------------------------------------------------------------

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def accepted(answer: mcp_types.ElicitResult, field: str) -> Any:
    """The value the user gave for ``field``, or None if they declined, cancelled or left it out."""
    if answer.action != "accept" or not answer.content:
        return None
    return answer.content.get(field)


def describe_elicitation(answer: mcp_types.ElicitResult) -> str:
    return f"action={answer.action}, content={json.dumps(answer.content or {}, sort_keys=True)}"


def sampled_text(result: mcp_types.CreateMessageResult) -> str:
    """The text of a sampling result (its content is one block, or a list of them since 2025-11-25)."""
    blocks = result.content if isinstance(result.content, list) else [result.content]
    texts = [block.text for block in blocks if getattr(block, "type", None) == "text"]
    return " ".join(texts) if texts else "[" + ", ".join(getattr(b, "type", "?") for b in blocks) + " content]"


def root_uris(result: mcp_types.ListRootsResult) -> str:
    return ", ".join(str(root.uri) for root in result.roots) or "no roots"


def elicitation_request(message: str, schema: dict) -> dict:
    """An ``elicitation/create`` entry for :meth:`Context.request_input` (form mode, the default)."""
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def sampling_request(text: str, max_tokens: int) -> dict:
    """A ``sampling/createMessage`` entry for :meth:`Context.request_input`: one user text message."""
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return {"method": "sampling/createMessage", "params": {"messages": [message], "maxTokens": max_tokens}}


ROOTS_REQUEST = {"method": "roots/list", "params": {}}


# --- 0.1.16: content types ---------------------------------------------------------------------

@tool(name="test_simple_text", description="Returns a simple text response.")
def simple_text() -> str:
    return "This is a simple text response for testing."


@tool(name="test_image_content", description="Returns an image: a 1x1 PNG.")
def image_content() -> mcp_types.ImageContent:
    return content.image(PNG_BYTES, mime_type="image/png")


@tool(name="test_audio_content", description="Returns audio: a short WAV clip of silence.")
def audio_content() -> mcp_types.AudioContent:
    return content.audio(WAV_BYTES, mime_type="audio/wav")


@tool(name="test_embedded_resource", description="Returns an embedded text resource.")
def embedded_resource() -> mcp_types.EmbeddedResource:
    return content.embedded_text("test://embedded-resource", "This is an embedded resource content.",
                                 mime_type="text/plain")


@tool(name="test_multiple_content_types", description="Returns text, an image and an embedded JSON resource.")
def multiple_content_types() -> list[mcp_types.TextContent | mcp_types.ImageContent | mcp_types.EmbeddedResource]:
    return [
        content.text("Multiple content types test:"),
        content.image(PNG_BYTES, mime_type="image/png"),
        content.embedded_text("test://mixed-content-resource", '{"test":"data","value":123}',
                              mime_type="application/json"),
    ]


# --- 0.1.16: logging, progress, errors --------------------------------------------------------

@tool(name="test_tool_with_logging", description="Sends three info log messages about 50 ms apart, then returns.")
async def tool_with_logging(ctx: Context) -> str:
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully."


@tool(name="test_tool_with_progress", description="Reports progress 0, 50 and 100 of 100, about 50 ms apart.")
async def tool_with_progress(ctx: Context) -> str:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)
        await ctx.report_progress(progress, 100)
    return "Tool with progress executed successfully."


@tool(name="test_error_handling", description="Always fails, to test error reporting.")
def error_handling() -> str:
    raise ToolError("This tool intentionally returns an error for testing")


# --- 0.1.16: asking a legacy client (sampling, elicitation, SEP-1034, SEP-1330) --------------

@tool(name="test_sampling", description="Asks the client's LLM to answer the prompt (sampling).")
async def sampling(prompt: str, ctx: Context) -> str:
    result = await ctx.sample(prompt, max_tokens=100, key="llm_response")
    return f"LLM response: {sampled_text(result)}"


@tool(name="test_elicitation", description="Asks the user for a username and an email address (elicitation).")
async def elicitation(message: str, ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema, key="user_info")
    return f"User response: {describe_elicitation(answer)}"


@tool(name="test_elicitation_sep1034_defaults",
      description="Elicitation whose schema gives defaults for string, integer, number, enum and boolean fields.")
async def elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Whether the user is verified", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields.", schema, key="defaults")
    return f"Elicitation completed: {describe_elicitation(answer)}"


def titled(prefix: str) -> list[dict]:
    return [{"const": f"value{i}", "title": f"{ordinal} {prefix}"}
            for i, ordinal in enumerate(("First", "Second", "Third"), start=1)]


@tool(name="test_elicitation_sep1330_enums",
      description="Elicitation with the five enum forms: untitled/titled single and multi select, legacy enumNames.")
async def elicitation_sep1330_enums(ctx: Context) -> str:
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "title": "Untitled single-select", "enum": options},
            "titledSingle": {"type": "string", "title": "Titled single-select", "oneOf": titled("Option")},
            "legacyEnum": {"type": "string", "title": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "title": "Untitled multi-select",
                              "items": {"type": "string", "enum": options}},
            "titledMulti": {"type": "array", "title": "Titled multi-select",
                            "items": {"anyOf": titled("Choice")}},
        },
    }
    answer = await ctx.elicit("Please pick from the enum fields.", schema, key="enums")
    return f"Elicitation completed: {describe_elicitation(answer)}"


# --- JSON Schema 2020-12 (SEP-1613, SEP-2106): a raw inputSchema published verbatim ------------

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "postalAddress",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "preferredContact": {"type": "string", "enum": ["email", "phone"]},
        "email": {"type": "string", "format": "email"},
        "phone": {"type": "string"},
    },
    "required": ["name"],
    # At least one way to reach the person…
    "allOf": [{"anyOf": [{"required": ["email"]}, {"required": ["phone"]}]}],
    # …and the preferred one must be given.
    "if": {"properties": {"preferredContact": {"const": "phone"}}, "required": ["preferredContact"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(name="json_schema_2020_12_tool", input_schema=JSON_SCHEMA_2020_12,
      description="Tool with JSON Schema 2020-12 features: $defs, $ref, $anchor, allOf/anyOf, if/then/else.")
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return f"Received arguments: {json.dumps(arguments, sort_keys=True)}"


# --- Transport --------------------------------------------------------------------------------

@tool(name="test_reconnection",
      description="Closes its SSE stream mid-call; the result arrives after the client reconnects (SEP-1699).")
async def reconnection(ctx: Context) -> str:
    await ctx.close_sse_stream()
    await asyncio.sleep(0.5)
    return "Reconnection test completed successfully"


@tool(name="test_x_mcp_header", description="Echoes the region, which is mirrored in the Mcp-Param-Region header.")
def x_mcp_header(
    region: Annotated[str, Field(description="The region to use", json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    return f"Region: {region}"


# --- 2026-07-28 (alpha): server-stateless diagnostics -----------------------------------------

@tool(name="test_missing_capability",
      description="Needs sampling: a client that did not declare it gets MissingRequiredClientCapability.")
async def missing_capability(ctx: Context) -> str:
    result = await ctx.sample("Reply with a short greeting.", max_tokens=50, key="greeting")
    return f"Sampling response: {sampled_text(result)}"


@tool(name="test_streaming_elicitation",
      description="Asks for a confirmation by elicitation; at 2026-07-28 this must be an InputRequiredResult.")
async def streaming_elicitation(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm to continue.", CONFIRM_SCHEMA, key="confirmation")
    return f"Confirmation received: {describe_elicitation(answer)}"


@tool(name="test_logging_tool",
      description="Logs a debug, an info and a warning message, then returns (logs only reach clients that ask).")
async def logging_tool(ctx: Context) -> str:
    await ctx.debug("Logging tool: starting")
    await ctx.info("Logging tool: working")
    await ctx.warning("Logging tool: finished with a warning for testing")
    return "Logging tool completed; sent 3 log messages."


@tool(name="test_trigger_tool_change", description="Announces that the tool list changed (tools/list_changed).")
async def trigger_tool_change() -> str:
    await anotify_list_changed("tools")
    return "Tool list change notification sent."


@tool(name="test_trigger_prompt_change", description="Announces that the prompt list changed (prompts/list_changed).")
async def trigger_prompt_change() -> str:
    await anotify_list_changed("prompts")
    return "Prompt list change notification sent."


# --- 2026-07-28 (alpha): input-required results (SEP-2322) ------------------------------------

@tool(name="test_input_required_result_elicitation", description="Asks the user's name by elicitation, then greets.")
async def input_required_result_elicitation(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    name = accepted(answer, "name")
    return f"Hello, {name}!" if name else f"No name was given (action: {answer.action})."


@tool(name="test_input_required_result_sampling", description="Asks the client's LLM for the capital of France.")
async def input_required_result_sampling(ctx: Context) -> str:
    result = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model answered: {sampled_text(result)}"


@tool(name="test_input_required_result_list_roots", description="Asks the client for its roots and lists them.")
async def input_required_result_list_roots(ctx: Context) -> str:
    result = await ctx.list_roots(key="client_roots")
    return f"Client roots: {root_uris(result)}"


@tool(name="test_input_required_result_request_state",
      description="Asks for a confirmation; completes with 'state-ok' once the signed requestState comes back.")
async def input_required_result_request_state(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return f"state-ok: confirmed={accepted(answer, 'ok') is True} (action: {answer.action})"


@tool(name="test_input_required_result_multiple_inputs",
      description="Asks for a name (elicitation), a greeting (sampling) and the roots, all at once.")
async def input_required_result_multiple_inputs(ctx: Context) -> str:
    answers = await ctx.request_input({
        "user_name": elicitation_request("What is your name?", NAME_SCHEMA),
        "greeting": sampling_request("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    })
    name = accepted(answers["user_name"], "name") or "stranger"
    greeting = sampled_text(answers["greeting"])
    roots = root_uris(answers["client_roots"])
    return f"Hello, {name}! The model's greeting: \"{greeting}\". Client roots: {roots}."


@tool(name="test_input_required_result_multi_round",
      description="Asks for a name, then in a second round for a favourite colour.")
async def input_required_result_multi_round(ctx: Context) -> str:
    first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    colour_schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    second = await ctx.elicit("Step 2: What is your favorite color?", colour_schema, key="step2")
    name = accepted(first, "name") or "stranger"
    colour = accepted(second, "color") or "unknown"
    return f"Hello, {name}! Your favourite colour is {colour}."


@tool(name="test_input_required_result_tampered_state",
      description="Asks for a confirmation; a retry whose requestState was altered is rejected by the server.")
async def input_required_result_tampered_state(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm to proceed", CONFIRM_SCHEMA, key="confirm")
    return f"Confirmed with intact state: ok={accepted(answer, 'ok') is True} (action: {answer.action})"


@tool(name="test_input_required_result_capabilities",
      description="Asks only for the kinds of input (elicitation, sampling, roots) the client declared.")
async def input_required_result_capabilities(ctx: Context) -> str:
    requests = {}
    if ctx.has_capability("elicitation"):
        requests["user_name"] = elicitation_request("What is your name?", NAME_SCHEMA)
    if ctx.has_capability("sampling"):
        requests["capital_question"] = sampling_request("What is the capital of France?", 100)
    if ctx.has_capability("roots"):
        requests["client_roots"] = ROOTS_REQUEST
    if not requests:
        return "The client declared none of elicitation, sampling or roots; nothing was asked."
    answers = await ctx.request_input(requests)
    parts = []
    if "user_name" in answers:
        parts.append(f"name={accepted(answers['user_name'], 'name')}")
    if "capital_question" in answers:
        parts.append(f"sampling={sampled_text(answers['capital_question'])}")
    if "client_roots" in answers:
        parts.append(f"roots={root_uris(answers['client_roots'])}")
    return f"Asked for {', '.join(requests)}; got " + "; ".join(parts)
