"""The sessions' admin (django_mcp/admin.py): staff see sessions, not the tombstones of ended ones."""

import pytest
from django.urls import reverse

from django_mcp.models import McpSession

pytestmark = pytest.mark.django_db


def test_the_session_list_leaves_tombstones_out(admin_client):
    McpSession.objects.create(id="a" * 32, protocol_version="2025-11-25", user_key="user:1")
    McpSession.objects.create(id="b" * 32, protocol_version="", ended=True)
    page = admin_client.get(reverse("admin:django_mcp_mcpsession_changelist"))
    assert page.status_code == 200
    assert [session.id for session in page.context["cl"].result_list] == ["a" * 32]
