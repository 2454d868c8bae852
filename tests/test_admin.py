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


@pytest.fixture
def signed_session(db):
    from asgiref.sync import async_to_sync

    from django_mcp.stores.sessions import get_session_store

    async def open_one():
        store = get_session_store()
        state = await store.create(protocol_version="2025-11-25", client_capabilities={}, client_info=None,
                                   user_key="user:1")
        await store.flush()
        return state

    return async_to_sync(open_one)()


@pytest.mark.django_db(transaction=True)
def test_staff_ending_a_session_ends_it_for_every_worker(admin_client, signed_session, monkeypatch):
    from asgiref.sync import async_to_sync

    from django_mcp.stores import database_sessions
    from django_mcp.stores.sessions import get_session_store

    announced = []

    async def announce(key):
        announced.append(key)

    monkeypatch.setattr("django_mcp.transports.live_sessions.announce_change", announce)
    monkeypatch.setattr(database_sessions, "reaches_other_workers", lambda: True)
    url = reverse("admin:django_mcp_mcpsession_delete", args=[signed_session.id])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert announced == [signed_session.id]  # every worker's cached copy goes
    # Young enough for its signed id to stand alone: a tombstone keeps every worker refusing it.
    assert McpSession.objects.get(pk=signed_session.id).ended
    assert async_to_sync(get_session_store().get)(signed_session.wire_id) is None


@pytest.mark.django_db(transaction=True)
def test_staff_can_end_sessions_in_bulk(admin_client, signed_session):
    changelist = reverse("admin:django_mcp_mcpsession_changelist")
    answer = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [signed_session.id],
                                            "post": "yes"})
    assert answer.status_code == 302
    assert not McpSession.objects.filter(pk=signed_session.id).exists()  # one process: no tombstone needed
