"""The pytest plugin shipped in the package: registered by the installed package, its fixtures usable as they are."""

from importlib.metadata import entry_points

import pytest

from django_mcp.test import McpClient


def test_the_installed_package_registers_the_plugin_with_pytest():
    plugins = {entry.name: entry.value for entry in entry_points(group="pytest11")}
    assert plugins.get("django_mcp") == "django_mcp.test.pytest_plugin"


def test_pytest_loaded_it(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("django_mcp")


@pytest.mark.django_db
def test_mcp_client_is_an_anonymous_client_of_the_newest_revision(mcp_client):
    assert isinstance(mcp_client, McpClient) and mcp_client.protocol_version == "2026-07-28"
    assert mcp_client.call_tool("whoami").text == "anonymous"


@pytest.mark.django_db
def test_mcp_client_factory_takes_the_clients_arguments(mcp_client_factory, django_user_model):
    client = mcp_client_factory("2025-11-25", elicitation={"action": "accept", "content": {"name": "Ada"}})
    client.force_authenticate(django_user_model.objects.create_user("ada"))
    assert client.call_tool("ask_name").text == "Hello, Ada!"
    assert client.call_tool("whoami").text == "ada"


@pytest.mark.django_db(transaction=True)
async def test_the_fixtures_serve_async_tests_with_transactional_db(mcp_client, django_user_model):
    mcp_client.force_authenticate(await django_user_model.objects.acreate(username="bea"))
    assert (await mcp_client.acall_tool("whoami")).text == "bea"
