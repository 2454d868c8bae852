"""File prompts under mcp/prompts/ and database prompts, listed together (django_mcp/prompts/discovery.py)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from django_mcp import site as default_site
from django_mcp.stored_prompts.models import McpPrompt
from django_mcp.stored_prompts.sources import DatabasePrompts
from django_mcp.template_prompts.files import TemplatePromptFiles, find_prompt_templates, prompt_name
from django_mcp.template_prompts.engines import project_prompt_engine
from django_mcp.protocol.errors import InvalidParams
from django_mcp.sites import McpSite

from .helpers import request_for, texts


# Async ORM calls run in other threads: only a flushed database keeps tests apart.
pytestmark = pytest.mark.django_db(transaction=True)


def test_prompt_names_come_from_paths():
    assert prompt_name("review_book.md") == "review_book"
    assert prompt_name("library/review.book.txt") == "library.review.book"
    assert prompt_name("noext") == "noext"


def test_templates_under_mcp_prompts_are_found_in_loader_order():
    found = find_prompt_templates(project_prompt_engine())
    assert found["testing.greet"] == "mcp/prompts/testing/greet.txt"  # tests/template_prompts/templates (DIRS)
    assert found["test_simple_prompt"] == "mcp/prompts/test_simple_prompt.txt"  # an app's templates/
    assert not any(name.startswith("_") or "._" in name for name in found)  # partials are not prompts


def site_with_sources(**options):
    site = McpSite("discovery")
    site.page_size = options.get("page_size")

    @site.prompt()
    def summarize(topic: str) -> str:
        return f"code {topic}"

    site.add_source(TemplatePromptFiles(site))
    site.add_source(DatabasePrompts(site))
    return site


async def names(site, user=None):
    listed, cursor = [], None
    while True:
        page = await site.list_prompts(cursor, request_for(user, "prompts/list"))
        listed += [prompt["name"] for prompt in page.items]
        if not page.next_cursor:
            return listed
        cursor = page.next_cursor


async def test_the_default_site_serves_file_and_database_prompts():
    assert [type(source) for source in default_site.sources("prompt")[1:]] == [DatabasePrompts, TemplatePromptFiles]
    await McpPrompt.objects.acreate(name="from_db", description="Stored.", template="Stored {{ user }}")
    listed = await names(default_site)
    assert {"summarize", "from_db", "testing.greet", "test_simple_prompt"} <= set(listed)
    assert listed.index("summarize") < listed.index("from_db") < listed.index("testing.greet")
    assert len(listed) == len(set(listed))
    assert default_site.capabilities(request_for())["prompts"] == {"listChanged": True}


@pytest.mark.parametrize("page_size", [1, 2, 100])
async def test_clashes_code_over_database_over_files_in_listings_and_lookups(page_size):
    site = site_with_sources(page_size=page_size)
    await McpPrompt.objects.acreate(name="summarize", template="db summarize")  # hidden by code
    await McpPrompt.objects.acreate(name="testing.greet", template="db greet")  # hides the file
    await McpPrompt.objects.acreate(name="test_simple_prompt", template="off", enabled=False)  # hides nothing
    listed = await names(site)
    assert len(listed) == len(set(listed))
    assert listed[:2] == ["summarize", "testing.greet"]
    assert "test_simple_prompt" in listed
    get = site.get_prompt
    assert texts(await get("summarize", {"topic": "x"}, request_for())) == [("user", "code x")]
    assert texts(await get("testing.greet", {}, request_for())) == [("user", "db greet")]
    simple = await get("test_simple_prompt", {}, request_for())
    assert texts(simple) == [("user", "This is a simple prompt for testing.")]


async def test_database_prompts_keep_their_permissions():
    site = site_with_sources()
    await McpPrompt.objects.acreate(name="members", template="hi", login_required=True)
    await McpPrompt.objects.acreate(name="editors", template="hi", permission="auth.change_user")
    assert not {"members", "editors"} & set(await names(site))
    with pytest.raises(InvalidParams, match="Unknown prompt: members"):
        await site.get_prompt("members", {}, request_for())
    user = await get_user_model().objects.acreate(username="member")
    assert {"members"} == {"members", "editors"} & set(await names(site, user))
    await user.user_permissions.aadd(await Permission.objects.aget(codename="change_user"))
    user = await get_user_model().objects.aget(pk=user.pk)  # permissions are cached on the instance
    assert {"members", "editors"} <= set(await names(site, user))


async def test_a_changed_row_is_rebuilt_and_arguments_are_specs():
    site = site_with_sources()
    row = await McpPrompt.objects.acreate(name="ask", template="Ask about {{ topic }} ({{ n|add:1 }}).",
                                          arguments=[{"name": "topic", "description": "What"},
                                                     {"name": "n", "type": "int", "default": "1"}])
    prompt = await site.find("prompt", "ask", request_for())
    assert prompt.definition()["arguments"] == [{"name": "topic", "description": "What", "required": True},
                                                {"name": "n", "required": False}]
    assert texts(await site.get_prompt("ask", {"topic": "owls"}, request_for())) == [("user", "Ask about owls (2).")]
    row.template = "Changed {{ topic }}."
    await row.asave()
    assert texts(await site.get_prompt("ask", {"topic": "owls"}, request_for())) == [("user", "Changed owls.")]


async def test_completion_of_a_file_prompt_argument():
    ref = {"type": "ref/prompt", "name": "testing.greet"}
    result = await default_site.complete(ref, {"name": "language", "value": "d"}, {},
                                         request_for(method="completion/complete"))
    assert result == {"values": ["de"], "total": 1, "hasMore": False}


def test_a_broken_file_is_logged_and_left_out(caplog, settings):
    settings.TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "OPTIONS": {"loaders": [
        ("django.template.loaders.locmem.Loader", {
            "mcp/prompts/good.txt": "Good.",
            "mcp/prompts/bad.txt": "{% if %}",
            "mcp/prompts/worse.txt": '{% comment "mcp" %}\nargument x: X\n  type: nope\n{% endcomment %}',
            "other/ignored.txt": "Not a prompt.",
        })]}}]
    files = TemplatePromptFiles()
    assert [prompt.name for prompt in files.prompts()] == ["good"]
    assert "mcp/prompts/bad.txt is not served" in caplog.text
    assert "mcp/prompts/worse.txt is not served" in caplog.text
