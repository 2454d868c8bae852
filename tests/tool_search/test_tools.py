"""
search_tools and call_tool (``django_mcp/tool_search/tools.py``) for users of different
permissions: a search never finds, and the proxy never calls, a tool the user may not see.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission

from django_mcp.test import McpClient

from .catalogue import definitions
from .sites import search_site, switches

pytestmark = pytest.mark.django_db

RESTRICTED = {spec["name"] for spec in definitions() if spec["restricted"]}


@pytest.fixture
def boss(django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("boss")
    user.user_permissions.add(Permission.objects.get(codename="view_user", content_type__app_label="auth"))
    return user


def client(user: Any = None, protocol_version: str = "2026-07-28") -> McpClient:
    made = McpClient(protocol_version, site=search_site)
    if user is not None:
        made.force_authenticate(user)
    return made


def found(result: Any) -> list[str]:
    assert not result.is_error, result.text
    return [tool["name"] for tool in result.structured["tools"]]


def record_of(name: str) -> str:
    return name.split("_", 1)[1].removesuffix("s")


@pytest.mark.parametrize("protocol_version", ["2025-06-18", "2026-07-28"])
def test_a_search_finds_the_tool_that_does_it_first(protocol_version: str) -> None:
    def first(query: str) -> str:
        return found(client(protocol_version=protocol_version).call_tool("search_tools", {"query": query}))[0]

    assert first("export invoices to a spreadsheet") == "export_invoices"
    assert first("merge duplicate customers") == "merge_customers"
    assert first("approve timesheet hours") == "approve_timesheet"
    assert first("email subscribers") == "notify_newsletter"
    assert first("who changed what").startswith("update_")  # "Change fields of …"; the audit log is hidden
    # Words of a record's description find its tools.
    assert {record_of(name) for name in found(client().call_tool("search_tools", {"query": "tracking number"}))} \
        == {"shipment"}


def test_each_match_is_a_whole_definition_and_the_limit_holds() -> None:
    result = client().call_tool("search_tools", {"query": "invoice", "limit": 3})
    assert len(result.structured["tools"]) == 3 and result.structured["matched"] == 20
    first = result.structured["tools"][0]
    assert set(first) >= {"name", "title", "description", "inputSchema", "annotations"}
    assert len(found(client().call_tool("search_tools", {"query": "invoice"}))) == 8  # max_results
    assert client().call_tool("search_tools", {"query": "invoice", "limit": 51}).is_error


def test_a_search_never_reveals_a_tool_the_user_may_not_see(boss: Any) -> None:
    for query in ("payroll salaries", "audit log who changed what", "summarize_payroll"):
        assert not set(found(client().call_tool("search_tools", {"query": query, "limit": 50}))) & RESTRICTED
    assert {record_of(name) for name in found(client(boss).call_tool("search_tools", {"query": "payroll salaries"}))} \
        == {"payroll"}
    assert client().call_tool("search_tools", {"query": "salary"}).structured == {"tools": [], "matched": 0}


def test_a_switched_off_tool_is_not_found() -> None:
    assert "export_invoices" in found(client().call_tool("search_tools", {"query": "export invoices"}))
    switches.off.add("export_invoices")
    try:
        assert "export_invoices" not in found(client().call_tool("search_tools", {"query": "export invoices",
                                                                                  "limit": 50}))
    finally:
        switches.off.discard("export_invoices")


def test_the_search_never_finds_itself_and_wants_a_query() -> None:
    assert not {"search_tools", "call_tool"} & set(found(client().call_tool(
        "search_tools", {"query": "search tools call tool", "limit": 50})))
    empty = client().call_tool("search_tools", {"query": "  "})
    assert empty.is_error and "Give a query" in empty.text


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
def test_the_proxy_calls_a_found_tool_as_the_user(boss: Any, protocol_version: str) -> None:
    result = client(protocol_version=protocol_version).call_tool(
        "call_tool", {"name": "archive_vehicle", "arguments": {"id": 4}})
    assert not result.is_error and result.text == "archive_vehicle ran with ['id']"
    assert client(boss).call_tool("call_tool", {"name": "delete_payroll"}).text == "delete_payroll ran with []"


def test_the_proxy_refuses_what_the_user_may_not_call_as_unknown() -> None:
    hidden = client().call_tool("call_tool", {"name": "delete_payroll", "arguments": {"id": 1}})
    missing = client().call_tool("call_tool", {"name": "no_such_tool"})
    assert hidden.is_error and hidden.text == "Unknown tool: delete_payroll. Use search_tools to find one."
    assert missing.text == "Unknown tool: no_such_tool. Use search_tools to find one."
    switches.off.add("archive_vehicle")
    try:
        assert client().call_tool("call_tool", {"name": "archive_vehicle"}).is_error
    finally:
        switches.off.discard("archive_vehicle")


def test_the_proxy_wants_a_name_and_an_object_and_does_not_call_itself() -> None:
    assert client().call_tool("call_tool", {"name": "call_tool", "arguments": {}}).text == \
        "call_tool is called directly, not through call_tool."
    assert client().call_tool("call_tool", {"name": "search_tools", "arguments": {"query": "x"}}).is_error
    for wrong in ({}, {"name": 3}, {"name": "get_book", "arguments": [1]}):
        result = client().call_tool("call_tool", wrong)
        assert result.is_error and "give name (a string) and arguments (an object)" in result.text
