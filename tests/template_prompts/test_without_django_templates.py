"""
A project without a DjangoTemplates engine (tests/template_prompts/api_only), over real
transports: a real daphne server driven by the official ``mcp`` SDK client in both eras, and ``python -m
django_mcp.stdio`` on real pipes. ``prompts/list`` serves the prompts in code and in the database
(rendered by django_mcp's own engine) and leaves the app's prompt file out; ``manage.py check``
says why.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Mapping
import mcp_types as types
import pytest
from mcp import Client

from tests.live import ROOT, LiveServer, migrate, server_env
from tests.transports.stdio_driver import StdioProcess, modern, request


SETTINGS = "tests.template_prompts.api_only.settings"
TIMEOUT = 30
STORED = ('{% load i18n mcp_prompts %}Stored {{ topic }} ({% translate "No" %})'
          '{% message "assistant" %}On {{ topic }}.{% endmessage %}')
EXPECTED_NAMES = {"summarize", "brief", "stored"}


@pytest.fixture(scope="module", params=["no-engine", "jinja2"])
def api_only_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """
    A migrated SQLite file for the API-only project, holding one database prompt; its TEMPLATES
    empty, or with only a Jinja2 engine.
    """
    env = {"DJANGO_SETTINGS_MODULE": SETTINGS, "MCP_TEST_DATABASE": "sqlite",
           "MCP_TEST_JINJA2": "1" if request.param == "jinja2" else "0",
           "MCP_TEST_SQLITE": str(tmp_path_factory.mktemp("api-only") / "db.sqlite3"),
           "MCP_TEST_CHANNEL_LAYER": "memory", "DJANGO_MCP_USER": None}
    migrate(env)
    script = ("import django; django.setup(); from django_mcp.stored_prompts.models import McpPrompt; "
              f"McpPrompt.objects.create(name='stored', template={STORED!r}, arguments=[{{'name': 'topic'}}])")
    made = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=server_env(env), capture_output=True,
                          text=True, timeout=60, check=False)
    assert made.returncode == 0, made.stderr
    return {key: value for key, value in env.items() if value is not None}


@pytest.fixture(scope="module")
def api_only_server(api_only_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with LiveServer(env=api_only_env, name="api-only") as server:
        yield server


def texts(result: types.GetPromptResult) -> list[tuple[str, str]]:
    return [(m.role, m.content.text) for m in result.messages]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_prompts_in_code_and_database_are_served_over_http(api_only_server: LiveServer, mode: str) -> None:
    async with asyncio.timeout(TIMEOUT):
        async with Client(api_only_server.mcp_url, mode=mode) as client:
            listed = {prompt.name for prompt in (await client.list_prompts()).prompts}
            brief = await client.get_prompt("brief", {"subject": "owls"})
            stored = await client.get_prompt("stored", {"topic": "oaks"})
            summary = await client.get_prompt("summarize", {"topic": "moss"})
            called = await client.call_tool("ping", {})
    assert listed == EXPECTED_NAMES  # no "unserved": the app's file prompt needs a DjangoTemplates engine
    assert texts(brief) == [("user", "Yes: brief OWLS for AnonymousUser."), ("assistant", "Briefing on owls.")]
    assert texts(stored) == [("user", "Stored oaks (No)"), ("assistant", "On oaks.")]
    assert texts(summary) == [("user", "Summarize moss in three sentences.")]
    assert called.content[0].text == "pong"


def test_prompts_in_code_and_database_are_served_over_stdio(api_only_env: Mapping[str, str]) -> None:
    process = StdioProcess(server_env(api_only_env), command=[sys.executable, "-m", "django_mcp.stdio"])
    try:
        process.initialize()
        legacy = process.call(request(1, "prompts/list"))
        modern_list = process.call(modern(2, "prompts/list"))
        stored = process.call(modern(3, "prompts/get", {"name": "stored", "arguments": {"topic": "elms"}}))
    finally:
        process.stop()
    assert {prompt["name"] for prompt in legacy["result"]["prompts"]} == EXPECTED_NAMES, process.describe()
    assert {prompt["name"] for prompt in modern_list["result"]["prompts"]} == EXPECTED_NAMES
    assert [m["content"]["text"] for m in stored["result"]["messages"]] == ["Stored elms (No)", "On elms."]


def test_manage_py_check_says_why_the_file_prompt_is_not_served(api_only_env: Mapping[str, str]) -> None:
    checked = subprocess.run([sys.executable, "-m", "django", "check"], cwd=ROOT, env=server_env(api_only_env),
                             capture_output=True, text=True, timeout=60, check=False)
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output  # a warning, not an error: the project still starts
    assert "django_mcp.W007" in output
    assert "tests/template_prompts/api_only/templates/mcp/prompts" in output
