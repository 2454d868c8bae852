"""Prompts staff write in the admin: validation on save, the preview, list_changed (django_mcp/prompts/stored.py)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from django_mcp.stored_prompts.models import McpPrompt
from django_mcp.stored_prompts import stored


pytestmark = pytest.mark.django_db


def errors_of(**fields):
    row = McpPrompt(name=fields.pop("name", "ok"), template=fields.pop("template", "Hi"), **fields)
    with pytest.raises(ValidationError) as info:
        row.full_clean()
    return info.value.message_dict


def test_a_valid_row_passes():
    McpPrompt(name="fine.one-2", template="{% load mcp_prompts i18n %}{% translate 'Hi' %} {{ a }}",
              arguments=[{"name": "a", "type": "int", "default": "3", "choices": ["1", "3"]}]).full_clean()


def test_the_template_is_compiled_on_save():
    assert errors_of(template="{% if %}")["template"][0].startswith("The template does not compile:")
    robot = '{% load mcp_prompts %}{% message "robot" %}x{% endmessage %}'
    assert "message" in errors_of(template=robot)["template"][0]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"name": "a"}, "A list of objects"),
    ([{"description": "no name"}], "needs a \"name\""),
    ([{"name": "a", "complete": "os.system"}], "unknown keys complete"),
    ([{"name": "a"}, {"name": "a"}], "same name"),
    ([{"name": "a", "type": "integer"}], "unknown type"),
    ([{"name": "a", "choices": []}], "non-empty list"),
    ([{"name": "user"}], "cannot be an argument name"),
])
def test_arguments_are_checked(arguments, message):
    assert message in errors_of(arguments=arguments)["arguments"][0]


def test_names_permissions_and_code_prompts_are_checked():
    assert "Letters, digits" in errors_of(name="two words")["name"][0]
    assert "would never be served" in errors_of(name="summarize")["name"][0]  # tests/testapp/mcp.py
    assert "app_label.codename" in errors_of(permission="nodot")["permission"][0]
    assert "No permission" in errors_of(permission="auth.fly")["permission"][0]


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return client


def test_saving_or_deleting_announces_list_changed(staff, monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("django_mcp.notifications.notify_list_changed", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post("/admin/django_mcp_stored_prompts/mcpprompt/add/", {
            "name": "staff_prompt", "title": "", "description": "By staff.", "arguments": "[]",
            "template": "Hello {{ user }}", "enabled": "on", "permission": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert sent == ["prompts"]
    with django_capture_on_commit_callbacks(execute=True):
        McpPrompt.objects.get(name="staff_prompt").delete()
    assert sent == ["prompts", "prompts"]


def test_the_admin_refuses_a_template_that_does_not_compile(staff):
    response = staff.post("/admin/django_mcp_stored_prompts/mcpprompt/add/", {
        "name": "broken", "arguments": "[]", "template": "{% for %}", "enabled": "on"})
    assert response.status_code == 200
    assert "The template does not compile" in response.content.decode()
    assert not McpPrompt.objects.filter(name="broken").exists()


def test_a_failing_channel_layer_does_not_undo_the_edit(monkeypatch, caplog):
    def down(kind):
        raise ConnectionError("redis is down")

    monkeypatch.setattr("django_mcp.notifications.notify_list_changed", down)
    stored._send()
    assert "Could not announce" in caplog.text


def test_preview_renders_with_sample_arguments(staff):
    row = McpPrompt.objects.create(
        name="preview_me", template='{% load mcp_prompts %}Plan for {{ user }}: {{ topic }}.'
                                     '{% message "assistant" %}On it.{% endmessage %}{% embed "memo://greeting" %}',
        arguments=[{"name": "topic", "default": "owls"}])
    change = staff.get(f"/admin/django_mcp_stored_prompts/mcpprompt/{row.pk}/change/").content.decode()
    assert f"/admin/django_mcp_stored_prompts/mcpprompt/{row.pk}/preview/" in change
    form = staff.get(f"/admin/django_mcp_stored_prompts/mcpprompt/{row.pk}/preview/").content.decode()
    assert 'name="topic"' in form and 'value="owls"' in form
    page = staff.get(f"/admin/django_mcp_stored_prompts/mcpprompt/{row.pk}/preview/", {"topic": "<bats>", "_preview": "1"})
    html = page.content.decode()
    assert "Plan for staff: &lt;bats&gt;." in html  # the admin page escapes; the prompt itself does not
    assert "On it." in html and "memo://greeting" in html and "Hello from the test app." in html


def test_preview_shows_errors(staff):
    row = McpPrompt.objects.create(name="needs_arg", template="{{ n }}", arguments=[{"name": "n", "type": "int"}])
    html = staff.get(f"/admin/django_mcp_stored_prompts/mcpprompt/{row.pk}/preview/", {"n": "x", "_preview": "1"}).content.decode()
    assert "Invalid arguments for prompt needs_arg: n: Enter a whole number." in html
