"""
The views app (``django_mcp.ui``, the MCP Apps extension ``io.modelcontextprotocol/ui``) on the
wire, both eras, through the dispatcher: what a client that shows views sees (``_meta.ui`` on
tools, views in ``resources/list`` with their MIME type and security metadata, the rendered page)
and what one that did not declare the extension sees (the same results and view metadata, no
app-only tools), the capability in ``initialize`` and ``server/discover``, and the checks on what a
view may declare.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured

from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import McpError
from django_mcp.protocol.handlers.lifecycle import handshake
from django_mcp.protocol.versions import Era
from django_mcp.transports.http import dispatcher_for
from django_mcp.ui.checks import check_tool_views
from django_mcp.ui.constants import EXTENSION, MIME_TYPE
from django_mcp.ui.views import View
from tests.ui.site import views_site


MODERN, LEGACY = "2026-07-28", "2025-11-25"
SHOWS = {"extensions": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}}
ERAS = [MODERN, LEGACY]


def context(version: str, capabilities: dict[str, Any], user: Any = None) -> RequestContext:
    era = Era.MODERN if version == MODERN else Era.LEGACY
    return RequestContext(era=era, protocol_version=version, client_capabilities=capabilities,
                          user=user or AnonymousUser())


async def call(version: str, method: str, params: dict[str, Any] | None = None, *,
               capabilities: dict[str, Any] | None = None, user: Any = None) -> dict[str, Any]:
    capabilities = SHOWS if capabilities is None else capabilities
    params = dict(params or {})
    if version == MODERN:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": capabilities}
    return await dispatcher_for(views_site).call(method, params, context(version, capabilities, user))


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in result["tools"]}


@pytest.mark.parametrize("version", ERAS)
async def test_a_client_that_shows_views_sees_each_tools_view_and_the_app_only_tool(version: str) -> None:
    tools = by_name(await call(version, "tools/list"))
    assert tools["show_book"]["_meta"]["ui"] == {"resourceUri": "ui://views/show_book"}
    assert tools["show_book"]["_meta"]["ui/resourceUri"] == "ui://views/show_book"  # what older hosts read
    assert tools["show_shelf"]["_meta"]["ui"] == {"resourceUri": "ui://views/shelf"}
    assert tools["lend_from_view"]["_meta"]["ui"] == {"visibility": ["app"]}
    assert "_meta" not in tools["plain_tool"]


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("capabilities", [{}, {"extensions": {EXTENSION: {}}},
                                          {"extensions": {EXTENSION: {"mimeTypes": ["text/html"]}}}])
async def test_a_client_that_did_not_declare_views_gets_the_view_metadata_but_no_app_only_tool(
        version: str, capabilities: dict[str, Any]) -> None:
    tools = by_name(await call(version, "tools/list", capabilities=capabilities))
    assert set(tools) == {"show_book", "show_shelf", "plain_tool"}
    # Inert for a client without views; what a host that shows them without declaring needs.
    assert tools["show_book"]["_meta"]["ui"] == {"resourceUri": "ui://views/show_book"}
    assert tools["show_book"]["_meta"]["ui/resourceUri"] == "ui://views/show_book"
    with pytest.raises(McpError) as refused:  # not callable either: as if it did not exist
        await call(version, "tools/call", {"name": "lend_from_view", "arguments": {"title": "Kindred"}},
                   capabilities=capabilities)
    assert refused.value.code == -32602


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("capabilities", [SHOWS, {}])
async def test_the_result_is_complete_with_or_without_a_view(version: str, capabilities: dict[str, Any]) -> None:
    result = await call(version, "tools/call", {"name": "show_book", "arguments": {"title": "Kindred"}},
                        capabilities=capabilities)
    assert result["structuredContent"] == {"title": "Kindred", "available": True}
    assert "Kindred" in result["content"][0]["text"]


@pytest.mark.parametrize("version", ERAS)
async def test_views_are_listed_as_views_with_their_security_metadata(version: str) -> None:
    resources = {item["uri"]: item for item in (await call(version, "resources/list"))["resources"]}
    shelf, card = resources["ui://views/shelf"], resources["ui://views/show_book"]
    assert shelf["mimeType"] == card["mimeType"] == MIME_TYPE
    assert shelf["_meta"]["ui"] == {
        "csp": {"connectDomains": ["https://api.example.org", "wss://live.example.org:8443"]},
        "permissions": {"clipboardWrite": {}}, "prefersBorder": True}
    assert card["_meta"]["ui"] == {"csp": {"resourceDomains": ["https://covers.example.org"]}}


@pytest.mark.parametrize("version", ERAS)
async def test_a_view_reads_as_one_self_contained_page_for_the_user(version: str) -> None:
    result = await call(version, "resources/read", {"uri": "ui://views/show_book"})
    [content] = result["contents"]
    assert content["uri"] == "ui://views/show_book" and content["mimeType"] == MIME_TYPE
    page = content["text"]
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "For a guest" in page  # rendered for the requesting user
    assert "globalThis.McpApps=" in page and "<script src" not in page  # the SDK inline, no CDN
    assert content["_meta"]["ui"]["csp"] == {"resourceDomains": ["https://covers.example.org"]}
    if version == MODERN:
        assert result["cacheScope"] == "private"


@pytest.mark.parametrize("version", ERAS)
async def test_the_view_of_a_tool_the_user_may_not_use_is_not_found(version: str) -> None:
    from django.contrib.auth.models import User

    listed = {item["uri"] for item in (await call(version, "resources/list"))["resources"]}
    assert "ui://views/my_card" not in listed and "ui://views/show_book" in listed
    with pytest.raises(McpError, match="not found"):
        await call(version, "resources/read", {"uri": "ui://views/my_card"})

    reader = User(username="ada")  # signed in: the tool, and so its view, are there
    listed = {item["uri"] for item in (await call(version, "resources/list", user=reader))["resources"]}
    assert "ui://views/my_card" in listed
    page = (await call(version, "resources/read", {"uri": "ui://views/my_card"}, user=reader))["contents"][0]["text"]
    assert "For ada" in page and '<html lang="en">' in page  # LANGUAGE_CODE en-us, as supported


async def test_a_view_renders_in_the_users_language() -> None:
    from django.contrib.auth.models import User

    reader = User(username="amelie")
    reader.language = "fr"  # as a user model with a language field has it (template prompts read it too)
    page = (await call(MODERN, "resources/read", {"uri": "ui://views/show_book"}, user=reader))["contents"][0]["text"]
    assert '<html lang="fr">' in page


@pytest.mark.parametrize("version", ERAS)
async def test_app_only_tools_for_every_client_serves_them_to_clients_that_declare_nothing(
        version: str, settings: Any) -> None:
    settings.DJANGO_MCP = {**getattr(settings, "DJANGO_MCP", {}), "APP_ONLY_TOOLS_FOR_EVERY_CLIENT": True}
    tools = by_name(await call(version, "tools/list", capabilities={}))
    assert tools["lend_from_view"]["_meta"]["ui"] == {"visibility": ["app"]}
    called = await call(version, "tools/call", {"name": "lend_from_view", "arguments": {"title": "Kindred"}},
                        capabilities={})
    assert called["content"][0]["text"] == "Lent Kindred."


async def test_the_server_offers_the_extension_in_both_eras() -> None:
    discovered = await call(MODERN, "server/discover")
    assert discovered["capabilities"]["extensions"][EXTENSION] == {}
    initialize = {"protocolVersion": LEGACY, "capabilities": SHOWS, "clientInfo": {"name": "t", "version": "1"}}
    done = handshake(dispatcher_for(views_site), initialize, AnonymousUser())
    assert done.result["capabilities"]["extensions"][EXTENSION] == {}
    # ... and keeps what the client declared, for the session's later requests (SEP-2133).
    assert done.client_capabilities["extensions"] == SHOWS["extensions"]


@pytest.mark.parametrize("csp, message", [
    ({"connectDomains": ["https://api.example.org/path"]}, "not an origin"),
    ({"connectDomains": ["https://user:secret@api.example.org"]}, "not an origin"),
    ({"resourceDomains": ["*"]}, "not an origin"),
    ({"resourceDomains": ["'self'"]}, "not an origin"),
    ({"resourceDomains": ["data:"]}, "not an origin"),
    ({"frameDomains": "https://a.example.org"}, "must be a list"),
    ({"scriptDomains": ["https://a.example.org"]}, "unknown csp keys"),
])
def test_a_view_declaring_more_than_origins_is_refused_at_registration(csp: dict[str, Any], message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        type("BadView", (View,), {"uri": "ui://views/bad", "template_name": "ui_tests/book_card.html", "csp": csp,
                                  "__module__": __name__})()


def test_wildcard_subdomains_and_ports_are_origins() -> None:
    view = type("GoodView", (View,), {"uri": "ui://views/good", "template_name": "ui_tests/book_card.html",
                                      "csp": {"resourceDomains": ["https://*.example.org", "http://127.0.0.1:8000"]},
                                      "__module__": __name__})()
    assert view.ui_meta()["csp"]["resourceDomains"] == ["https://*.example.org", "http://127.0.0.1:8000"]


@pytest.mark.parametrize("attributes, message", [
    ({"uri": "library://card"}, "must start with 'ui://'"),
    ({"permissions": ["usb"]}, "unknown permissions"),
    ({"template_name": None}, "needs a template_name"),
])
def test_other_mistakes_in_a_view_are_refused(attributes: dict[str, Any], message: str) -> None:
    options = {"uri": "ui://views/bad", "template_name": "ui_tests/book_card.html", **attributes,
               "__module__": __name__}
    with pytest.raises(ImproperlyConfigured, match=message):
        type("BadView", (View,), options)()


def test_checks_name_unknown_visibility_and_views_the_site_does_not_serve() -> None:
    from django_mcp.sites import McpSite

    site = McpSite("views-checks")
    site.tool(name="odd", visibility=["everyone"])(lambda: "x")
    site.tool(name="lost", view="ui://views-checks/nowhere")(lambda: "x")
    found = {message.id for message in check_tool_views() if "views-checks" in message.msg}
    assert found == {"django_mcp.E005", "django_mcp.E006"}


def test_checks_name_an_unregistered_view_class_and_a_bad_view_csp() -> None:
    from django_mcp.sites import McpSite

    class Unregistered(View):
        uri = "ui://views-checks-2/unregistered"
        template_name = "ui_tests/book_card.html"

    site = McpSite("views-checks-2")
    site.tool(name="unserved", view=Unregistered)(lambda: "x")
    site.tool(name="leaky", view="ui_tests/book_card.html", view_csp={"connectDomains": ["https://a.example/x"]})(
        lambda: "x")
    found = {(message.id, message.msg.split("'")[1]) for message in check_tool_views()
             if "views-checks-2" in message.msg}
    assert found == {("django_mcp.E006", "unserved"), ("django_mcp.E007", "leaky")}


async def test_a_tool_view_with_a_bad_csp_costs_that_view_not_the_listing(caplog: Any) -> None:
    from django_mcp.sites import McpSite
    from django_mcp.ui.tool_views import ToolViews

    site = McpSite("views-bad-csp")
    site.add_source(ToolViews(site))
    site.tool(name="leaky", view="ui_tests/book_card.html", view_csp={"connectDomains": ["https://a.example/x"]})(
        lambda: "x")
    site.tool(name="fine", view="ui_tests/book_card.html")(lambda: "x")
    listed = await dispatcher_for(site).call("resources/list", {}, context(LEGACY, SHOWS))
    assert [item["uri"] for item in listed["resources"]] == ["ui://views-bad-csp/fine"]
    assert "The view of the tool 'leaky' is not served" in caplog.text


@pytest.mark.parametrize("version", ERAS)
async def test_view_csp_adds_the_projects_origins_to_every_view(version: str, settings: Any) -> None:
    settings.DJANGO_MCP = {**getattr(settings, "DJANGO_MCP", {}),
                           "VIEW_CSP": {"resourceDomains": ["https://fonts.example.org", "https://covers.example.org"]}}
    resources = {item["uri"]: item for item in (await call(version, "resources/list"))["resources"]}
    # Its own first, each origin once; a view that declared nothing gets the project's.
    assert resources["ui://views/show_book"]["_meta"]["ui"]["csp"] == {
        "resourceDomains": ["https://covers.example.org", "https://fonts.example.org"]}
    assert resources["ui://views/shelf"]["_meta"]["ui"]["csp"] == {
        "connectDomains": ["https://api.example.org", "wss://live.example.org:8443"],
        "resourceDomains": ["https://fonts.example.org", "https://covers.example.org"]}
    read = await call(version, "resources/read", {"uri": "ui://views/my_card"}, user=_reader())
    assert read["contents"][0]["_meta"]["ui"] == {
        "csp": {"resourceDomains": ["https://fonts.example.org", "https://covers.example.org"]}}


async def test_a_view_csp_setting_that_is_not_origins_is_an_error_and_adds_nothing(settings: Any, caplog: Any) -> None:
    from django_mcp.ui.checks import check_view_csp_setting

    settings.DJANGO_MCP = {**getattr(settings, "DJANGO_MCP", {}), "VIEW_CSP": {"connectDomains": ["*"]}}
    assert [message.id for message in check_view_csp_setting()] == ["django_mcp.E008"]
    resources = {item["uri"]: item for item in (await call(MODERN, "resources/list"))["resources"]}
    assert resources["ui://views/show_book"]["_meta"]["ui"]["csp"] == {
        "resourceDomains": ["https://covers.example.org"]}
    assert "is not an origin" in caplog.text


def _reader() -> Any:
    from django.contrib.auth.models import User

    return User(username="ada")
