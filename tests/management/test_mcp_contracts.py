"""``manage.py mcp_contracts``: the snapshot written, checked, and the system check that says it is stale."""

import json
from io import StringIO

import pytest
from django.core import checks
from django.core.management import CommandError, call_command

from django_mcp.checks import check_contracts


def run(*args: str) -> str:
    out = StringIO()
    call_command("mcp_contracts", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def snapshot_file(tmp_path, settings):
    path = tmp_path / "mcp_contracts.json"
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "CONTRACTS_FILE": str(path)}
    return path


def test_writes_the_snapshot_of_every_site(snapshot_file):
    out = run()
    assert out.startswith(f"Wrote {snapshot_file}: ")
    written = json.loads(snapshot_file.read_text())
    default = written["sites"]["default"]
    assert written["format"] == 1
    assert default["tools"]["echo"]["inputSchema"]["required"] == ["text"]
    assert default["tools"]["echo"]["annotations"] == {"readOnlyHint": True}
    assert "memo://items/{item_id}" in default["resourceTemplates"]
    assert [argument["name"] for argument in default["prompts"]["summarize"]["arguments"]] == ["topic", "style"]
    assert snapshot_file.read_text().endswith("}\n")  # stable for diffs: sorted, indented, final newline


def test_a_site_made_later_under_the_default_name_does_not_replace_the_default(snapshot_file):
    from django_mcp.sites import McpSite

    shadow = McpSite()  # a test's or a script's own site, left alive under the default's name
    run()
    default = json.loads(snapshot_file.read_text())["sites"]["default"]
    assert "echo" in default["tools"]
    del shadow


def test_check_passes_while_nothing_changed(snapshot_file):
    run()
    assert run("--check") == f"No changes: what the sites serve matches {snapshot_file}.\n"


def test_check_names_each_change_and_fails(snapshot_file):
    run()
    written = json.loads(snapshot_file.read_text())
    tools = written["sites"]["default"]["tools"]
    tools["retired_tool"] = {"name": "retired_tool", "inputSchema": {"type": "object"}}  # gone from the code
    del tools["whoami"]  # new in the code
    tools["echo"]["inputSchema"]["properties"]["times"]["maximum"] = 3
    snapshot_file.write_text(json.dumps(written))
    out = StringIO()
    with pytest.raises(CommandError, match=r"3 change\(s\) from mcp_contracts.json, 1 breaking"):
        call_command("mcp_contracts", "--check", stdout=out)
    assert out.getvalue().splitlines() == [
        "BREAKING   tool retired_tool: removed (clients that call it by name will fail; renamed counts as removed)",
        "compatible tool echo: argument times: maximum 3 removed",
        "compatible tool whoami: added",
    ]


def test_breaking_only_lets_compatible_changes_through(snapshot_file):
    run()
    written = json.loads(snapshot_file.read_text())
    del written["sites"]["default"]["tools"]["whoami"]
    snapshot_file.write_text(json.dumps(written))
    out = run("--check", "--breaking-only")
    assert "compatible tool whoami: added" in out and "1 change(s) from mcp_contracts.json, 0 breaking." in out
    with pytest.raises(CommandError):
        run("--check")


def test_writing_again_accepts_the_changes_and_lists_them(snapshot_file):
    run()
    written = json.loads(snapshot_file.read_text())
    del written["sites"]["default"]["tools"]["whoami"]
    snapshot_file.write_text(json.dumps(written))
    assert "  compatible tool whoami: added" in run()
    assert run("--check").startswith("No changes")


def test_a_missing_or_unreadable_snapshot_is_a_clear_error(snapshot_file):
    with pytest.raises(CommandError, match="does not exist: run manage.py mcp_contracts"):
        run("--check")
    snapshot_file.write_text("{not json")
    with pytest.raises(CommandError, match="is not JSON"):
        run("--check")


def test_the_system_check_warns_when_the_snapshot_is_stale_or_missing(snapshot_file):
    assert [message.id for message in check_contracts()] == ["django_mcp.W011"]
    run()
    assert check_contracts() == []
    written = json.loads(snapshot_file.read_text())
    written["sites"]["default"]["tools"]["retired_tool"] = {"name": "retired_tool"}
    snapshot_file.write_text(json.dumps(written))
    [warning] = check_contracts()
    assert warning.id == "django_mcp.W010" and warning.level == checks.WARNING
    assert "1 change(s), 1 breaking (BREAKING   tool retired_tool: removed" in warning.msg
    assert "mcp_contracts --check" in warning.hint


def test_without_a_snapshot_or_the_setting_the_check_says_nothing(settings, tmp_path, monkeypatch):
    monkeypatch.setattr("django_mcp.projects.project_dir", lambda: tmp_path)
    assert check_contracts() == []
