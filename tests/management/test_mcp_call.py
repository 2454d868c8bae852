"""``manage.py mcp_call``: one tool called through the endpoint, its progress and log as they come, then its result."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("mcp_call", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_prints_the_text_and_the_structured_content(era):
    out, _ = run("add_numbers", "--arguments", '{"numbers": [2, 3]}', "--era", era)
    assert "Structured content:" in out
    assert json.loads(out.split("Structured content:\n", 1)[1]) == {"total": 5, "count": 2}


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_progress_and_log_messages_go_to_stderr_as_they_come(era):
    out, err = run("slow_steps", "--arguments", '{"steps": 2, "delay": 0}', "--era", era)
    assert out.strip() == "done 2 steps"
    assert err.splitlines() == ["progress 1/2 step 1", "progress 2/2 step 2"]
    _, logged = run("test_tool_with_logging", "--era", era)
    assert logged.splitlines() == ["info: Tool execution started", "info: Tool processing data",
                                   "info: Tool execution completed"]


def test_runs_as_the_user_named(django_user_model):
    django_user_model.objects.create_user("ada")
    assert run("whoami", "--user", "ada")[0].strip() == "ada"
    assert run("whoami")[0].strip() == "anonymous"


def test_json_prints_the_whole_result():
    out, _ = run("echo", "--arguments", '{"text": "hi"}', "--json")
    assert json.loads(out)["content"] == [{"type": "text", "text": "hi"}]


def test_non_text_content_is_described():
    out, _ = run("test_image_content")
    assert "[image: image/png]" in out


@pytest.mark.parametrize(("args", "message"), [
    (("no_such_tool",), "The call was refused: Unknown tool: no_such_tool (JSON-RPC error -32602, HTTP 400)"),
    (("echo", "--arguments", "{text"), "--arguments is not JSON"),
    (("echo", "--arguments", "[1]"), "--arguments must be a JSON object"),
    (("echo", "--user", "ghost"), "No user named 'ghost'"),
    (("test_error_handling",), "The tool 'test_error_handling' reported an error."),
    (("ask_name",), "The call was refused"),
])
def test_every_failure_is_a_clear_error_and_a_non_zero_exit(args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(*args)
