"""
The short listing of a site with tool search (``django_mcp/tool_search/listing.py``): pinned tools
the request may see, then search_tools and call_tool; every tool still callable by name.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ImproperlyConfigured

from django_mcp.sites import McpSite
from django_mcp.test import ErrorResponse, McpClient
from django_mcp.tool_search import ToolSearch, enable_tool_search

from .catalogue import make_tools
from .sites import full_site, search, search_site, switches

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss(django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("boss")
    user.user_permissions.add(Permission.objects.get(codename="view_user", content_type__app_label="auth"))
    return user


def client(user: Any = None, protocol_version: str | None = None) -> McpClient:
    made = McpClient(site=search_site) if protocol_version is None else McpClient(protocol_version, site=search_site)
    if user is not None:
        made.force_authenticate(user)
    return made


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
def test_the_listing_is_the_pinned_tools_each_may_see_then_search(boss: Any, protocol_version: str) -> None:
    assert [tool["name"] for tool in client(None, protocol_version).list_tools()] == [
        "get_book", "search_tools", "call_tool"]  # summarize_payroll needs auth.view_user; not_a_tool is none
    assert [tool["name"] for tool in client(boss, protocol_version).list_tools()] == [
        "get_book", "summarize_payroll", "search_tools", "call_tool"]
    assert len(McpClient(site=full_site).list_tools()) == 460  # without search: all but payroll's and audit's


def test_the_listed_entries_are_the_tools_own_definitions() -> None:
    listed = {tool["name"]: tool for tool in client().list_tools()}
    full = {tool["name"]: tool for tool in McpClient(site=full_site).list_tools()}
    assert listed["get_book"] == full["get_book"]
    assert listed["search_tools"]["inputSchema"]["required"] == ["query"]
    assert listed["search_tools"]["annotations"]["readOnlyHint"] is True
    assert "outputSchema" in listed["search_tools"] and listed["call_tool"]["inputSchema"]["required"] == ["name"]


def test_a_switched_off_pinned_tool_leaves_the_listing() -> None:
    switches.off.add("get_book")
    try:
        assert [tool["name"] for tool in client().list_tools()] == ["search_tools", "call_tool"]
    finally:
        switches.off.discard("get_book")


def test_a_cursor_is_refused_as_core_listings_refuse_a_stale_one() -> None:
    with pytest.raises(ErrorResponse) as refused:
        client().request("tools/list", {"cursor": "made-before-tool-search"})
    assert refused.value.code == -32602 and refused.value.message == "Invalid cursor"


def test_every_tool_stays_callable_by_name_behind_its_permission(boss: Any) -> None:
    assert client().call_tool("archive_vehicle", {"id": 4}).text == "archive_vehicle ran with ['id']"
    assert client(boss).call_tool("delete_payroll", {"id": 1}).text == "delete_payroll ran with ['id']"
    with pytest.raises(ErrorResponse) as refused:
        client().call_tool("delete_payroll", {"id": 1})
    assert refused.value.code == -32602 and refused.value.message == "Unknown tool: delete_payroll"


def test_options_are_checked_when_tool_search_is_turned_on() -> None:
    site = McpSite("tool_search_options")
    with pytest.raises(ImproperlyConfigured, match="max_results"):
        enable_tool_search(site, max_results=0)
    with pytest.raises(ImproperlyConfigured, match="list of tool names"):
        ToolSearch(site, pinned="get_book")
    for tool in make_tools(3):
        site.add(tool)
    enable_tool_search(site, search_tool_name="find_tools", call_tool_name=None)
    assert [tool["name"] for tool in McpClient(site=site).list_tools()] == ["find_tools"]
    assert "call_tool" not in McpClient(site=site).call_tool("find_tools", {"query": "book"}).text
    assert search.own_names() == ["search_tools", "call_tool"]


def test_the_lint_counts_what_each_audience_is_listed_and_points_to_tool_search() -> None:
    from django_mcp.lint import lint_site

    [registered, anonymous] = [finding for finding in lint_site(full_site) if finding.id == "mcp.T004"]
    assert registered.message.startswith("500 tools are registered") and "tool search" in registered.hint
    assert anonymous.message.startswith("460 tools are listed to anonymous")
    assert not [finding for finding in lint_site(search_site) if finding.id == "mcp.T004"]


def test_mcp_list_says_the_unlisted_tools_may_be_found_by_search() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("mcp_list", "--site", "tests.tool_search.sites.search_site", stdout=out)
    text = out.getvalue()
    assert "\nTools (3)\n" in text
    assert "Not listed to an anonymous user: found through tool search, or hidden by a permission" in text
    assert "archive_vehicle" in text and "Not offered" not in text
