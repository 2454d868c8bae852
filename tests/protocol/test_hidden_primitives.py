"""
What a request may not use is answered exactly like what does not exist (issue 11), on the paths
that answer something other than a call: completions of prompts and resource templates
(MCP spec 2026-07-28, server/utilities/completion), the mirrored ``Mcp-Param-*`` headers of a
2026-07-28 ``tools/call`` (basic/transports/streamable-http), and the acknowledged filter of
``subscriptions/listen`` (basic/patterns/subscriptions).
"""

import json
from typing import Annotated, Any

import pytest
from django.contrib.auth.models import AnonymousUser
from pydantic import Field

from django_mcp.permissions import IsAuthenticated
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SignedStateCodec
from django_mcp.sites import McpSite
from django_mcp.transports.http import McpHttpConsumer

from tests.fuzz.asgi_client import Exchange, request


MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
BASE = [(b"host", b"testserver"), (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream")]
REGION = Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]


def hiding_site() -> McpSite:
    """Each kind twice, once open and once for authenticated users only (the tests ask anonymously)."""
    site = McpSite("hiding")
    for name, permission in (("open", None), ("secret", IsAuthenticated)):
        site.prompt(name=f"{name}_prompt", permission=permission, complete={"topic": ["django"]})(
            lambda topic="": "ok")
        site.resource(f"perm://{name}/{{id}}", name=f"{name}_template", permission=permission,
                      complete={"id": ["1", "2"]})(lambda id: "ok")  # noqa: A002 - a template variable
        site.resource(f"perm://{name}", name=f"{name}_fixed", permission=permission)(lambda: "ok")

        def region_tool(region: REGION) -> str:
            return region

        site.tool(name=f"{name}_region", permission=permission)(region_tool)
    return site


async def ask(dispatcher: Dispatcher, era: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if era == "modern":
        params = {**params, "_meta": META}
    ctx = RequestContext(era=Era.MODERN if era == "modern" else Era.LEGACY,
                         protocol_version=MODERN if era == "modern" else "2025-11-25", user=AnonymousUser())
    return await dispatcher.handle_request({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, ctx)


def renamed(answer: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return json.loads(json.dumps(answer).replace(old, new))


@pytest.mark.django_db
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(("ref", "argument", "visible", "hidden", "unknown"), [
    ("ref/prompt", "topic", "open_prompt", "secret_prompt", "nope_prompt"),
    ("ref/resource", "id", "perm://open/{id}", "perm://secret/{id}", "perm://nope/{id}"),
    ("ref/resource", "id", "perm://open", "perm://secret", "perm://nope"),
    ("ref/resource", "id", "perm://open/1", "perm://secret/1", "perm://nope/1"),
])
async def test_completing_something_hidden_answers_like_something_unknown(era, ref, argument, visible, hidden,
                                                                          unknown):
    dispatcher = Dispatcher(hiding_site(), state_codec=SignedStateCodec())
    key = "name" if ref == "ref/prompt" else "uri"

    def params(target: str) -> dict[str, Any]:
        return {"ref": {"type": ref, key: target}, "argument": {"name": argument, "value": ""}}

    unknown_answer = await ask(dispatcher, era, "completion/complete", params(unknown))
    assert unknown_answer["error"]["code"] == -32602
    hidden_answer = await ask(dispatcher, era, "completion/complete", params(hidden))
    assert hidden_answer == renamed(unknown_answer, unknown, hidden)
    # The same reference is answered when it may be seen: the comparison above can fail.
    visible_answer = await ask(dispatcher, era, "completion/complete", params(visible))
    assert ("result" in visible_answer) == (visible != "perm://open/1"), visible_answer


def modern_call(name: str, region: str, header: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    headers = [*BASE, (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"),
               (b"mcp-name", name.encode()), (b"mcp-param-region", header.encode())]
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": name, "arguments": {"region": region}, "_meta": META}}
    return headers, json.dumps(body).encode()


@pytest.mark.django_db(transaction=True)
async def test_a_hidden_tools_param_headers_are_not_checked_before_its_permission():
    app = McpHttpConsumer.as_asgi(site=hiding_site())
    answers = {}
    for name in ("open_region", "secret_region", "nope_region"):
        headers, body = modern_call(name, "eu", "us")  # the header disagrees with the argument
        answer = await request(app, "POST", "/mcp", headers, body)
        answers[name] = (answer.status, json.loads(answer.body))
    # The tool that may be called has its header checked (-32020, MCP spec 2026-07-28,
    # basic/transports/streamable-http); the hidden one is an unknown tool, like one that is.
    assert answers["open_region"][0] == 400 and answers["open_region"][1]["error"]["code"] == -32020
    assert answers["nope_region"][0] == 400 and answers["nope_region"][1]["error"]["code"] == -32602
    assert answers["secret_region"] == (400, renamed(answers["nope_region"][1], "nope_region", "secret_region"))
    headers, body = modern_call("open_region", "eu", "eu")
    answer = await request(app, "POST", "/mcp", headers, body)
    assert json.loads(answer.body)["result"]["content"][0]["text"] == "eu"


@pytest.mark.django_db(transaction=True)
async def test_listen_acknowledges_only_resources_that_exist_and_may_be_read():
    wanted = ["perm://open", "perm://secret", "perm://nope", "perm://open/1", "perm://secret/1",
              "perm://open/..%2Fx", "perm://open/%00"]
    body = {"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": wanted}, "_meta": META}}
    headers = [*BASE, (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"subscriptions/listen")]
    exchange = Exchange(McpHttpConsumer.as_asgi(site=hiding_site()), "POST", "/mcp", headers,
                        json.dumps(body).encode())
    try:
        answer = await exchange.response(hold=True)
    finally:
        await exchange.close()
    assert answer.status == 200 and answer.held
    data = [line[5:].strip() for line in answer.body.decode().splitlines() if line.startswith("data:")]
    ack = json.loads(data[0])
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["perm://open", "perm://open/1"]}
