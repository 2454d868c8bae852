"""
McpClient in process gives what a real client gets over HTTP: the official SDK client (2.3.0)
against a live daphne server of the same project, and McpClient against its ASGI application,
each listing and calling the whole conformance fixture set (tests/conformance_app) with the same
arguments and the same answers to the server's questions, in both eras. Every listing and every
result must be the same.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError

from django_mcp.test import ErrorResponse, McpClient
from tests.live import LiveServer, fresh_sqlite_env


pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.live]

TIMEOUT = 60
# The SDK's mode and McpClient's revision for each era.
ERAS = {"2026-07-28": "2026-07-28", "legacy": "2025-11-25"}
CONFORMANCE_RESOURCES = ("test://static-text", "test://static-binary", "test://template/7/data",
                         "test://watched-resource", "test://example-resource")
# Not compared: they announce list changes to every client of the server (which the other tests
# of this worker hear), or wait for seconds on purpose.
SKIPPED_TOOLS = {"test_trigger_tool_change", "test_trigger_prompt_change", "slow_compute", "wait_forever",
                 "sleep_sync"}


def conformance_tool(name: str) -> bool:
    return (name.startswith("test_") or name in {"json_schema_2020_12_tool", "greet", "failing_job",
                                                 "protocol_error_job", "confirm_delete", "multi_input"})


def value_for(schema: dict[str, Any]) -> Any:
    """A valid value for a (simple) JSON Schema: its default, first enum value, or a plain value of its type."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("oneOf"):
        return schema["oneOf"][0].get("const", "x")
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        return [value_for(items.get("anyOf", [items])[0] if "anyOf" in items else items)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "object":
        return {key: value_for(sub) for key, sub in (schema.get("properties") or {}).items()
                if key in schema.get("required", [])}
    if schema.get("format") == "email":
        return "ada@example.com"
    return "x"


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required", []))
    return {key: value_for(sub) for key, sub in (schema.get("properties") or {}).items() if key in required}


def elicited(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("mode") == "url":
        return {"action": "accept"}
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    return {"action": "accept", "content": {key: value_for(sub) for key, sub in properties.items()}}


def sampled(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "model": "test-model", "stopReason": "endTurn",
            "content": {"type": "text", "text": "Paris"}}


ROOTS = [{"uri": "file:///srv/project", "name": "project"}]


def dumped(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """What a client makes of a result: its content, without the server's per-response metadata."""
    kept = {key: value for key, value in result.items() if key not in ("_meta", "resultType")}
    kept.setdefault("isError", False) if "content" in kept else None
    return kept


async def over_http(url: str, mode: str) -> dict[str, Any]:
    """Everything the SDK client sees of the conformance fixtures over HTTP."""

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult.model_validate(elicited(dumped(params)))

    async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult.model_validate(sampled(dumped(params)))

    async def on_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": ROOTS})

    seen: dict[str, Any] = {}
    async with asyncio.timeout(TIMEOUT):
        async with Client(url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample,
                          list_roots_callback=on_roots) as client:
            tools = [dumped(tool) for tool in (await client.list_tools()).tools]
            seen["tools"] = tools
            seen["resources"] = [dumped(item) for item in (await client.list_resources()).resources]
            seen["templates"] = [dumped(item) for item in (await client.list_resource_templates()).resource_templates]
            seen["prompts"] = [dumped(item) for item in (await client.list_prompts()).prompts]

            async def outcome(call: Any) -> dict[str, Any]:
                try:
                    return comparable(dumped(await call))
                except MCPError as error:
                    return {"error": error.code}

            for tool in tools:
                if conformance_tool(tool["name"]) and tool["name"] not in SKIPPED_TOOLS:
                    seen[f"tool {tool['name']}"] = await outcome(client.call_tool(tool["name"], arguments_for(tool)))
            for uri in CONFORMANCE_RESOURCES:
                seen[f"resource {uri}"] = await outcome(client.read_resource(uri))
            for prompt in seen["prompts"]:
                got = client.get_prompt(prompt["name"], prompt_arguments(prompt))
                seen[f"prompt {prompt['name']}"] = await outcome(got)
    return seen


def prompt_arguments(prompt: dict[str, Any]) -> dict[str, str]:
    return {argument["name"]: "x" for argument in prompt.get("arguments") or [] if argument.get("required")}


async def in_process(version: str) -> dict[str, Any]:
    """The same, through McpClient and the project's ASGI application."""
    client = McpClient(version, elicitation=elicited, sampling=sampled, roots=ROOTS, timeout=TIMEOUT)
    seen: dict[str, Any] = {"tools": list(await client.alist_tools()),
                            "resources": list(await client.alist_resources()),
                            "templates": list(await client.alist_resource_templates()),
                            "prompts": list(await client.alist_prompts())}

    async def outcome(call: Any) -> dict[str, Any]:
        try:
            return comparable((await call).raw)
        except ErrorResponse as error:
            return {"error": error.code}

    for tool in seen["tools"]:
        if conformance_tool(tool["name"]) and tool["name"] not in SKIPPED_TOOLS:
            seen[f"tool {tool['name']}"] = await outcome(client.acall_tool(tool["name"], arguments_for(tool)))
    for uri in CONFORMANCE_RESOURCES:
        seen[f"resource {uri}"] = await outcome(client.aread_resource(uri))
    for prompt in seen["prompts"]:
        seen[f"prompt {prompt['name']}"] = await outcome(client.aget_prompt(prompt["name"], prompt_arguments(prompt)))
    await client.aclose()
    return seen


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """
    daphne on a migrated database of its own: the listings are compared whole, so rows other live
    tests leave in the shared one (prompts in the database) must not reach it.
    """
    with LiveServer(env=fresh_sqlite_env(tmp_path_factory.mktemp("same-as-http")), name="same-as-http") as server:
        yield server


@pytest.mark.parametrize("era", ERAS)
async def test_mcp_client_sees_what_the_sdk_client_sees_over_http(era: str, fresh_server: Any) -> None:
    remote = await over_http(fresh_server.mcp_url, era)
    local = await in_process(ERAS[era])
    if era == "legacy":
        # The SDK's result models fill in 2026-07-28's caching defaults, which a legacy server never sends.
        remote = {key: without_cache_defaults(value) for key, value in remote.items()}
    called = [key for key in remote if key.startswith("tool ")]
    assert len(called) >= 30 and "tool test_reconnection" in called and "tool test_sampling" in called
    assert set(local) == set(remote)
    different = {key: (local[key], remote[key]) for key in remote if normalized(local[key]) != normalized(remote[key])}
    assert not different, different


def without_cache_defaults(value: Any) -> Any:
    if isinstance(value, dict) and value.get("ttlMs") == 0 and value.get("cacheScope") == "private":
        return {key: item for key, item in value.items() if key not in ("ttlMs", "cacheScope")}
    return value


def normalized(value: Any) -> Any:
    """Listings compared as sets of items (both follow every page; the order is the server's either way)."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return sorted(json.dumps(item, sort_keys=True) for item in value)
    return value

