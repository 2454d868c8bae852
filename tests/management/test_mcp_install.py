"""``manage.py mcp_install``: each client's configuration, printed or merged into its file."""

import json
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("mcp_install", *args, stdout=out)
    return out.getvalue()


def test_stdio_for_claude_desktop_is_the_launcher_with_the_user(django_user_model):
    django_user_model.objects.create_user("ada")
    config = json.loads(run("claude-desktop", "--user", "ada", "--name", "library"))
    server = config["mcpServers"]["library"]
    assert server["command"] == sys.executable
    assert server["args"] == ["-m", "django_mcp.stdio", "--user", "ada"]
    assert server["env"]["DJANGO_SETTINGS_MODULE"] == "tests.settings"


@pytest.mark.parametrize(("client", "expected"), [
    ("claude-code", {"mcpServers": {"django": {"type": "http", "url": "https://example.com/mcp"}}}),
    ("cursor", {"mcpServers": {"django": {"url": "https://example.com/mcp"}}}),
    ("vscode", {"servers": {"django": {"type": "http", "url": "https://example.com/mcp"}}}),
])
def test_http_in_each_clients_own_shape(client, expected):
    assert json.loads(run(client, "--url", "https://example.com/mcp")) == expected


@pytest.mark.parametrize(("client", "section", "typed"), [
    ("claude-code", "mcpServers", True), ("cursor", "mcpServers", False), ("vscode", "servers", True)])
def test_stdio_in_each_clients_own_shape(client, section, typed):
    server = json.loads(run(client))[section]["django"]
    assert server["args"] == ["-m", "django_mcp.stdio"] and ("type" in server) == typed
    if typed:
        assert server["type"] == "stdio"


def test_write_merges_and_keeps_other_servers(tmp_path):
    config = tmp_path / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"servers": {"other": {"type": "http", "url": "https://other/mcp"}}, "inputs": []}))
    assert run("vscode", "--url", "https://example.com/mcp", "--write", "--config", str(config)) == \
        f"Added the server 'django' in {config}.\n"
    assert json.loads(config.read_text()) == {
        "servers": {"other": {"type": "http", "url": "https://other/mcp"},
                    "django": {"type": "http", "url": "https://example.com/mcp"}}, "inputs": []}
    assert run("vscode", "--url", "https://example.org/mcp", "--write", "--config", str(config)).startswith(
        "Replaced the server 'django'")
    assert json.loads(config.read_text())["servers"]["django"]["url"] == "https://example.org/mcp"


def test_write_goes_to_the_projects_file_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run("cursor", "--url", "http://127.0.0.1:8000/mcp", "--write", "--name", "library")
    assert json.loads((tmp_path / ".cursor" / "mcp.json").read_text()) == {
        "mcpServers": {"library": {"url": "http://127.0.0.1:8000/mcp"}}}


@pytest.mark.parametrize(("args", "message"), [
    (("cursor", "--user", "ghost"), "No user named 'ghost'"),
    (("cursor", "--url", "example.com/mcp"), "--url must be an http:// or https:// address"),
    (("claude-desktop", "--url", "https://example.com/mcp"), "Settings › Connectors"),
])
def test_clear_errors(args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_a_broken_config_file_is_left_alone(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text("{not json")
    with pytest.raises(CommandError, match="is not valid JSON"):
        run("cursor", "--write", "--config", str(config))
    assert config.read_text() == "{not json"
