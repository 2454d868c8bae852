"""
Saved queries: a call of the model query tool saved from the call log as a query tool in one
click, then served as a tool that runs its document as each calling user.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.utils import timezone

from django_mcp.call_log.models import McpToolCall
from django_mcp.query_tools.models import McpQueryTool
from django_mcp.query_tools.source import add_query_tool_source
from django_mcp.test import ErrorResponse, McpClient
from tests.model_resources.query.company import make_company, make_users
from tests.querying.models import Employee
from tests.querying.sites import site

# Committed: saving a query tool tells the workers' snapshots once its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

SENIORS_PER_DEPARTMENT = {"model": "employee", "filter": {"level__gte": 2}, "group_by": ["department"],
                          "aggregates": {"people": {"function": "count"}}, "order_by": ["department"]}


@pytest.fixture
def users() -> dict[str, Any]:
    add_query_tool_source(site)  # the test site serves the query tools saved for it
    make_company()
    return make_users()


def logged_call(arguments: Any, tool: str = "query_models", outcome: str = McpToolCall.OK) -> McpToolCall:
    return McpToolCall.objects.create(site=site.name, tool=tool, username="boss", arguments=arguments,
                                      outcome=outcome, duration_ms=3.0, created=timezone.now())


def test_a_call_is_saved_in_one_click_and_served_to_each_user_as_they_may_see(users: Any, client: Any) -> None:
    admin = get_user_model().objects.create_superuser("staff", password="pw")
    client.force_login(admin)
    call = logged_call(SENIORS_PER_DEPARTMENT)
    page = client.get(f"/admin/django_mcp_call_log/mcptoolcall/{call.pk}/change/").content.decode()
    action = f"/admin/django_mcp_query_tools/mcpquerytool/from-call/{call.pk}/"
    assert f'formaction="{action}" formmethod="post">Save as a query tool</button>' in page
    assert "&quot;level__gte&quot;: 2" in page  # the call log shows the query document

    response = client.post(action)
    row = McpQueryTool.objects.get(site=site.name)
    assert response.status_code == 302 and response["Location"].endswith(f"/mcpquerytool/{row.pk}/change/")
    assert (row.name, row.enabled, row.document) == (f"saved_query_{call.pk}", False, SENIORS_PER_DEPARTMENT)
    assert row.model == ContentType.objects.get_for_model(Employee)
    assert client.get(response["Location"]).status_code == 200  # the page where staff review and enable it

    row.name, row.enabled = "seniors_per_department", True
    row.save()
    clerk, boss = McpClient(site=site), McpClient(site=site)
    clerk.force_authenticate(users["clerk"])
    boss.force_authenticate(users["boss"])
    asked = clerk.call_tool("query_models", SENIORS_PER_DEPARTMENT).structured["rows"]
    saved = clerk.call_tool("seniors_per_department")
    assert not saved.is_error and saved.structured["rows"] == asked  # levels 2 and 3 only, for the clerk
    assert sum(r["people"] for r in asked) < sum(r["people"] for r in boss.call_tool("seniors_per_department")
                                                 .structured["rows"])
    assert len(clerk.call_tool("seniors_per_department", limit=2).structured["rows"]) == 2
    assert clerk.call_tool("seniors_per_department", model="region").is_error
    with pytest.raises(ErrorResponse, match="Unknown tool"):  # anonymous: no view_employee, as if it did not exist
        McpClient(site=site).call_tool("seniors_per_department")


def test_only_a_successful_call_of_the_query_tool_gets_the_button(users: Any, client: Any) -> None:
    admin = get_user_model().objects.create_superuser("staff", password="pw")
    client.force_login(admin)
    for call in (logged_call({"query": "x"}, tool="search_things"), logged_call({"model": "employee"},
                                                                                 outcome=McpToolCall.TOOL_ERROR)):
        page = client.get(f"/admin/django_mcp_call_log/mcptoolcall/{call.pk}/change/").content.decode()
        assert "Save as a query tool</button>" not in page
    refused = client.post(f"/admin/django_mcp_query_tools/mcpquerytool/from-call/{call.pk - 1}/", follow=True)
    assert "Only a call of the model query tool can be saved as a query tool." in refused.content.decode()
    broken = logged_call({"model": "employee", "fields": ["salary"]})
    refused = client.post(f"/admin/django_mcp_query_tools/mcpquerytool/from-call/{broken.pk}/", follow=True)
    assert "field &#x27;salary&#x27; is not exposed on employee" in refused.content.decode()
    assert not McpQueryTool.objects.exists()
    assert client.get(f"/admin/django_mcp_query_tools/mcpquerytool/from-call/{broken.pk}/").status_code == 405


def test_a_saved_document_is_checked_against_the_site() -> None:
    add_query_tool_source(site)
    row = McpQueryTool(site=site.name, name="bad", document={"model": "employee", "filter": {"salary__gt": 1}})
    with pytest.raises(ValidationError) as caught:
        row.full_clean()
    assert caught.value.message_dict["document"] == ["filter 'salary__gt': field 'salary' is not exposed on employee."]

