"""
Primitives as options classes: the class form and the decorator form are one thing, options are
checked at import, ``get_*`` hooks vary what each request sees, and registration refuses what
cannot work (URI variables that ``read()`` does not take, ``complete=`` on a fixed URI, two
primitives under one name).
"""

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_mcp import Context, Prompt, Resource, ResourceTemplate, Tool
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from django_mcp.sites import AlreadyRegistered, McpSite


pytestmark = pytest.mark.django_db


class Member:
    """A user stand-in: authenticated, with a name."""

    is_authenticated = True
    is_staff = False

    def __init__(self, username: str, staff: bool = False) -> None:
        self.username, self.pk, self.is_staff = username, hash(username) % 1000, staff


def ctx(user: Any = None) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user)


async def wire(site: McpSite, method: str, user: Any = None) -> list[dict[str, Any]]:
    listing = {"tools": site.list_tools, "resources": site.list_resources,
               "templates": site.list_resource_templates, "prompts": site.list_prompts}[method]
    return (await listing(None, ctx(user))).items


# The two forms -------------------------------------------------------------------------------------

OPTIONS = {"title": "Search", "annotations": {"readOnlyHint": True}, "icons": [{"src": "data:,"}],
           "meta": {"com.example/v": 1}}


async def test_class_and_decorator_forms_give_identical_wire_output():
    by_decorator, by_class = McpSite(), McpSite()

    @by_decorator.tool(**OPTIONS)
    def search_books(query: str, limit: int = 10) -> list[str]:
        """Search the catalogue."""
        return [query] * limit

    class SearchBooks(Tool):
        title = OPTIONS["title"]
        annotations = OPTIONS["annotations"]
        icons = OPTIONS["icons"]
        meta = OPTIONS["meta"]

        def call(self, query: str, limit: int = 10) -> list[str]:
            """Search the catalogue."""
            return [query] * limit

    by_class.register(SearchBooks)
    assert await wire(by_decorator, "tools") == await wire(by_class, "tools")
    assert (await by_class.call_tool("search_books", {"query": "x", "limit": 2}, ctx())) == \
        (await by_decorator.call_tool("search_books", {"query": "x", "limit": 2}, ctx()))


async def test_resources_templates_and_prompts_in_both_forms():
    by_decorator, by_class = McpSite(), McpSite()

    @by_decorator.resource("lib://authors", mime_type="application/json")
    def authors() -> list[str]:
        """Every author."""
        return ["Le Guin"]

    @by_decorator.resource("lib://books/{pk}", name="book", complete={"pk": ["1", "2"]})
    def book(pk: str) -> str:
        return pk

    @by_decorator.prompt(argument_descriptions={"topic": "What about"})
    def summarize(topic: str, style: str = "short") -> str:
        """Summarize a topic."""
        return f"{style}: {topic}"

    class Authors(Resource):
        uri = "lib://authors"
        mime_type = "application/json"

        def read(self) -> list[str]:
            """Every author."""
            return ["Le Guin"]

    class Book(ResourceTemplate):
        uri_template = "lib://books/{pk}"
        name = "book"
        complete = {"pk": ["1", "2"]}

        async def read(self, pk: str) -> str:
            return pk

    class Summarize(Prompt):
        argument_descriptions = {"topic": "What about"}

        def render(self, topic: str, style: str = "short") -> str:
            """Summarize a topic."""
            return f"{style}: {topic}"

    by_class.register([Authors, Book, Summarize])
    for listing in ("resources", "templates", "prompts"):
        assert await wire(by_decorator, listing) == await wire(by_class, listing)
    for site in (by_decorator, by_class):
        assert (await site.read_resource("lib://books/7", ctx()))[0]["text"] == "7"
        assert (await site.get_prompt("summarize", {"topic": "tea"}, ctx()))["messages"][0]["content"]["text"] == \
            "short: tea"
        completion = await site.complete({"type": "ref/resource", "uri": "lib://books/{pk}"},
                                         {"name": "pk", "value": "1"}, {}, ctx())
        assert completion["values"] == ["1"]


def test_class_names_default_to_snake_case_and_docstrings_to_descriptions():
    class LendBook(Tool):
        """Lend a book to the caller."""

        async def call(self, book_id: int) -> str:
            return "ok"

    class HTTPStatus(Tool):
        async def call(self) -> str:
            """The call's own docstring wins over the class's."""
            return "ok"

    lend, status = LendBook(), HTTPStatus()
    assert (lend.name, lend.description) == ("lend_book", "Lend a book to the caller.")
    assert (status.name, status.description) == ("http_status", "The call's own docstring wins over the class's.")


def test_decorator_on_a_class_adds_options_as_a_subclass():
    site = McpSite()

    class Echo(Tool):
        def call(self, text: str) -> str:
            return text

    site.add_tool(Echo, name="shout", title="Shout")
    registered = site.get_tool("shout")
    assert isinstance(registered, Echo) and registered.title == "Shout"
    assert Echo.title is None  # the class itself is untouched


# Unknown options ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("register", "option"), [
    (lambda site: site.tool(titel="x"), "titel"),
    (lambda site: site.resource("a://1", mimetype="text/plain"), "mimetype"),
    (lambda site: site.resource("a://{x}", size=3), "size"),
    (lambda site: site.prompt(annotations={}), "annotations"),
])
def test_an_unknown_option_is_a_type_error_naming_it(register, option):
    with pytest.raises(TypeError, match=rf"unknown option '{option}'.*known options: "):
        register(McpSite())


def test_unknown_options_on_a_class_are_refused_too():
    class Echo(Tool):
        def call(self) -> str:
            return ""

    with pytest.raises(TypeError, match="'colour'"):
        McpSite().add_tool(Echo, colour="red")


def test_complete_on_a_fixed_uri_is_refused_with_a_reason():
    with pytest.raises(TypeError, match="complete= is for resource templates"):
        McpSite().resource("a://fixed", complete={"x": []})


def test_a_tool_class_without_call_is_refused():
    class Nothing(Tool):
        pass

    with pytest.raises(ImproperlyConfigured, match=r"Nothing must define call\(\)"):
        McpSite().register(Nothing)


# Registration checks --------------------------------------------------------------------------------

def test_template_variables_must_be_parameters_of_read():
    site = McpSite()
    with pytest.raises(ImproperlyConfigured, match=r"\{book_id\}, which read\(\) does not take"):
        @site.resource("lib://books/{book_id}")
        def book(pk: str = "") -> str:
            return pk


def test_required_parameters_of_read_must_be_template_variables():
    site = McpSite()
    with pytest.raises(ImproperlyConfigured, match=r"read\(\) needs lang"):
        @site.resource("lib://books/{pk}")
        def book(pk: str, lang: str) -> str:
            return pk
    with pytest.raises(ImproperlyConfigured, match="no URI variables to fill the parameters pk"):
        @site.resource("lib://book")
        def fixed(pk: str) -> str:
            return pk


def test_query_variables_and_optional_parameters_fit():
    site = McpSite()

    @site.resource("lib://search{?q,lang}")
    def search(q: str = "", lang: str = "en", ctx: Context = None) -> str:
        return q

    @site.resource("lib://any/{path}")
    def anything(**variables: str) -> str:
        return ""

    assert len(site.resource_templates) == 2


def test_complete_must_name_template_variables_and_prompt_arguments():
    site = McpSite()
    with pytest.raises(ImproperlyConfigured, match="complete= names slug"):
        site.resource("lib://books/{pk}", complete={"slug": []})(lambda pk: pk)
    with pytest.raises(ImproperlyConfigured, match="mood"):
        site.prompt(complete={"mood": ["calm"]})(lambda topic: topic)


def test_duplicates_name_both_places():
    site = McpSite()

    @site.tool()
    def echo() -> str:
        return ""

    class Echo(Tool):
        def call(self) -> str:
            return ""

    with pytest.raises(AlreadyRegistered) as info:
        site.register(Echo)
    message = str(info.value)
    assert "A tool 'echo' is already registered by" in message
    assert "test_primitives.py" in message and "(test_duplicates_name_both_places.<locals>.echo)" in message
    assert "registers it again" in message and "Echo" in message


# Per-request hooks ----------------------------------------------------------------------------------

async def test_hooks_vary_the_listing_per_user():
    site = McpSite()

    class Greet(Tool):
        description = "Say hello."

        def get_title(self, ctx: Context) -> str:
            return f"Greet as {ctx.user.username}" if ctx.user else "Greet"

        def get_annotations(self, ctx: Context) -> dict[str, Any] | None:
            return {"destructiveHint": False} if ctx.user and ctx.user.is_staff else None

        def call(self) -> str:
            return "hello"

    class Notes(Resource):
        uri = "notes://mine"

        async def get_definition(self, ctx: Context) -> dict[str, Any]:
            # The coroutine form, for definitions that need more than the hooks.
            definition = await super().get_definition(ctx)
            return {**definition, "description": f"{ctx.user.username}'s notes"} if ctx.user else definition

        def read(self) -> str:
            return ""

    site.register([Greet, Notes])
    anonymous = (await wire(site, "tools"))[0]
    alice = (await wire(site, "tools", Member("alice")))[0]
    boss = (await wire(site, "tools", Member("boss", staff=True)))[0]
    assert (anonymous["title"], alice["title"], boss["title"]) == ("Greet", "Greet as alice", "Greet as boss")
    assert "annotations" not in alice and boss["annotations"] == {"destructiveHint": False}
    assert (await wire(site, "resources", Member("bob")))[0]["description"] == "bob's notes"
    assert "description" not in (await wire(site, "resources"))[0]


def test_static_definition_needs_no_request():
    class Ping(Tool):
        annotations = {"readOnlyHint": True}

        def call(self) -> str:
            return "pong"

    assert Ping().definition() == {"name": "ping", "inputSchema": {"type": "object", "properties": {},
                                                                   "additionalProperties": False},
                                   "annotations": {"readOnlyHint": True}}
