"""The per-worker session cache: what it keeps, for how long, and what makes it forget."""

import asyncio

import pytest

from django_mcp.fanout import SESSION_CHANGED, SESSIONS_GROUP
from django_mcp.stores.sessions import SessionState
from django_mcp.transports import session_cache as module
from django_mcp.transports.session_cache import SessionCache, announce_change, reaches_other_workers


def state(session_id: str) -> SessionState:
    return SessionState(id=session_id, protocol_version="2025-11-25", client_capabilities={}, client_info=None,
                        log_level=None, subscriptions=[], user_key="anonymous")


class Store:
    """Counts reads; answers from a dict."""

    def __init__(self, *ids: str) -> None:
        self.rows = {i: state(i) for i in ids}
        self.reads = 0

    async def get(self, session_id: str) -> SessionState | None:
        self.reads += 1
        return self.rows.get(session_id)


@pytest.fixture
def cache(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_CACHE_SECONDS": 30.0, "SESSION_CACHE_SIZE": 3}
    fresh = SessionCache()
    yield fresh
    for task in fresh.tasks:
        task.cancel()


async def test_a_session_is_read_once_then_served_from_memory(cache):
    store = Store("s1")
    for _ in range(5):
        assert (await cache.get("s1", store.get)).id == "s1"
    assert store.reads == 1
    assert await cache.get("missing", store.get) is None
    assert await cache.get("missing", store.get) is None
    assert store.reads == 3  # unknown ids are never cached


async def test_entries_are_read_again_after_their_lifetime(cache, monkeypatch):
    store = Store("s1")
    now = [1000.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    await cache.get("s1", store.get)
    now[0] += 29.0
    await cache.get("s1", store.get)
    assert store.reads == 1
    now[0] += 2.0
    await cache.get("s1", store.get)
    assert store.reads == 2


async def test_the_least_recently_used_go_first(cache):
    store = Store("a", "b", "c", "d")
    for session_id in ("a", "b", "c"):
        await cache.get(session_id, store.get)
    await cache.get("a", store.get)  # a is now the most recent
    await cache.get("d", store.get)  # evicts b
    assert list(cache.entries) == ["c", "a", "d"]


async def test_an_expired_session_is_not_kept(cache):
    store = Store("s1")
    store.rows["s1"].expired = True
    assert (await cache.get("s1", store.get)).expired
    assert "s1" not in cache.entries


async def test_an_announcement_makes_every_worker_forget(cache, monkeypatch):
    monkeypatch.setattr(module, "session_cache", cache)
    store = Store("s1", "s2")
    await cache.get("s1", store.get)
    await cache.get("s2", store.get)
    await asyncio.sleep(0.05)  # the listener joins the group
    # Another worker announcing arrives as an event on the group, not as a local call.
    from channels.layers import get_channel_layer

    await get_channel_layer().group_send(SESSIONS_GROUP, {"type": SESSION_CHANGED, "session": "s2"})
    for _ in range(100):
        if "s2" not in cache.entries:
            break
        await asyncio.sleep(0.01)
    assert list(cache.entries) == ["s1"]
    await announce_change("s1")  # the local side forgets at once
    assert cache.entries == {}


async def test_a_workers_own_announcement_leaves_what_it_cached_since(cache, monkeypatch):
    # An HTTP+SSE initialize announces its change, then caches what it stored: its own
    # announcement, coming back through the group, must not make it forget that copy. Another
    # worker's still does.
    monkeypatch.setattr(module, "session_cache", cache)
    from channels.layers import get_channel_layer

    class RecordingLayer:
        def __init__(self) -> None:
            self.sent: list[dict] = []

        async def group_send(self, group: str, message: dict) -> None:
            self.sent.append(message)

    await cache.get("s1", Store("s1").get)
    for _ in range(100):
        if cache.own_channel() is not None:
            break
        await asyncio.sleep(0.01)
    assert cache.own_channel() is not None, "the listener never started"
    await asyncio.sleep(0.05)  # its group join
    recording = RecordingLayer()
    await module.ChangeAnnouncer().announce(recording, "s1")
    assert recording.sent == [{"type": SESSION_CHANGED, "sessions": ["s1"], "from": cache.own_channel()}]
    cache.put(state("s1"))  # what the worker stored after announcing
    await get_channel_layer().group_send(SESSIONS_GROUP, recording.sent[0])  # its announcement comes back
    await asyncio.sleep(0.2)
    assert list(cache.entries) == ["s1"], "the worker's own announcement made it forget"
    await get_channel_layer().group_send(SESSIONS_GROUP, {**recording.sent[0], "from": "another-worker"})
    for _ in range(100):
        if not cache.entries:
            break
        await asyncio.sleep(0.01)
    assert cache.entries == {}, "another worker's announcement was skipped too"


@pytest.mark.parametrize("override", [{"SESSION_CACHE_SECONDS": 0}])
async def test_no_caching_when_switched_off(settings, override):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, **override}
    store, cache = Store("s1"), SessionCache()
    await cache.get("s1", store.get)
    await cache.get("s1", store.get)
    assert store.reads == 2 and cache.entries == {}


async def test_no_caching_without_a_channel_layer(settings):
    # Nothing could tell other workers about a change, so nothing is kept.
    settings.CHANNEL_LAYERS = {}
    store, cache = Store("s1"), SessionCache()
    await cache.get("s1", store.get)
    await cache.get("s1", store.get)
    assert store.reads == 2 and cache.entries == {}


def test_only_a_layer_between_processes_reaches_other_workers():
    from channels.layers import InMemoryChannelLayer
    from channels_redis.core import RedisChannelLayer  # made without connecting

    assert not reaches_other_workers(None)
    assert not reaches_other_workers(InMemoryChannelLayer())
    assert reaches_other_workers(RedisChannelLayer())


async def test_an_in_process_layer_hears_no_announcement_it_would_only_echo(cache, monkeypatch):
    # One process is every worker there is: forgetting here is the whole of the announcement.
    monkeypatch.setattr(module, "session_cache", cache)
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    listener = await layer.new_channel()
    await layer.group_add(SESSIONS_GROUP, listener)
    try:
        await cache.get("s1", Store("s1").get)
        await announce_change("s1")
        assert cache.entries == {}
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(layer.receive(listener), 0.2)
    finally:
        await layer.group_discard(SESSIONS_GROUP, listener)


async def test_changes_made_together_are_announced_in_a_few_messages():
    class RecordingLayer:
        """Records each group send, taking a round trip's time as Redis does."""

        def __init__(self) -> None:
            self.sent: list[dict] = []

        async def group_send(self, group: str, message: dict) -> None:
            await asyncio.sleep(0.01)
            self.sent.append(message)

    layer, announcer = RecordingLayer(), module.ChangeAnnouncer()
    await announcer.announce(layer, "alone")  # alone, a change goes at once in a message of its own
    assert layer.sent == [{"type": SESSION_CHANGED, "sessions": ["alone"]}]
    # A thousand sessions ending together: one message for the first, then the rest in batches.
    await asyncio.gather(*(announcer.announce(layer, f"s{n}") for n in range(1000)))
    announced = [session for message in layer.sent[1:] for session in message["sessions"]]
    assert sorted(announced) == sorted(f"s{n}" for n in range(1000))
    assert len(layer.sent) - 1 <= 1 + 1000 // module.ChangeAnnouncer.BATCH_SIZE + 1
    assert announcer.sender is None and announcer.waiting == []


async def test_a_batch_the_layer_refuses_fails_the_announcements_in_it():
    class DownLayer:
        async def group_send(self, group: str, message: dict) -> None:
            raise ConnectionError("Redis is away")

    with pytest.raises(ConnectionError):
        await module.ChangeAnnouncer().announce(DownLayer(), "s1")
