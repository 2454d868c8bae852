"""
The installed-package test's project testing its own tools (tests/packaging), with nothing but what
the wheel ships: pytest finds django_mcp's fixtures (mcp_client, mcp_client_factory) by itself,
beside pytest-django's.
"""

import pytest

from django_mcp.test import ErrorResponse, assert_tool_listed

from .models import Book


@pytest.mark.django_db
def test_anonymous_clients_are_challenged(mcp_client):
    with pytest.raises(ErrorResponse) as refused:
        mcp_client.list_tools()
    assert refused.value.status == 401
    assert "resource_metadata=" in refused.value.headers["www-authenticate"]


@pytest.mark.django_db
def test_a_signed_in_user_calls_whoami(mcp_client, django_user_model):
    mcp_client.force_authenticate(django_user_model.objects.create_user("ada"), scopes=["mcp:tools"])
    assert assert_tool_listed(mcp_client, "whoami")["annotations"] == {"readOnlyHint": True}
    assert mcp_client.call_tool("whoami").text == "ada mcp:tools"


@pytest.mark.django_db
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_books_of_this_test_are_resources(mcp_client_factory, django_user_model, version):
    book = Book.objects.create(title="The Left Hand of Darkness")
    client = mcp_client_factory(version)
    client.force_authenticate(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    uri = next(uri for uri in client.list_resources().uris if uri.endswith(f"/{book.pk}"))
    assert "The Left Hand of Darkness" in client.read_resource(uri).text
