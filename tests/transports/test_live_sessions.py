"""
Sessions as the transports load them (django_mcp/transports/live_sessions.py): a session served
from a worker's cache, its row never written because the worker that opened it stopped, gets its
row from the worker serving it, however long that worker's cache would keep it.
"""

import time

import pytest
from asgiref.sync import sync_to_async

from django_mcp.models import McpSession
from django_mcp.stores import database_sessions, pending_rows, session_ids, sessions
from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.stores.sessions import SessionState, get_session_store, new_session_id
from django_mcp.transports.live_sessions import load_live_session
from django_mcp.transports.session_cache import session_cache

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = {"protocol_version": "2025-11-25", "user_key": "user:42", "client_capabilities": {}, "client_info": None}


@pytest.fixture(autouse=True)
def many_workers(monkeypatch, settings):
    """Other processes serve the sessions too; this one keeps what it reads in its cache."""
    monkeypatch.setattr(database_sessions, "reaches_other_workers", lambda: True)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_CACHE_SECONDS": 3600.0}


def cached_unwritten(age: float) -> SessionState:
    """A session another worker opened ``age`` seconds ago and never wrote, in this worker's cache."""
    key, issued_at = new_session_id(), int(time.time() - age)
    wire_id = session_ids.sign(key, issued_at=issued_at, **FACTS)
    state = SessionState(id=key, log_level=None, subscriptions=[], wire_id=wire_id, stored=False,
                         issued_at=issued_at, **FACTS)
    session_cache.put(state)
    return state


async def rows(key: str) -> list[bool]:
    return await sync_to_async(lambda: list(McpSession.objects.filter(pk=key).values_list("ended", flat=True)))()


async def test_a_cached_session_still_without_a_row_gets_one_from_the_worker_serving_it():
    state = cached_unwritten(age=pending_rows.RESCUE_AFTER + 1)
    live = await load_live_session(state.wire_id)
    assert live is not None and live.state.stored
    assert await rows(state.id) == [False]


async def test_a_young_cached_session_is_served_without_a_write():
    state = cached_unwritten(age=0)
    live = await load_live_session(state.wire_id)
    assert live is not None and not live.state.stored
    assert await rows(state.id) == []


async def test_a_cached_session_ended_elsewhere_is_refused_when_its_row_is_due():
    state = cached_unwritten(age=pending_rows.RESCUE_AFTER + 1)
    await DatabaseSessionStore().delete(state.id, issued_at=state.issued_at)  # another worker's DELETE
    assert await load_live_session(state.wire_id) is None
    assert await rows(state.id) == [True]


async def test_with_the_database_away_the_session_is_served_and_the_row_tried_again(monkeypatch):
    from django.db import OperationalError

    state = cached_unwritten(age=pending_rows.RESCUE_AFTER + 1)

    async def database_away(_state):
        raise OperationalError("database away")

    monkeypatch.setattr(get_session_store(), "persist", database_away)
    live = await load_live_session(state.wire_id)
    assert live is not None and not live.state.stored
