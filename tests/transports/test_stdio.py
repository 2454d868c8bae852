"""
The stdio transport: ``python manage.py mcp_stdio`` as a real subprocess (issue 3, MCP spec 2026-07-28,
basic/transports/stdio; MCP spec 2026-07-28,
basic/versioning#backward-compatibility-with-initialization-based-versions).

- The official ``mcp`` SDK stdio client (``mcp.Client`` + ``StdioServerParameters``) in the modes
  ``legacy`` (``initialize`` at 2025-11-25), ``2026-07-28`` (stateless ``_meta`` envelope) and
  ``auto`` (probes ``server/discover``, settles on 2026-07-28): tools, structured output, progress,
  elicitation and sampling through callbacks, resources, prompts.
- Robustness on raw pipes is in test_stdio_pipes.py; stdout hygiene in a project that prints is in
  test_stdio_noise.py.
- ``--user`` / ``DJANGO_MCP_USER`` and ``--print-config``.

Every server runs on a module-wide, migrated SQLite file (``tests.live.migrate``) with the test
settings, so ``tests/testapp`` and ``tests/conformance_app`` provide the fixtures. Subprocess tests
are marked ``live`` (``-m "not live"`` keeps only the in-process ones).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

from django_mcp import Context
from django_mcp.sites import McpSite
from tests.live import ROOT
from tests.transports.stdio_driver import (StdioProcess, child_env, make_stdio_env, modern, request, serve_lines,
                                           spawner, text_of)


TIMEOUT = 30  # seconds, around every SDK session
MODERN = "2026-07-28"
SERVER_NAME = "django-mcp-tests"
MODES = ["legacy", MODERN, "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", MODERN: MODERN, "auto": MODERN}

live = pytest.mark.live


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """A migrated SQLite file with users ``alice`` (active) and ``carol`` (inactive); see ``make_stdio_env``."""
    return make_stdio_env(tmp_path_factory)


@pytest.fixture
def spawn(stdio_env: Mapping[str, str]) -> Iterator[Callable[..., StdioProcess]]:
    """Start ``mcp_stdio`` children (``spawn(*args, **env_overrides)``); all are killed at the end."""
    yield from spawner(stdio_env)


# --- the official SDK stdio client -------------------------------------------------------------


def sdk_server(stdio_env: Mapping[str, str]) -> StdioServerParameters:
    """How an MCP host starts the server (the SDK adds PATH, HOME… to ``env``)."""
    env = {key: value for key, value in child_env(stdio_env).items()
           if key.startswith(("DJANGO_", "MCP_TEST_", "PYTHON"))}
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_stdio"], cwd=str(ROOT), env=env)


def sdk_texts(result: types.CallToolResult | types.GetPromptResult) -> list[str]:
    if isinstance(result, types.GetPromptResult):
        return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@live
@pytest.mark.parametrize("mode", MODES)
async def test_sdk_stdio_client(stdio_env: Mapping[str, str], mode: str) -> None:
    """
    Issue 3 / MCP spec 2026-07-28, basic/transports/stdio; MCP spec 2026-07-28,
    basic/versioning#backward-compatibility-with-initialization-based-versions: the SDK's stdio client drives
    ``mcp_stdio`` in every mode. ``legacy`` negotiates 2025-11-25 through ``initialize``; ``auto`` discovers 2026-07-28
    with ``server/discover``; a pinned 2026-07-28 client sends the ``_meta`` envelope on each request. Tools
    (server/tools, structured output), progress (basic/patterns/progress), resources (server/resources), prompts
    (server/prompts), and the server→client features (client/elicitation, basic/patterns/mrtr): legacy
    ``elicitation/create`` / ``sampling/createMessage`` are JSON-RPC requests written to stdout (ids ``srv-…``) and
    answered on stdin; at 2026-07-28 the server MUST NOT write requests and returns an ``InputRequiredResult`` whose
    keys (``name``, ``llm_response``) the SDK fulfils through the same callbacks before retrying. (One session per mode:
    each server process costs about a second and a half to start.)
    """
    progress: list[tuple[float, float | None, str | None]] = []
    elicited: list[tuple[Any, types.ElicitRequestParams]] = []
    sampled: list[tuple[Any, types.CreateMessageRequestParams]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append((context.request_id, params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context: ClientRequestContext,
                        params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampled.append((context.request_id, params))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Paris"),
                                         model="test-model", stop_reason="endTurn")

    async with asyncio.timeout(TIMEOUT):
        async with Client(sdk_server(stdio_env), mode=mode, elicitation_callback=on_elicit,
                          sampling_callback=on_sample) as client:
            # Discovery / handshake.
            assert client.protocol_version == EXPECTED_VERSION[mode]
            if mode != MODERN:  # a pinned client never asks: it knows no server info
                assert client.server_info is not None and client.server_info.name == SERVER_NAME
                assert client.server_capabilities.tools is not None

            # Tools.
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"echo", "add_numbers", "slow_steps", "ask_name", "wait_forever"} <= set(tools)
            assert tools["add_numbers"].output_schema is not None
            echo = await client.call_tool("echo", {"text": "hi", "times": 3})
            assert echo.is_error is False and sdk_texts(echo) == ["hi hi hi"]
            added = await client.call_tool("add_numbers", {"numbers": [2, 3, 5]})
            assert added.is_error is False
            assert added.structured_content == {"total": 10, "count": 3}
            assert [json.loads(text) for text in sdk_texts(added)] == [{"total": 10, "count": 3}]

            # Progress.
            slow = await client.call_tool("slow_steps", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
            assert sdk_texts(slow) == ["done 3 steps"]
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            # Elicitation and sampling through the callbacks.
            named = await client.call_tool("ask_name", {})
            assert named.is_error is False and sdk_texts(named) == ["Hello, Ada!"]
            sampling = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
            assert sdk_texts(sampling) == ["LLM response: Paris"]

            # Resources.
            greeting = await client.read_resource("memo://greeting")
            [content] = greeting.contents
            assert isinstance(content, types.TextResourceContents)
            assert (content.uri, content.mime_type, content.text) == (
                "memo://greeting", "text/plain", "Hello from the test app.")
            item = await client.read_resource("memo://items/7")
            [content] = item.contents
            assert isinstance(content, types.TextResourceContents)
            assert json.loads(content.text) == {"id": "7", "name": "Item 7"}

            # Prompts.
            prompt = await client.get_prompt("summarize", {"topic": "cats", "style": "detailed"})
            assert prompt.description == "Summarize a topic."
            assert sdk_texts(prompt) == ["Write a detailed summary of cats."]

    [(elicit_id, elicit_params)] = elicited
    assert elicit_params.message == "What is your name?"
    assert elicit_params.requested_schema["required"] == ["name"]
    [(sample_id, sample_params)] = sampled
    assert sample_params.max_tokens == 100
    assert [message.content.text for message in sample_params.messages] == ["Capital of France?"]
    if mode == "legacy":
        assert str(elicit_id).startswith("srv-") and str(sample_id).startswith("srv-")
    else:
        assert (elicit_id, sample_id) == ("name", "llm_response")


# --- acting as a user ----------------------------------------------------------------------------


@live
def test_unknown_or_inactive_user_fails_to_start(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3: stdio takes credentials from the environment (MCP spec 2026-07-28, basic/authorization), so ``--user`` or
    ``DJANGO_MCP_USER`` name the user. An unknown or inactive user is a startup error: non-zero
    exit, a message on stderr, nothing on stdout (MCP spec 2026-07-28, basic/transports/stdio).
    """
    cases = {
        "--user bob": (spawn("--user", "bob"), "bob"),
        "DJANGO_MCP_USER=bob": (spawn(DJANGO_MCP_USER="bob"), "bob"),
        "--user carol (inactive)": (spawn("--user", "carol"), "carol"),
        "--user beats the environment": (spawn("--user", "bob", DJANGO_MCP_USER="alice"), "bob"),
    }
    for label, (process, name) in cases.items():
        process.close_stdin()
        code = process.wait(30)
        process.drain()
        assert code != 0, (label, process.describe())
        assert name in process.stderr, (label, process.stderr)
        assert process.raw_stdout == [], (label, process.raw_stdout)
    assert "not active" in cases["--user carol (inactive)"][0].stderr


@live
def test_known_user_serves(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3: with an existing, active user — by ``--user alice`` or ``DJANGO_MCP_USER=alice`` —
    the server starts and serves: ``initialize``, ``ping`` and a tool call answer, and the process
    exits 0 when stdin closes.
    """
    for process in (spawn("--user", "alice"), spawn(DJANGO_MCP_USER="alice")):
        process.initialize()
        assert process.call(request(1, "ping"))["result"] == {}
        echo = process.call(request(2, "tools/call", {"name": "echo", "arguments": {"text": "as alice"}}))
        assert text_of(echo["result"]) == ["as alice"]
        process.close_stdin()
        process.drain()
        assert process.wait(10) == 0, process.describe()


@pytest.mark.django_db
async def test_calls_run_as_the_given_user() -> None:
    """
    In-process (``StdioServer`` on byte buffers; no subprocess): every call, legacy or 2026-07-28,
    sees the user the transport was started with — ``ctx.user`` and primitive permissions — and an
    anonymous server does not offer a tool that needs an authenticated user (issue 3: "without it,
    only what anonymous users may see is served").
    """
    from django.contrib.auth.models import AnonymousUser, User

    site = McpSite("stdio-identity")

    @site.tool()
    async def whoami(ctx: Context) -> str:
        """The username the call runs as."""
        return ctx.user.username or "anonymous"

    @site.tool(permission=lambda ctx: ctx.user.is_authenticated)
    async def members_only() -> str:
        """Only for authenticated users."""
        return "welcome"

    lines = [
        request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "x", "version": "1"}}),
        request(2, "tools/call", {"name": "whoami", "arguments": {}}),
        request(3, "tools/list"),
        modern(4, "tools/call", {"name": "whoami", "arguments": {}}),
        modern(5, "tools/call", {"name": "members_only", "arguments": {}}),
    ]

    async def run(user: Any) -> dict[Any, dict[str, Any]]:
        return await serve_lines(site, user, lines)

    alice = await run(User(username="alice"))
    assert text_of(alice[2]["result"]) == ["alice"]
    assert {tool["name"] for tool in alice[3]["result"]["tools"]} == {"whoami", "members_only"}
    assert text_of(alice[4]["result"]) == ["alice"]
    assert text_of(alice[5]["result"]) == ["welcome"]

    anonymous = await run(AnonymousUser())
    assert text_of(anonymous[2]["result"]) == ["anonymous"]
    assert {tool["name"] for tool in anonymous[3]["result"]["tools"]} == {"whoami"}
    assert anonymous[5]["error"]["code"] == -32602


# --- --print-config -----------------------------------------------------------------------------


def print_config(stdio_env: Mapping[str, str], *args: str, command: tuple[str, ...] = ("manage.py", "mcp_stdio"),
                 cwd: Path = ROOT, **overrides: str | None) -> subprocess.Popen[bytes]:
    """``--print-config`` in a child process (by default ``manage.py mcp_stdio`` from the repository root)."""
    return subprocess.Popen([sys.executable, *command, "--print-config", *args], cwd=cwd,
                            env=child_env(stdio_env, **overrides), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def printed_configs(stdio_env: Mapping[str, str],
                    tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``--print-config`` output (parsed) for four invocations, run side by side."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    processes = {
        "plain": print_config(stdio_env),
        "user and name": print_config(stdio_env, "--user", "alice", "--name", "library"),
        "user from env": print_config(stdio_env, DJANGO_MCP_USER="alice"),
        "launcher elsewhere": print_config(stdio_env, command=("-m", "django_mcp.stdio"), cwd=elsewhere,
                                           PYTHONPATH=str(ROOT)),
    }
    configs = {}
    for label, process in processes.items():
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, (label, err.decode())
        configs[label] = json.loads(out)  # the JSON and nothing else on stdout
    return configs


@live
def test_print_config(printed_configs: dict[str, dict[str, Any]]) -> None:
    """
    Issue 3: ``--print-config`` prints a ready-to-paste client configuration — ``mcpServers.<name>.command`` is the
    Python interpreter, ``args`` run the ``python -m django_mcp.stdio`` launcher, which keeps stdout clean from
    before Django starts (issue 11, docs/stdio.md), with ``--user`` when one is given (by option or
    ``DJANGO_MCP_USER``); ``env`` names the settings module and puts the project (manage.py's directory) on the path —
    as JSON alone on stdout, and exits 0 without serving.
    """
    [(name, server)] = printed_configs["plain"]["mcpServers"].items()
    assert name == "django"
    assert server["command"] == sys.executable
    assert server["args"] == ["-m", "django_mcp.stdio"]
    assert server["env"] == {"DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}

    library = printed_configs["user and name"]["mcpServers"]["library"]
    assert library["command"] == sys.executable
    assert library["args"] == ["-m", "django_mcp.stdio", "--user", "alice"]
    assert library["env"]["DJANGO_SETTINGS_MODULE"] == "tests.settings"
    assert printed_configs["user from env"]["mcpServers"]["django"]["args"][-2:] == ["--user", "alice"]
    # Started from another directory, the launcher still names the directory the settings import from.
    assert printed_configs["launcher elsewhere"]["mcpServers"]["django"]["env"]["PYTHONPATH"] == str(ROOT)


@live
async def test_printed_config_starts_a_working_server(stdio_env: Mapping[str, str],
                                                      printed_configs: dict[str, dict[str, Any]],
                                                      tmp_path: Path) -> None:
    """
    Issue 3 ("a newcomer … connects a stdio client"): the printed ``command``/``args``/``env``,
    used as is by the SDK stdio client from an unrelated working directory (as desktop hosts do),
    start a server that serves — here with ``--user alice``. Only the test database is added to the
    printed env.
    """
    server = printed_configs["user and name"]["mcpServers"]["library"]
    env = {**server["env"], "MCP_TEST_SQLITE": stdio_env["MCP_TEST_SQLITE"]}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=str(tmp_path))
    async with asyncio.timeout(TIMEOUT):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("echo", {"text": "configured"})
    assert sdk_texts(result) == ["configured"]
