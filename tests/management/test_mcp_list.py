"""``manage.py mcp_list``: what a user's client is offered, through the endpoint itself."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("mcp_list", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("era", ["modern", "legacy", "2025-06-18"])
def test_lists_tools_with_their_hints_resources_templates_and_prompts(era):
    out = run("--era", era, "--all")
    assert out.startswith("What an anonymous user is offered (")
    assert "\nTools (" in out and "  echo" in out and "read-only" in out and "Repeat the text." in out
    assert "\nResources (" in out and "memo://greeting" in out
    assert "\nResource templates (" in out and "memo://items/{item_id}" in out
    assert "\nPrompts (" in out and re.search(r"\n  summarize +topic style +Summarize a topic\.\n", out)


def test_json_and_what_a_user_is_not_offered(django_user_model):
    # tests/test/shelf.py's site: members_only is for signed-in users, rearrange needs a scope.
    listed = json.loads(run("--site", "tests.test.shelf.site", "--format", "json"))
    assert [tool["name"] for tool in listed["tools"]] == ["count_writers", "broken_promise"]
    assert listed["notListed"] == ["members_only", "rearrange"]
    django_user_model.objects.create_user("ada")
    text = run("--site", "tests.test.shelf.site", "--user", "ada")
    assert "What ada is offered" in text and "  members_only" in text
    assert "Not offered to ada (a permission, a scope, or switched off in the tool admin): rearrange" in text


def test_long_lists_are_cut_unless_all_is_asked_for():
    cut = run()
    assert "(--all shows them)" in cut and "  echo " not in cut  # the 45 tools of the test project
    assert "  echo " in run("--all") and "(--all shows them)" not in run("--all")


def test_unknown_user_and_era_are_clear_errors():
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        run("--user", "ghost")
    with pytest.raises(CommandError, match="Unknown --era 'ancient'"):
        run("--era", "ancient")
    with pytest.raises(CommandError, match="is .*, not an McpSite"):
        run("--site", "tests.test.shelf.application")
