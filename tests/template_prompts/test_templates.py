"""Template prompts: rendering, arguments, embeds, images, translation (django_mcp/prompts/templates.py)."""

import base64

import pytest
from django import forms
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.template import TemplateSyntaxError

from django_mcp import Context
from django_mcp.permissions import IsAuthenticated
from django_mcp.prompts import Prompt
from django_mcp.template_prompts import template_prompt
from django_mcp.template_prompts.arguments import ArgumentError
from django_mcp.template_prompts.templates import TemplatePrompt
from django_mcp.protocol.errors import InvalidParams
from django_mcp.sites import McpSite

from .helpers import from_source, request_for, texts


# Async ORM calls run in other threads: only a flushed database keeps tests apart.
pytestmark = pytest.mark.django_db(transaction=True)

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC")


async def test_plain_text_is_one_user_message():
    prompt = from_source('{% comment "mcp" %}\nargument topic: T\n{% endcomment %}  Summarize {{ topic }}.\n\n',
                         description="Summaries.")
    result = await prompt.get({"topic": "tea"}, request_for())
    assert result == {"description": "Summaries.",
                      "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize tea."}}]}


async def test_message_tags_make_several_turns_in_order():
    prompt = from_source('{% load mcp_prompts %}First.{% message "assistant" %} Sure. {% endmessage %}'
                         '{% message "user" %}Second.{% endmessage %}{% for i in "ab" %}'
                         '{% message "assistant" %}{{ i }}{% endmessage %}{% endfor %}')
    assert texts(await prompt.get({}, request_for())) == [
        ("user", "First."), ("assistant", "Sure."), ("user", "Second."), ("assistant", "a"), ("assistant", "b")]


def test_a_role_that_does_not_exist_is_a_syntax_error():
    with pytest.raises(TemplateSyntaxError, match="user' or 'assistant"):
        from_source('{% load mcp_prompts %}{% message "system" %}x{% endmessage %}')


async def test_file_prompt_header_arguments_and_include():
    prompt = type("Greet", (TemplatePrompt,), {"template_name": "mcp/prompts/testing/greet.txt"})()
    assert prompt.definition()["arguments"] == [
        {"name": "person", "description": "Who to greet", "required": True},
        {"name": "times", "description": "How many times", "required": False},
        {"name": "language", "description": "The language to answer in", "required": False},
    ]
    assert prompt.title == "Greet someone"
    result = await prompt.get({"person": "Ada", "times": "3"}, request_for())
    assert texts(result) == [("user", "Hello Ada! (x3) (Monday, asked by AnonymousUser)"),
                             ("assistant", "Hello! How can I help?")]


async def test_translation_follows_the_language_argument():
    prompt = type("Greet", (TemplatePrompt,), {"template_name": "mcp/prompts/testing/greet.txt"})()
    result = await prompt.get({"person": "Ada", "language": "fr"}, request_for())
    assert texts(result)[0] == ("user", "Hello Ada! (lundi, asked by AnonymousUser)")
    result = await prompt.get({"person": "Ada", "language": "de"}, request_for())
    assert "Montag" in texts(result)[0][1]


async def test_translation_follows_the_users_language():
    class Polyglot:
        is_authenticated = True
        language = "fr"

        def __str__(self) -> str:
            return "polyglot"

    prompt = from_source('{% load i18n %}{% translate "Monday" %} {{ language }}')
    assert texts(await prompt.get({}, request_for(Polyglot()))) == [("user", "lundi fr")]


async def test_argument_values_are_data_never_template_code():
    prompt = from_source('{% comment "mcp" %}\nargument a: A\nargument b: B\n{% endcomment %}A={{ a }} B={{ b }}')
    values = {"a": "{{ user.password }}{% debug %}", "b": '<b>&amp; {% load mcp_prompts %}{% message "assistant" %}'}
    result = await prompt.get(values, request_for())
    assert texts(result) == [("user", f"A={values['a']} B={values['b']}")]
    # NUL, which the markers of message tags use, cannot even arrive in a text argument.
    with pytest.raises(InvalidParams, match="Null characters are not allowed"):
        await prompt.get({"a": "x", "b": "\x00abc:0\x00"}, request_for())


async def test_missing_required_argument_is_32602():
    prompt = from_source('{% comment "mcp" %}\nargument a: A\nargument b: B\n{% endcomment %}{{ a }}')
    with pytest.raises(InvalidParams) as info:
        await prompt.get({}, request_for())
    assert info.value.code == -32602
    assert info.value.message == "Missing required arguments for prompt t: a, b"


async def test_arguments_convert_by_type_and_invalid_values_are_32602():
    source = ('{% comment "mcp" %}\nargument n: N\n  type: int\nargument when: W\n  type: date\n'
              'argument flag: F\n  type: bool\n  default: no\nargument size: S\n  choices: 1, 2\n  type: int\n'
              '  default: 2\n{% endcomment %}{{ n|add:1 }} {{ when|date:"Y" }} {{ flag }} {{ size|add:10 }}')
    prompt = from_source(source)
    assert texts(await prompt.get({"n": "41", "when": "2024-02-29"}, request_for())) == [("user", "42 2024 False 12")]
    with pytest.raises(InvalidParams) as info:
        await prompt.get({"n": "x", "when": "yesterday", "size": "3"}, request_for())
    assert info.value.code == -32602
    assert info.value.message.startswith("Invalid arguments for prompt t: n: Enter a whole number.; "
                                         "when: Enter a valid date.; size: Select a valid choice.")


def test_bad_argument_specs_fail_at_definition():
    with pytest.raises(ArgumentError, match="unknown type 'integer'"):
        from_source('{% comment "mcp" %}\nargument n: N\n  type: integer\n{% endcomment %}')
    with pytest.raises(ArgumentError, match="default 'x' is invalid"):
        from_source('{% comment "mcp" %}\nargument n: N\n  type: int\n  default: x\n{% endcomment %}')
    with pytest.raises(ArgumentError, match="user cannot be an argument name"):
        from_source('{% comment "mcp" %}\nargument user: U\n{% endcomment %}')


async def test_embedded_resource_is_read_through_the_site():
    prompt = type("Review", (TemplatePrompt,), {"template_name": "testing/review.txt"})()
    result = await prompt.get({"item_id": "a b?c", "note": "n"}, request_for())
    assert result["messages"][0] == {"role": "user", "content": {"type": "text", "text": "Review item a b?c (n)."}}
    # The value is percent-encoded into the URI: it cannot add a query or path segments.
    assert result["messages"][1]["content"] == {"type": "resource", "resource": {
        "uri": "memo://items/a%20b%3Fc", "mimeType": "application/json",
        "text": '{"id": "a b?c", "name": "Item a b?c"}'}}


async def test_an_embedded_value_cannot_climb_out_of_its_segment():
    # "../x" encoded is one segment on the wire, but would decode to a path: the template refuses it.
    prompt = type("Review", (TemplatePrompt,), {"template_name": "testing/review.txt"})()
    with pytest.raises(Exception, match="not found|Unknown resource"):
        await prompt.get({"item_id": "../x", "note": "n"}, request_for())


async def test_a_resource_the_user_may_not_read_is_unknown_or_left_out():
    site = McpSite("embeds")
    site.add_resource(lambda: "secret", "memo://secret", name="secret", permission_classes=[IsAuthenticated])
    strict = from_source('{% load mcp_prompts %}{% embed "memo://secret" %}', site=site)
    lenient = from_source('{% load mcp_prompts %}Before.{% embed "memo://secret" optional %}', site=site)
    with pytest.raises(InvalidParams) as info:
        await strict.get({}, request_for())
    assert (info.value.code, info.value.message) == (-32602, "Unknown resource: memo://secret")
    assert texts(await lenient.get({}, request_for())) == [("user", "Before.")]
    user = await get_user_model().objects.acreate(username="reader")
    assert texts(await strict.get({}, request_for(user))) == [("user", "<resource>")]


async def test_images_from_static_files_file_fields_and_bytes():
    prompt = from_source('{% load mcp_prompts %}{% image "conformance/red-pixel.png" %}{% image cover %}'
                         '{% image raw mime_type="image/gif" %}{% image missing %}Look.')
    cover = ContentFile(PNG, name="covers/earthsea.png")

    class Images(TemplatePrompt):
        name = "images"
        template_string = prompt.template_string

        def get_context_data(self, ctx: Context, **arguments):
            return {"cover": cover, "raw": b"GIF89a", "missing": None}

    messages = (await Images().get({}, request_for()))["messages"]
    encoded = base64.b64encode(PNG).decode()
    assert [m["content"] for m in messages[:3]] == [
        {"type": "image", "data": encoded, "mimeType": "image/png"},
        {"type": "image", "data": encoded, "mimeType": "image/png"},
        {"type": "image", "data": base64.b64encode(b"GIF89a").decode(), "mimeType": "image/gif"},
    ]
    assert texts({"messages": messages[3:]}) == [("user", "Look.")]


async def test_a_missing_static_image_is_32602():
    with pytest.raises(InvalidParams, match="No static image 'nope.png'"):
        await from_source('{% load mcp_prompts %}{% image "nope.png" %}').get({}, request_for())


class BookForm(forms.Form):
    book = forms.IntegerField(help_text="The book's id", min_value=1)
    tone = forms.ChoiceField(choices=[("kind", "Kind"), ("keen", "Keen")], required=False, label="Tone")


async def test_a_form_class_declares_the_arguments_and_the_hook_prepares_the_context():
    class ReviewBook(TemplatePrompt):
        """Review one book."""

        template_string = "Review book {{ book }} ({{ title }}), {{ tone|default:'neutral' }}."
        form_class = BookForm
        complete = {"book": ["1", "12", "2"]}

        def get_context_data(self, ctx: Context, **arguments):
            return {**arguments, "title": f"Title {arguments['book']}"}

    prompt = ReviewBook()
    assert prompt.definition() == {"name": "review_book", "description": "Review one book.", "arguments": [
        {"name": "book", "description": "The book's id", "required": True},
        {"name": "tone", "title": "Tone", "required": False}]}
    assert texts(await prompt.get({"book": "7"}, request_for())) == [("user", "Review book 7 (Title 7), neutral.")]
    with pytest.raises(InvalidParams, match="book: Ensure this value is greater than or equal to 1"):
        await prompt.get({"book": "0"}, request_for())
    assert await prompt.get_completions(None, "book", "1", {}) == ["1", "12"]
    assert await prompt.get_completions(None, "tone", "ke", {}) == ["keen"]


async def test_prompt_decorator_with_a_template_converts_by_annotation():
    site = McpSite("decorated")

    @template_prompt(template_name="testing/review.txt", argument_descriptions={"item_id": "Which item"}, site=site)
    def review(item_id: int, ctx: Context, note: str = "none") -> dict:
        """Review an item."""
        return {"item_id": item_id + 1, "note": f"{note} for {ctx.user}"}

    prompt = site.get_registered("prompt", "review")
    assert isinstance(prompt, TemplatePrompt) and isinstance(prompt, Prompt)
    assert prompt.definition()["arguments"] == [{"name": "item_id", "description": "Which item", "required": True},
                                                {"name": "note", "required": False}]
    result = await prompt.get({"item_id": "1"}, request_for())
    assert texts(result)[0] == ("user", "Review item 2 (none for AnonymousUser).")
    with pytest.raises(InvalidParams, match="item_id: Enter a whole number"):
        await prompt.get({"item_id": "one"}, request_for())


def test_the_core_prompt_decorator_points_at_template_prompt():
    with pytest.raises(TypeError, match="django_mcp.template_prompts.template_prompt"):
        McpSite("plain").prompt(template_name="testing/review.txt")


async def test_completion_from_a_queryset_and_a_model_field():
    User = get_user_model()
    for name in ("alice", "albert", "bob"):
        await User.objects.acreate(username=name)
    prompt = from_source('{% comment "mcp" %}\nargument who: W\n  complete: auth.User.username\n{% endcomment %}',
                         complete=None)
    assert await prompt.get_completions(None, "who", "al", {}) == ["albert", "alice"]
    by_queryset = from_source('{% comment "mcp" %}\nargument who: W\n{% endcomment %}',
                              complete={"who": User.objects.values_list("username", flat=True)})
    assert await by_queryset.get_completions(None, "who", "b", {}) == ["bob"]
