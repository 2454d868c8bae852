"""
``manage.py mcp_server_json``: the registry's ``server.json`` (or, with ``--card``, the Server Card)
of the project's site, through ``call_command``.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from django_mcp.protocol.versions import ALL_VERSIONS
from django_mcp.server_card.card import SCHEMA_URL
from django_mcp.server_card.registry import SERVER_JSON_SCHEMA_URL
from tests.server_card.schemas import card_errors, server_json_errors
from tests.server_card.test_card import IDENTITY, guarded_site, mcp_settings


#: For --site: an import path the command resolves.
SITE = guarded_site()


def run(*args: str) -> dict:
    out = StringIO()
    call_command("mcp_server_json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_server_json_to_stdout():
    with mcp_settings(**IDENTITY):
        document = run("--base-url", "https://mcp.example.com", "--repository-url", "https://github.com/acme/library")
    assert server_json_errors(document) == []
    assert document["$schema"] == SERVER_JSON_SCHEMA_URL
    assert document["name"] == "com.example.mcp/library" and document["version"] == "1.4.0"
    assert document["repository"] == {"url": "https://github.com/acme/library", "source": "github"}
    assert document["remotes"][0] == {"type": "streamable-http", "url": "https://mcp.example.com/mcp"}


def test_the_public_base_url_is_the_default():
    with mcp_settings(PUBLIC_BASE_URL="https://library.example.org"):
        document = run("--name", "org.example/library")
    assert server_json_errors(document) == []
    assert document["name"] == "org.example/library"
    assert {remote["url"] for remote in document["remotes"]} == {"https://library.example.org/mcp",
                                                                 "https://library.example.org/sse"}


def test_the_card_for_static_hosting(tmp_path):
    target = tmp_path / "server-card.json"
    err = StringIO()
    call_command("mcp_server_json", "--card", "--base-url", "https://mcp.example.com", "--output", str(target),
                 stderr=err)
    card = json.loads(target.read_text())
    assert card_errors(card) == []
    assert card["$schema"] == SCHEMA_URL
    assert card["remotes"][0]["supportedProtocolVersions"] == list(reversed(ALL_VERSIONS))
    assert str(target) in err.getvalue()


def test_a_package_only_server_json():
    document = run("--no-remotes", "--pypi-package", "library-mcp", "--package-version", "2.0.1",
                   "--name", "io.github.acme/library")
    assert server_json_errors(document) == []
    assert "remotes" not in document
    assert document["packages"][0]["identifier"] == "library-mcp" and document["packages"][0]["version"] == "2.0.1"


def test_another_site_and_endpoint():
    document = run("--site", "tests.server_card.test_mcp_server_json.SITE", "--endpoint", "staff/mcp",
                   "--base-url", "https://mcp.example.com")
    assert server_json_errors(document) == []
    assert document["remotes"] == [{"type": "streamable-http", "url": "https://mcp.example.com/staff/mcp"}]
    assert "secret_staff_tool" not in json.dumps(document)


@pytest.mark.parametrize(("args", "message"), [
    ((), "No public URL"),
    (("--base-url", "mcp.example.com"), "scheme and host"),
    (("--base-url", "https://mcp.example.com/mcp"), "scheme and host"),
    (("--base-url", "https://mcp.example.com", "--name", "library"), "reverse-DNS"),
    (("--site", "tests.server_card.nowhere.SITE", "--base-url", "https://mcp.example.com"), "Cannot import"),
])
def test_mistakes_are_command_errors(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("mcp_server_json", *args, stdout=StringIO())
