"""
Which engine renders a prompt (django_mcp/prompts/engines.py), and what a project without a
DjangoTemplates engine gets: no file prompts and a system check saying so, string prompts rendered
by django_mcp's own engine, listings that keep working.
"""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from django_mcp.stored_prompts.models import McpPrompt
from django_mcp.template_prompts import checks as prompt_checks
from django_mcp.stored_prompts.sources import DatabasePrompts
from django_mcp.template_prompts.files import TemplatePromptFiles
from django_mcp.template_prompts.engines import file_prompt_engine, own_engine, project_prompt_engine, string_prompt_engine
from django_mcp.stored_prompts.stored import validate_row
from django_mcp.template_prompts.templates import TemplatePrompt
from django_mcp.sites import McpSite

from .helpers import from_source, request_for, texts


NO_ENGINE = override_settings(TEMPLATES=[])
LOCMEM = {"BACKEND": "django.template.backends.django.DjangoTemplates", "OPTIONS": {
    "loaders": [("django.template.loaders.locmem.Loader", {"mcp/prompts/hello.txt": "Hello {{ user }}"})]}}


def test_the_project_engine_is_the_first_django_templates_one():
    with override_settings(TEMPLATES=[{**LOCMEM, "NAME": "first"}, {**LOCMEM, "NAME": "second"}]):
        from django.template import engines

        assert project_prompt_engine() is engines["first"].engine
        assert project_prompt_engine("second") is engines["second"].engine
        assert file_prompt_engine() is string_prompt_engine() is engines["first"].engine


def test_an_engine_name_that_is_missing_or_not_django_templates_is_a_configuration_error():
    with override_settings(TEMPLATES=[LOCMEM]):
        with pytest.raises(ImproperlyConfigured, match="'nope'"):
            project_prompt_engine("nope")
    dummy = {"BACKEND": "django.template.backends.dummy.TemplateStrings", "NAME": "plain"}
    with override_settings(TEMPLATES=[dummy]):
        with pytest.raises(ImproperlyConfigured, match="DjangoTemplates engine; TEMPLATES alias 'plain'"):
            project_prompt_engine("plain")
        assert project_prompt_engine() is None  # only a DjangoTemplates engine counts


@NO_ENGINE
def test_without_an_engine_files_cannot_load_and_strings_use_django_mcps_own_engine():
    assert project_prompt_engine() is None
    with pytest.raises(ImproperlyConfigured, match="TEMPLATES has none.*APP_DIRS"):
        file_prompt_engine()
    engine = string_prompt_engine()
    assert engine is own_engine()
    assert engine.dirs == [] and not engine.app_dirs  # it loads no file
    assert {"i18n", "mcp_prompts"} <= set(engine.libraries)


def test_the_own_engine_is_made_again_when_templates_change():
    with NO_ENGINE:
        first = own_engine()
        assert own_engine() is first
    with NO_ENGINE:
        assert own_engine() is not first


@NO_ENGINE
async def test_a_string_prompt_renders_with_tags_and_translation_without_an_engine():
    prompt = from_source('{% load i18n mcp_prompts %}{% comment "mcp" %}\nargument topic: What about\n'
                         'argument language: The language\n  required: no\n{% endcomment %}'
                         '{% translate "Yes" %}, {{ topic|upper }}{% message "assistant" %}Noted {{ topic }}.'
                         '{% endmessage %}')
    result = await prompt.get({"topic": "owls", "language": "fr"}, request_for())
    assert texts(result) == [("user", "Oui, OWLS"), ("assistant", "Noted owls.")]


@NO_ENGINE
def test_a_prompt_that_loads_a_template_file_needs_an_engine():
    class NeedsFile(TemplatePrompt):
        name = "needs_file"
        template_name = "mcp/prompts/testing/greet.txt"

    with pytest.raises(ImproperlyConfigured, match="DjangoTemplates engine"):
        NeedsFile()


@NO_ENGINE
def test_file_prompts_are_absent_without_an_engine():
    assert TemplatePromptFiles(McpSite("files")).prompts() == []
    assert TemplatePromptFiles(McpSite("files")).may_publish() is False


@pytest.mark.django_db(transaction=True)
@NO_ENGINE
async def test_listing_serves_code_and_database_prompts_without_an_engine():
    site = McpSite("no-engine")

    @site.prompt()
    def summarize(topic: str) -> str:
        return f"code {topic}"

    site.add_source(TemplatePromptFiles(site))
    site.add_source(DatabasePrompts(site))
    await McpPrompt.objects.acreate(name="stored", template="{% load i18n %}Stored {{ topic }} {% translate 'No' %}",
                                    arguments=[{"name": "topic"}])
    page = await site.list_prompts(None, request_for(method="prompts/list"))
    assert [prompt["name"] for prompt in page.items] == ["summarize", "stored"]
    stored = await site.get_prompt("stored", {"topic": "owls"}, request_for())
    assert texts(stored) == [("user", "Stored owls No")]


@pytest.mark.django_db
@NO_ENGINE
def test_a_stored_prompt_is_checked_by_the_own_engine():
    validate_row(McpPrompt(name="fine", template="{% load mcp_prompts %}{% message 'assistant' %}Hi{% endmessage %}",
                           arguments=[]))
    with pytest.raises(Exception, match="does not compile"):
        validate_row(McpPrompt(name="broken", template="{% if %}", arguments=[]))


def test_no_check_message_with_an_engine():
    assert prompt_checks.check_prompt_engine() == []


@NO_ENGINE
def test_the_check_names_the_prompt_folders_that_are_not_served():
    (message,) = prompt_checks.check_prompt_engine()
    assert message.id == "django_mcp.W007"
    assert "tests/conformance_app/templates/mcp/prompts" in message.msg  # an app's templates/
    assert "DjangoTemplates" in message.hint


@NO_ENGINE
def test_the_check_says_how_to_turn_file_prompts_on_when_there_are_none(monkeypatch):
    monkeypatch.setattr(prompt_checks, "prompt_folders", lambda: [])
    (message,) = prompt_checks.check_prompt_engine()
    assert message.id == "django_mcp.I001"
    assert "APP_DIRS" in message.hint
