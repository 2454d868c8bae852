"""
The statements a legacy session costs, written as SQL (django_mcp/stores/session_sql.py): the row
they write is the row the ORM reads back, the count follows the ORM's rules, and a delete takes the
session's stream events with it. Run on SQLite here and on PostgreSQL by the multi-worker tests.
"""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from django_mcp.models import McpEvent, McpSession
from django_mcp.stores import session_sql
from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.stores.sessions import TooManySessions
from tests.stores.test_sessions import create, row

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_inserted_row_reads_back_through_the_orm():
    before = timezone.now()
    session = await create(DatabaseSessionStore(), user_key="anonymous", client_address="10.0.0.7",
                           transport="http-sse", stream_channel="specific.abc!def")
    stored = await row(session.id)
    assert (stored.protocol_version, stored.user_key, stored.transport, stored.stream_channel) == (
        "2025-06-18", "anonymous", "http-sse", "specific.abc!def")
    assert stored.client_capabilities == {"roots": {"listChanged": True}}
    assert stored.client_info == {"name": "client", "version": "1.0"}
    assert (stored.client_address, stored.log_level, stored.subscriptions) == ("10.0.0.7", None, [])
    assert before <= stored.created_at == stored.last_seen_at <= timezone.now()


async def test_an_authenticated_session_keeps_no_address():
    session = await create(DatabaseSessionStore(), client_address="10.0.0.7")
    assert (await row(session.id)).client_address is None


async def test_the_count_is_per_principal_and_address_ignores_idle_sessions_and_stops_at_the_limit(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_IDLE_TIMEOUT_SECONDS": 60}
    store = DatabaseSessionStore()
    for _ in range(3):
        await create(store, user_key="anonymous", client_address="10.0.0.1")
    await create(store, user_key="anonymous", client_address="10.0.0.2")
    idle = await create(store, user_key="anonymous", client_address="10.0.0.1")
    long_ago = timezone.now() - timedelta(minutes=2)
    await sync_to_async(McpSession.objects.filter(pk=idle.id).update)(last_seen_at=long_ago)
    since = timezone.now() - timedelta(seconds=60)

    def count(user_key, address, limit=100):
        return session_sql.count_held(McpSession, user_key, address, since, limit)

    assert await sync_to_async(count)("anonymous", "10.0.0.1") == 3
    assert await sync_to_async(count)("anonymous", "10.0.0.1", limit=2) == 2
    assert await sync_to_async(count)("anonymous", "10.0.0.2") == 1
    assert await sync_to_async(count)("user:42", None) == 0
    await create(store)  # user:42, no address: IS NULL, not "= NULL"
    assert await sync_to_async(count)("user:42", None) == 1
    with pytest.raises(TooManySessions):
        await create(store, user_key="anonymous", client_address="10.0.0.1", max_per_owner=3)
    await create(store, user_key="anonymous", client_address="10.0.0.1", max_per_owner=4)


async def test_a_delete_takes_the_sessions_events_and_only_its_own():
    store = DatabaseSessionStore()
    gone, kept = await create(store), await create(store)
    for session, stream in ((gone, "a" * 16), (kept, "b" * 16)):
        await McpEvent.objects.acreate(session_id=session.id, stream_id=stream, seq=0)
    assert await store.delete(gone.id) is True
    assert await row(gone.id) is None
    assert [e.session_id async for e in McpEvent.objects.all()] == [kept.id]
    assert await store.delete(gone.id) is False


def test_the_events_are_deleted_by_plain_sql_in_the_same_transaction():
    assert session_sql._cascades(McpSession) == [McpEvent._meta.get_field("session").remote_field]
