"""
The query tool in process (``django_mcp.test.McpClient``): what it refuses and how, row-level rules
through relations, limits and caps, who is offered it, and the options it checks.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_mcp.model_resources import ModelQueryTool, ModelResource
from django_mcp.permissions import DjangoObjectPermissions
from django_mcp.sites import McpSite
from django_mcp.test import McpClient
from tests.querying.models import Department, Employee
from tests.querying.sites import site

from .company import make_company, make_users

pytestmark = pytest.mark.django_db


@pytest.fixture
def users() -> dict[str, Any]:
    make_company()
    return make_users()


def client_for(user: Any, on: Any = site) -> McpClient:
    client = McpClient(site=on)
    if user is not None:
        client.force_authenticate(user)
    return client


def rows(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.text
    return result.structured["rows"]


@pytest.mark.parametrize(("document", "message"), [
    ({"model": "employee", "fields": ["name", "salary"]}, "fields 'salary': field 'salary' is not exposed on employee."),
    ({"model": "employee", "filter": {"salary__gt": 1}}, "field 'salary' is not exposed on employee"),
    ({"model": "department", "aggregates": {"b": {"function": "sum", "field": "budget"}}},
     "field 'budget' is not exposed on department"),
    ({"model": "employee", "filter": {"badges__code": "B1"}},
     "relation 'badges' of employee leads to querying.badge, which is not a model you may query"),
    ({"model": "badge", "fields": ["employee__name"]}, "Unknown model 'badge'; models you may query: assignment, department, employee"),
    ({"model": "employee", "select": ["name"]}, "Unknown key 'select'; a query may have: model, filter"),
    ({"model": "employee", "fields": ["skills"]}, "'skills' leads to many skill rows"),
    ({"model": "assignment", "fields": ["employee__badges"]}, "relation 'badges' of employee leads to querying.badge"),
    ({"model": "employee", "filter": {"name__regex": "E.*"}}, "'regex' is not a lookup of name (text)"),
    ({"model": "employee", "filter": {"level__gt": "many"}}, "filter 'level__gt': “many” value must be an integer."),
    ({"model": "employee", "filter": {"hired__year__icontains": "20"}}, "'icontains' is not a lookup of hired"),
    ({"model": "employee", "having": {"n__gt": 1}}, "\"having\" filters groups by their aggregates"),
    ({"model": "employee", "aggregates": {"n": {"function": "median"}}}, "\"function\" is one of count, sum"),
    ({"model": "employee", "aggregates": {"n": {"function": "sum", "field": "name"}}},
     "sum needs a numeric field; name is text"),
    ({"model": "employee", "limit": 1000}, "\"limit\" is a whole number from 1 to 100."),
    ({"model": "employee", "filter": {"or": []}}, "'or' takes a non-empty list of conditions"),
    ({"model": "employee", "filter": {"assignments__count__icontains": 2}}, "a count takes exact, gt"),
])
def test_a_query_that_does_not_fit_is_a_tool_error_saying_what_to_change(users: Any, document: Any,
                                                                        message: str) -> None:
    result = client_for(users["boss"]).call_tool("query_models", document)
    assert result.is_error and message in result.text, result.text


def test_a_model_the_user_may_not_read_refuses_the_whole_query(users: Any) -> None:
    clerk = client_for(users["clerk"])
    refused = clerk.call_tool("query_models", {"model": "employee", "fields": ["name", "department__name"]})
    assert refused.is_error and refused.text == "You may not read department rows, so this query cannot use them."
    # The foreign key's own value is a field of employee: no department row is read.
    assert rows(clerk.call_tool("query_models", {"model": "employee", "fields": ["department"], "limit": 1}))
    guest = client_for(users["guest"])
    assert guest.call_tool("query_models", {"model": "skill", "filter": {"employees__level": 1}}).is_error
    assert rows(guest.call_tool("query_models", {"model": "region", "fields": ["name"]}))


def test_row_rules_hold_through_every_relation(users: Any) -> None:
    """The clerk sees employees of levels 1 to 3 and assignments under 30 hours, however they are reached."""
    boss, clerk = client_for(users["boss"]), client_for(users["clerk"])
    senior = {"model": "skill", "filter": {"employees__level__gt": 3}, "fields": ["name"]}
    assert rows(boss.call_tool("query_models", senior)) and rows(clerk.call_tool("query_models", senior)) == []
    counted = {"model": "employee", "filter": {"assignments__count__gte": 1}, "fields": ["id"]}
    by_clerk = {row["id"] for row in rows(clerk.call_tool("query_models", counted))}
    visible = set(Employee.objects.filter(level__lte=3, assignments__hours__lt=30).values_list("pk", flat=True))
    assert by_clerk == visible
    # A column read through a hidden row drops the row: no assignment of a senior employee shows.
    names = rows(clerk.call_tool("query_models", {"model": "assignment", "fields": ["employee__name", "hours"]}))
    allowed = set(Employee.objects.filter(level__lte=3).values_list("name", flat=True))
    assert names and {row["employee__name"] for row in names} <= allowed
    assert all(row["hours"] < 30 for row in names)
    # Aggregates count permitted rows only.
    total = rows(clerk.call_tool("query_models", {"model": "assignment", "aggregates": {
        "n": {"function": "count"}, "hours": {"function": "max", "field": "hours"}}}))
    assert total[0]["hours"] < 30


def test_a_limit_says_more_match_and_the_text_is_a_table(users: Any) -> None:
    result = client_for(users["boss"]).call_tool("query_models", {"model": "employee", "fields": ["name", "level"],
                                                                  "order_by": ["-level", "name"], "limit": 2})
    assert result.structured == {"model": "employee", "columns": ["name", "level"], "more": True,
                                 "truncated": False, "rows": [{"name": "E05", "level": 6}, {"name": "E11", "level": 6}]}
    assert result.text == ("| name | level |\n|---|---|\n| E05 | 6 |\n| E11 | 6 |\n\n"
                           "2 rows; more match: raise \"limit\", filter further, or aggregate.")


def test_answers_are_cut_to_the_size_cap(users: Any) -> None:
    from tests.querying.slow import private_site

    result = client_for(users["boss"], private_site).call_tool("query_models", {"model": "department"})
    assert result.structured["truncated"] is True and 0 < len(result.structured["rows"]) < 5
    assert "rows left out to keep the answer small" in result.text


def test_the_tool_is_offered_to_those_who_may_read_a_queryable_model(users: Any) -> None:
    from tests.querying.slow import private_site

    assert "query_models" not in [tool["name"] for tool in client_for(None, private_site).list_tools()]
    assert "query_models" not in [tool["name"] for tool in client_for(users["clerk"], private_site).list_tools()]
    assert "query_models" in [tool["name"] for tool in client_for(users["boss"], private_site).list_tools()]
    listed = {tool["name"]: tool for tool in client_for(users["guest"]).list_tools()}["query_models"]
    assert listed["annotations"]["readOnlyHint"] is True
    assert listed["inputSchema"]["properties"]["model"]["enum"] == ["assignment", "department", "employee",
                                                                    "project", "region", "skill"]
    assert "- employee: id (integer), name (text), level (integer)" in listed["description"]
    assert "salary" not in listed["description"] and "badges" not in listed["description"]


def test_dates_group_and_filter_by_their_parts(users: Any) -> None:
    boss = client_for(users["boss"])
    found = rows(boss.call_tool("query_models", {"model": "employee", "filter": {"hired__year__gte": 2022},
                                                 "group_by": ["hired__year"], "aggregates": {
                                                     "hired": {"function": "count"}}, "order_by": ["hired__year"]}))
    expected = {}
    for hired in Employee.objects.filter(hired__year__gte=2022).values_list("hired", flat=True):
        expected[hired.year] = expected.get(hired.year, 0) + 1
    assert found == [{"hired__year": year, "hired": count} for year, count in sorted(expected.items())]


def test_options_are_checked_when_the_tool_is_made() -> None:
    with pytest.raises(ImproperlyConfigured, match="unknown options timeout"):
        ModelQueryTool(timeout=3)
    with pytest.raises(ImproperlyConfigured, match="max_rows must be a positive whole number"):
        ModelQueryTool(max_rows=0)


def test_a_resource_with_object_permissions_cannot_be_queryable() -> None:
    class Guarded(ModelResource):
        fields = ["name"]
        permission_classes = [DjangoObjectPermissions]
        queryable = True

    with pytest.raises(ImproperlyConfigured, match="row-level rules belong in get_queryset"):
        McpSite("querying_guarded").register(Department, Guarded)
