"""The database session store for legacy sessions (MCP spec 2025-11-25, basic/transports#streamable-http; MCP security best practices)."""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from django_mcp.models import McpSession
from django_mcp.transports.live_sessions import LiveSession
from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.stores.sessions import (
    BaseSessionStore,
    get_session_store,
    new_session_id,
    user_key,
)


pytestmark = pytest.mark.django_db(transaction=True)


class StubUser:
    is_authenticated = True
    pk = 42


def test_new_session_id_is_random_visible_ascii():
    ids = {new_session_id() for _ in range(50)}
    assert len(ids) == 50
    for session_id in ids:
        assert len(session_id) == 32
        assert all(0x21 <= ord(ch) <= 0x7E for ch in session_id)


def test_user_key():
    assert user_key(None) == "anonymous"
    assert user_key(AnonymousUser()) == "anonymous"
    assert user_key(StubUser()) == "user:42"


async def create(store: DatabaseSessionStore, **overrides):
    """A session with its row written (a signed session's row is otherwise written a second later)."""
    fields = {"protocol_version": "2025-06-18", "client_capabilities": {"roots": {"listChanged": True}},
              "client_info": {"name": "client", "version": "1.0"}, "user_key": "user:42", **overrides}
    session = await store.create(**fields)
    await store.flush()
    return session


async def row(session_id: str) -> McpSession | None:
    return await sync_to_async(McpSession.objects.filter(pk=session_id).first)()


async def test_create_and_get():
    store = DatabaseSessionStore()
    session = await create(store)
    assert len(session.id) == 32
    assert session.protocol_version == "2025-06-18"
    assert session.log_level is None
    assert session.subscriptions == []
    stored = await row(session.id)
    assert stored is not None and stored.user_key == "user:42"

    loaded = await store.get(session.id)
    assert loaded is not None
    assert (loaded.id, loaded.protocol_version, loaded.user_key) == (session.id, "2025-06-18", "user:42")
    assert loaded.client_capabilities == {"roots": {"listChanged": True}}
    assert loaded.client_info == {"name": "client", "version": "1.0"}


async def test_get_unknown():
    assert await DatabaseSessionStore().get("no-such-session") is None


async def test_update():
    store = DatabaseSessionStore()
    session = await create(store)
    await store.update(session.id, log_level="warning", subscriptions=["books://1"])
    loaded = await store.get(session.id)
    assert loaded.log_level == "warning"
    assert loaded.subscriptions == ["books://1"]


async def test_live_session_methods_persist():
    store = DatabaseSessionStore()
    session = LiveSession(await create(store))
    await session.set_log_level("error")
    await session.subscribe("books://1")
    await session.subscribe("books://1")  # once only
    await session.subscribe("books://2")
    await session.unsubscribe("books://1")
    await session.unsubscribe("books://unknown")
    loaded = await store.get(session.id)
    assert loaded.log_level == "error"
    assert loaded.subscriptions == ["books://2"]


async def test_delete():
    store = DatabaseSessionStore()
    session = await create(store)
    assert await store.delete(session.id) is True
    assert await store.get(session.id) is None
    assert await store.delete(session.id) is False


async def test_idle_sessions_expire(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_IDLE_TIMEOUT_SECONDS": 30}
    store = DatabaseSessionStore()
    stale = await create(store)
    fresh = await create(store)
    old = timezone.now() - timedelta(seconds=31)
    await sync_to_async(McpSession.objects.filter(pk=stale.id).update)(last_seen_at=old)
    expired = await store.get(stale.id)
    assert expired.expired and expired.id == stale.id  # the caller announces the end
    assert await row(stale.id) is None  # deleted on sight
    assert await store.get(stale.id) is None
    assert (await store.get(fresh.id)).id == fresh.id


async def test_get_touches_a_session_seen_over_a_minute_ago(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_IDLE_TIMEOUT_SECONDS": 3600}
    store = DatabaseSessionStore()
    session = await create(store)
    old = timezone.now() - timedelta(minutes=10)
    await sync_to_async(McpSession.objects.filter(pk=session.id).update)(last_seen_at=old)
    assert await store.get(session.id) is not None
    touched = (await row(session.id)).last_seen_at
    assert touched > old + timedelta(minutes=9)


class CustomStore(BaseSessionStore):
    pass


async def test_base_store_methods_must_be_overridden():
    store = CustomStore()
    with pytest.raises(NotImplementedError):
        await store.get("x")
    with pytest.raises(NotImplementedError):
        await store.delete("x")
    with pytest.raises(NotImplementedError):
        await store.update("x")
    with pytest.raises(NotImplementedError):
        await store.create(protocol_version="2025-06-18", client_capabilities={}, client_info=None,
                           user_key="anonymous")


def test_get_session_store(settings):
    first = get_session_store()
    assert isinstance(first, DatabaseSessionStore)
    assert get_session_store() is first
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_STORE": "tests.stores.test_sessions.CustomStore"}
    assert isinstance(get_session_store(), CustomStore)
