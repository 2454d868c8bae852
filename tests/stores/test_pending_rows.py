"""
Signed sessions and the rows they are owed (django_mcp/stores/pending_rows.py, and the database
store's use of them): ``initialize`` writes nothing, the row follows, a session ended before
then costs nothing alone and leaves a tombstone where other workers could take its id.

"Another worker" here is a second store instance, as a second process would hold one, with the
store told that other processes share its sessions (as a channels_redis layer tells it). The
multi-worker tests (tests/transports/test_multi_worker.py) run the same over real processes.
"""

import asyncio
import threading
import time
from datetime import timedelta

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.utils import timezone

from django_mcp.models import McpSession
from django_mcp.stores import database_sessions, pending_rows, session_ids, session_sql, sessions
from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.stores.sessions import SessionState, new_session_id

pytestmark = pytest.mark.django_db(transaction=True)

FIELDS = {"protocol_version": "2025-11-25", "client_capabilities": {"sampling": {}},
          "client_info": {"name": "client", "version": "1.0"}, "user_key": "user:42"}


@pytest.fixture
def many_workers(monkeypatch):
    """The store believes other processes serve its sessions too."""
    monkeypatch.setattr(database_sessions, "reaches_other_workers", lambda: True)


async def row(key: str) -> McpSession | None:
    return await sync_to_async(McpSession.objects.filter(pk=key).first)()


async def test_initialize_writes_nothing_and_the_row_follows_within_a_second():
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    assert session_ids.is_signed(session.wire_id) and session_ids.key_of(session.wire_id) == session.id
    assert not session.stored and await row(session.id) is None
    assert (await store.get(session.wire_id)).client_info == {"name": "client", "version": "1.0"}
    deadline = time.monotonic() + 3 * pending_rows.WRITE_DELAY
    while await row(session.id) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    stored = await row(session.id)
    assert stored is not None and not stored.ended
    assert (stored.protocol_version, stored.user_key, stored.client_capabilities) == (
        "2025-11-25", "user:42", {"sampling": {}})


async def test_alone_a_session_ended_before_its_row_costs_nothing_and_stays_ended():
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    assert await store.delete(session.id, issued_at=session.issued_at) is True
    await store.flush()
    assert await sync_to_async(McpSession.objects.count)() == 0
    # Its signed id is still young and valid, but one process opened every session there is.
    assert await store.get(session.wire_id) is None


async def test_alone_a_signed_id_without_a_row_is_not_taken_for_a_session():
    """After a restart, say: what the process did not write, it does not remember either."""
    wire_id = session_ids.sign(new_session_id(), issued_at=int(time.time()), **FIELDS)
    assert await DatabaseSessionStore().get(wire_id) is None


async def test_alone_a_read_the_batch_writer_overtakes_finds_the_written_row(monkeypatch):
    """
    The writer takes a session's row (no longer owed) while a read of it is on its way, and
    commits it after the read found nothing: the read must not take the session for ended (a
    GET stream opening right then was refused 404 in the tutorial's test).
    """
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    read = store._get
    overtaken: list[bool] = []

    def read_then_be_overtaken(key, wire_id, facts):
        state = read(key, wire_id, facts)
        if not overtaken:  # once: what the writer does meanwhile, on its own
            overtaken.append(True)
            session_sql.write_batch(McpSession, [store.pending.take(key)])
        return state

    monkeypatch.setattr(store, "_get", read_then_be_overtaken)
    found = await store.get(session.wire_id)
    assert overtaken, "the read was never overtaken: the test proves nothing"
    assert found is not None and found.id == session.id


async def test_alone_a_read_while_persist_inserts_the_row_waits_for_it(monkeypatch):
    """
    persist() takes a session from what is owed and inserts its row; a read that runs meanwhile
    (a GET stream opening while the same client's logging/setLevel persists its session) finds
    neither the debt nor the row unless it waits for the insert: the tutorial's test saw that as
    a GET refused 404 right after initialize.
    """
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    inserting, go_on = threading.Event(), threading.Event()
    insert = session_sql.insert_unless_present

    def slow_insert(model, fields):
        inserting.set()
        go_on.wait(5)
        return insert(model, fields)

    async def in_request(coroutine):
        # Each in a request's own context, as the transports serve them: on SQLite each request's
        # queries then run on a thread of its own, so the read does not queue behind the insert.
        async with ThreadSensitiveContext():
            return await coroutine

    monkeypatch.setattr(session_sql, "insert_unless_present", slow_insert)
    persisting = asyncio.ensure_future(in_request(store.persist(session)))
    while not inserting.is_set():
        await asyncio.sleep(0.01)
    assert session.id not in store.pending.sessions  # taken, not yet written: the window
    reading = asyncio.ensure_future(in_request(store.get(session.wire_id)))
    await asyncio.sleep(0.1)
    assert not reading.done(), "the read answered before the insert was over"
    go_on.set()
    assert await persisting is True
    found = await reading
    assert found is not None and found.id == session.id


async def test_another_worker_serves_a_session_from_its_signed_id_before_the_row(many_workers):
    opener, other = DatabaseSessionStore(), DatabaseSessionStore()
    session = await opener.create(**FIELDS)
    loaded = await other.get(session.wire_id)
    assert loaded is not None and not loaded.stored
    assert (loaded.id, loaded.user_key, loaded.protocol_version) == (session.id, "user:42", "2025-11-25")
    assert loaded.client_capabilities == {"sampling": {}}
    assert await row(session.id) is None  # serving it wrote nothing


async def test_a_session_ended_before_its_row_leaves_a_tombstone_other_workers_respect(many_workers):
    opener, other = DatabaseSessionStore(), DatabaseSessionStore()
    session = await opener.create(**FIELDS)
    assert await opener.delete(session.id, issued_at=session.issued_at) is True
    assert (await row(session.id)).ended
    assert await other.get(session.wire_id) is None
    assert await opener.get(session.wire_id) is None


async def test_a_tombstone_written_by_another_worker_outlives_the_openers_late_write(many_workers):
    opener, other = DatabaseSessionStore(), DatabaseSessionStore()
    session = await opener.create(**FIELDS)
    seen_elsewhere = await other.get(session.wire_id)
    await other.delete(seen_elsewhere.id, issued_at=seen_elsewhere.issued_at)  # the DELETE went to the other worker
    await opener.flush()  # the opener's row comes after it, and must not revive the session
    assert (await row(session.id)).ended
    assert await opener.get(session.wire_id) is None


async def test_ending_a_written_session_keeps_a_tombstone_while_its_id_is_young(many_workers):
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    await store.flush()
    await store.delete(session.id, issued_at=session.issued_at)
    assert (await row(session.id)).ended
    assert await store.get(session.wire_id) is None
    old = await store.create(**FIELDS)
    await store.flush()
    await store.delete(old.id, issued_at=int(time.time()) - pending_rows.SIGNED_ONLY_SECONDS - 1)
    assert await row(old.id) is None  # its id cannot stand alone any more: no tombstone needed


async def test_a_signed_id_stands_alone_for_a_minute_only(many_workers):
    old = session_ids.sign(new_session_id(), issued_at=int(time.time()) - pending_rows.SIGNED_ONLY_SECONDS, **FIELDS)
    assert await DatabaseSessionStore().get(old) is None


async def test_an_unwritten_session_whose_worker_stopped_is_written_by_the_next(many_workers):
    key = new_session_id()
    wire_id = session_ids.sign(key, issued_at=int(time.time()) - pending_rows.RESCUE_AFTER - 1, **FIELDS)
    loaded = await DatabaseSessionStore().get(wire_id)
    assert loaded is not None and loaded.stored
    assert (await row(key)).user_key == "user:42"


async def test_persist_writes_the_row_now_and_refuses_an_ended_session(many_workers):
    opener, other = DatabaseSessionStore(), DatabaseSessionStore()
    session = await opener.create(**FIELDS)
    assert await opener.persist(session) is True and session.stored
    assert await row(session.id) is not None
    assert opener.pending.sessions == {}  # not written twice
    ended = await opener.create(**FIELDS)
    elsewhere = await other.get(ended.wire_id)
    await opener.delete(ended.id, issued_at=ended.issued_at)
    assert await other.persist(elsewhere) is False


async def test_unwritten_sessions_count_toward_the_principals_limit():
    store = DatabaseSessionStore()
    for _ in range(2):
        await store.create(**FIELDS, max_per_owner=2)
    with pytest.raises(sessions.TooManySessions):
        await store.create(**FIELDS, max_per_owner=2)
    await store.flush()  # written now: counted from the rows
    with pytest.raises(sessions.TooManySessions):
        await store.create(**FIELDS, max_per_owner=2)
    assert await sync_to_async(McpSession.objects.count)() == 2


async def test_rows_that_could_not_be_written_are_kept_and_written_later(monkeypatch, caplog):
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    real_write = store.pending.write

    async def database_away(rows):
        raise ConnectionError("database away")

    monkeypatch.setattr(store.pending, "write", database_away)
    await store.flush()
    assert "Could not write 1 MCP session rows" in caplog.text
    assert session.id in store.pending.sessions and await store.get(session.wire_id) is not None
    monkeypatch.setattr(store.pending, "write", real_write)
    await store.flush()
    assert await row(session.id) is not None and store.pending.sessions == {}


async def test_old_tombstones_are_swept_and_young_ones_kept(many_workers):
    store = DatabaseSessionStore()
    young, old = await store.create(**FIELDS), await store.create(**FIELDS)
    for session in (young, old):
        await store.delete(session.id, issued_at=session.issued_at)
    long_ago = timezone.now() - timedelta(seconds=2 * pending_rows.SIGNED_ONLY_SECONDS + 1)
    await sync_to_async(McpSession.objects.filter(pk=old.id).update)(created_at=long_ago)
    await store.clear_expired()
    assert await row(young.id) is not None and await row(old.id) is None


async def test_without_signed_ids_the_row_is_written_before_initialize_answers(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SIGNED_SESSION_IDS": False}
    session = await DatabaseSessionStore().create(**FIELDS)
    assert session.wire_id == session.id and not session_ids.is_signed(session.id) and session.stored
    assert await row(session.id) is not None


async def test_http_sse_sessions_keep_plain_ids_and_rows_at_once():
    session = await DatabaseSessionStore().create(**FIELDS, transport="http-sse", stream_channel="specific.x!y")
    assert session.wire_id == session.id and await row(session.id) is not None


def test_a_state_without_a_signed_id_is_named_by_its_key():
    state = SessionState(id="k", protocol_version="2025-11-25", client_capabilities={}, client_info=None,
                         log_level=None, subscriptions=[], user_key="anonymous")
    assert (state.wire_id, state.stored, state.issued_at) == ("k", True, None)


async def test_alone_a_session_ended_before_its_row_is_not_written_by_a_late_persist():
    """A GET stream that loaded the session just before its DELETE must not bring it back."""
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    await store.delete(session.id, issued_at=session.issued_at)
    assert await store.persist(session) is False
    assert await row(session.id) is None


async def test_a_written_session_outlives_a_secret_key_rotated_without_fallback(settings):
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    await store.flush()
    settings.SECRET_KEY = "a-rotated-secret-key-" + "z" * 40
    loaded = await store.get(session.wire_id)
    assert loaded is not None and loaded.id == session.id and loaded.user_key == "user:42"
    unwritten = await store.create(**FIELDS)
    settings.SECRET_KEY = "yet-another-secret-key-" + "w" * 40
    assert await store.get(unwritten.wire_id) is not None  # this worker still owes its row


async def test_alone_ending_a_written_session_deletes_its_row():
    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)
    await store.flush()
    assert await store.delete(session.id, issued_at=session.issued_at) is True
    assert await row(session.id) is None and await store.get(session.wire_id) is None


async def test_a_row_persist_could_not_write_stays_owed(monkeypatch):
    from django.db import OperationalError

    from django_mcp.stores import session_sql

    store = DatabaseSessionStore()
    session = await store.create(**FIELDS)

    def database_away(model, fields):
        raise OperationalError("database away")

    monkeypatch.setattr(session_sql, "insert_unless_present", database_away)
    with pytest.raises(OperationalError):
        await store.persist(session)
    assert session.id in store.pending.sessions and not session.stored
    monkeypatch.undo()
    await store.flush()
    assert await row(session.id) is not None and session.stored
