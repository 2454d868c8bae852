"""The database event store: event ids, replay in chunks, one progress row per stream, stream info."""

import pytest

from django_mcp.models import McpEvent, McpSession
from django_mcp.stores.events import DatabaseEventStore, StoredEvent, parse_event_id


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("value, parsed", [
    ("0123456789abcdef.3", ("0123456789abcdef", 3)),
    (" 0123456789abcdef.0\t", ("0123456789abcdef", 0)),
    ("0123456789abcdef.１２", None),  # non-ASCII digits: int() would take them
    ("0123456789abcdef.\u0663", None),
    ("0123456789abcdef." + "9" * 5000, None),  # past int()'s digit limit: a 500 before
    ("0123456789abcdef. 3", None),
    ("01 23.4", None),
    ("0123456789ABCDEF.3", None),
    (".3", None),
    ("abc", None),
    ("", None),
])
def test_parse_event_id_takes_only_ids_we_mint(value, parsed):
    assert parse_event_id(value) == parsed


def progress(n: int) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": n}}


async def test_progress_keeps_one_row_per_stream_and_replay_comes_in_chunks():
    await McpSession.objects.acreate(id="s", protocol_version="2025-11-25")
    store = DatabaseEventStore()
    await store.append("s", StoredEvent("abc", 0, {"requestId": 7}, False))
    for seq in range(1, 101):
        await store.append("s", StoredEvent("abc", seq, progress(seq), False))
    await store.append("s", StoredEvent("abc", 101, {"jsonrpc": "2.0", "method": "notifications/message"}, False))
    await store.append("s", StoredEvent("abc", 102, {"jsonrpc": "2.0", "id": 7, "result": {}}, True))
    assert await McpEvent.objects.acount() == 4  # priming, the latest progress, the log message, the answer
    replay = await store.after("s", "abc", 0, limit=2)
    assert [event.seq for event in replay] == [100, 101]
    rest = await store.after("s", "abc", 101, limit=2)
    assert [(event.seq, event.final) for event in rest] == [(102, True)]
    assert await store.after("s", "abc", 102) == []
    assert await store.after("s", "nope", 0) is None
    info = await store.describe("s", "abc")
    assert info.request_id == 7 and info.finished
    assert await store.describe("s", "nope") is None
