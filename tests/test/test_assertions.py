"""The assertions of django_mcp.test as pytest functions: each passes when it should, and fails saying why when not."""

import pytest

from django_mcp.test import (McpClient, aassert_call_refused, aassert_structured_valid, aassert_tool_hidden,
                             aassert_tool_listed, assert_call_refused, assert_notified, assert_structured_valid,
                             assert_tool_hidden, assert_tool_listed)
from tests.catalogue.models import Writer
from tests.test import shelf


pytestmark = pytest.mark.django_db


@pytest.fixture
def client():
    return McpClient(app=shelf.application())


def test_listed_and_hidden_follow_the_permissions(client, django_user_model):
    assert assert_tool_listed(client, "count_writers")["annotations"]["readOnlyHint"] is True
    assert_tool_hidden(client, "members_only")
    with pytest.raises(AssertionError, match="'members_only' is not listed for this client; listed: "):
        assert_tool_listed(client, "members_only")
    client.force_authenticate(django_user_model.objects.create_user("ada"))
    assert_tool_listed(client, "members_only")
    with pytest.raises(AssertionError, match="'members_only' is listed for this client"):
        assert_tool_hidden(client, "members_only")


def test_call_refused_checks_code_status_and_message(client, django_user_model):
    error = assert_call_refused(client, "members_only", code=-32602, message="members_only")
    assert error.status in (200, 400)
    with pytest.raises(AssertionError, match="not -32000"):
        assert_call_refused(client, "members_only", code=-32000)
    with pytest.raises(AssertionError, match="does not contain 'elsewhere'"):
        assert_call_refused(client, "members_only", message="elsewhere")
    with pytest.raises(AssertionError, match="was not refused"):
        assert_call_refused(client, "count_writers")


def test_scopes_forced_on_the_client_reach_the_permission(client, django_user_model):
    ada = django_user_model.objects.create_user("ada")
    client.force_authenticate(ada, scopes=["shelf:read"])
    assert_call_refused(client, "rearrange")
    client.force_authenticate(ada, scopes=["shelf:read", "shelf:write"])
    assert client.call_tool("rearrange").text == "rearranged"


def test_structured_content_is_checked_against_the_output_schema(client, django_user_model):
    Writer.objects.create(name="Ursula", slug="ursula")
    result = client.call_tool("count_writers")
    assert assert_structured_valid(client, "count_writers", result) == {"writers": 1}
    broken = client.call_tool("broken_promise")
    with pytest.raises(AssertionError, match="does not match its outputSchema: writers: 'many' is not of type"):
        assert_structured_valid(client, "broken_promise", broken)
    client.force_authenticate(django_user_model.objects.create_user("ada"))
    with pytest.raises(AssertionError, match="publishes no outputSchema"):
        assert_structured_valid(client, "members_only", client.call_tool("members_only"))


def test_notified_finds_a_notification_by_method_and_params():
    result = McpClient().call_tool("slow_steps", steps=2, delay=0)
    assert assert_notified(result, "notifications/progress", progress=2)["params"]["total"] == 2
    with pytest.raises(AssertionError, match="No notifications/progress with {'progress': 9}"):
        assert_notified(result, "notifications/progress", progress=9)
    with pytest.raises(AssertionError, match="No notifications/message was received"):
        assert_notified(result.notifications, "notifications/message")


@pytest.mark.django_db(transaction=True)
async def test_the_async_assertions(django_user_model):
    client = McpClient(app=shelf.application())
    await aassert_tool_listed(client, "count_writers")
    await aassert_tool_hidden(client, "members_only")
    await aassert_call_refused(client, "members_only", code=-32602)
    await Writer.objects.acreate(name="Ursula", slug="ursula")
    result = await client.acall_tool("count_writers")
    assert await aassert_structured_valid(client, "count_writers", result) == {"writers": 1}
