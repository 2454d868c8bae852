"""
The task rows' rules, in process (django_mcp/tasks/store.py): answers are recorded only for
questions outstanding, a terminal status never changes, a task is seen only by its owner and not
after its expiry, and a task whose worker went quiet is noticed.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from django_mcp.tasks import store
from django_mcp.tasks.models import McpTask

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object"}}}
ANSWER_A = {"action": "accept", "content": {"name": "a"}}
ANSWER_B = {"action": "accept", "content": {"name": "b"}}


async def make(**fields) -> McpTask:
    now = timezone.now()
    values = {"id": store.new_task_id(), "tool": "t", "owner": "anonymous", "protocol_version": "2026-07-28",
              "created": now, "last_updated": now, **fields}
    return await McpTask.objects.acreate(**values)


async def fresh(task: McpTask) -> McpTask:
    return await McpTask.objects.aget(pk=task.pk)


def test_task_ids_are_long_random_and_url_safe():
    ids = {store.new_task_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(task_id) >= 22 and len(task_id) <= 64 and task_id.replace("-", "").replace("_", "").isalnum()
               for task_id in ids)


async def test_record_answers_takes_only_outstanding_keys_and_resumes_when_none_is_left():
    task = await make(status=McpTask.INPUT_REQUIRED, input_requests={"a": QUESTION, "b": QUESTION},
                      status_message="Waiting", asked_keys=["a", "b"])
    await store.record_answers(task.id, {"a": ANSWER_A, "never-asked": ANSWER_B})
    row = await fresh(task)
    assert row.status == McpTask.INPUT_REQUIRED and row.status_message == "Waiting"
    assert set(row.input_requests) == {"b"}
    assert row.input_answers == {"a": ANSWER_A}
    assert row.last_updated > task.last_updated

    await store.record_answers(task.id, {"a": ANSWER_B})  # answered already: not outstanding
    assert (await fresh(task)).input_answers == {"a": ANSWER_A}

    await store.record_answers(task.id, {"b": ANSWER_B})
    row = await fresh(task)
    assert row.status == McpTask.WORKING and row.status_message == ""
    assert row.input_requests == {}
    assert row.input_answers == {"a": ANSWER_A, "b": ANSWER_B}


async def test_record_answers_does_nothing_to_a_task_not_waiting_for_input():
    for status in (McpTask.WORKING, McpTask.CANCELLED, McpTask.COMPLETED):
        task = await make(status=status, input_requests={"a": QUESTION})
        await store.record_answers(task.id, {"a": ANSWER_A})
        row = await fresh(task)
        assert row.status == status and row.input_answers == {} and row.input_requests == {"a": QUESTION}
    await store.record_answers("no-such-task", {"a": ANSWER_A})  # no error


async def test_cancel_marks_an_active_task_and_never_overrides_a_terminal_status():
    for status in (McpTask.WORKING, McpTask.INPUT_REQUIRED):
        task = await make(status=status, input_requests={"a": QUESTION})
        assert await store.cancel(task) is True
        row = await fresh(task)
        assert row.status == McpTask.CANCELLED and row.cancel_requested and row.finished is not None
        assert row.input_requests == {}
        assert await store.cancel(row) is False  # once
    for status in (McpTask.COMPLETED, McpTask.FAILED):
        task = await make(status=status, result={"content": []}, status_message="done")
        assert await store.cancel(task) is False
        row = await fresh(task)
        assert row.status == status and not row.cancel_requested and row.status_message == "done"
        assert row.result == {"content": []}


async def test_change_leaves_ended_tasks_alone_unless_told():
    ended = await make(status=McpTask.COMPLETED)
    assert await store.change(ended.id, status_message="late") is False
    assert (await fresh(ended)).status_message == ""
    assert await store.change(ended.id, only_if_active=False, status_message="admin") is True
    assert (await fresh(ended)).status_message == "admin"


async def test_a_task_is_visible_to_its_owner_only():
    anonymous = await make(session="s1")
    users = await make(owner="user:7", session="s1")
    via_client = await make(owner="user:7", client="app-1")
    stateless = await make()
    cases = [
        (anonymous, store.Owner("anonymous", "", "s1"), True),
        (anonymous, store.Owner("anonymous", "", "s2"), False),
        (anonymous, store.Owner("anonymous", "", ""), False),
        (anonymous, store.Owner("user:7", "", "s1"), False),
        (users, store.Owner("user:7", "", "another session"), True),  # a user's task follows the user
        (users, store.Owner("user:8", "", "s1"), False),
        (via_client, store.Owner("user:7", "app-1"), True),
        (via_client, store.Owner("user:7", "app-2"), False),
        (via_client, store.Owner("user:7"), False),
        (stateless, store.Owner("anonymous"), True),
        (stateless, store.Owner("user:7"), False),
    ]
    for task, owner, visible in cases:
        assert ((await store.visible_task(task.id, owner)) is not None) is visible, (task.owner, task.session, owner)
    for bad in (None, 7, "", "x" * 65, "no-such-task"):
        assert await store.visible_task(bad, store.Owner("anonymous")) is None


async def test_an_expired_task_is_invisible_and_purged():
    old = await make(expires=timezone.now() - timedelta(seconds=1))
    young = await make(expires=timezone.now() + timedelta(hours=1))
    forever = await make(expires=None)
    assert await store.visible_task(old.id, store.Owner("anonymous")) is None
    assert await store.purge_expired() == 1
    assert {task.id async for task in McpTask.objects.all()} == {young.id, forever.id}
    assert store.expiry_for(None) is None
    assert store.expiry_for(1000) > timezone.now()


async def test_a_lost_heartbeat_is_three_beats_of_silence(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TASK_HEARTBEAT_SECONDS": 2}
    now = timezone.now()
    quiet = await make(started=now - timedelta(seconds=10), heartbeat=now - timedelta(seconds=7))
    recent = await make(started=now - timedelta(seconds=10), heartbeat=now - timedelta(seconds=5))
    queued = await make()  # in the task framework's queue: nobody holds it, nothing is lost
    held = await make(heartbeat=now - timedelta(seconds=7))  # made, its maker gone before handing it over
    ended = await make(status=McpTask.COMPLETED, started=now, heartbeat=now - timedelta(seconds=60))
    assert store.heartbeat_lost(quiet)
    assert not store.heartbeat_lost(recent)
    assert not store.heartbeat_lost(queued)
    assert store.heartbeat_lost(held)
    assert not store.heartbeat_lost(ended)


async def test_a_task_is_held_by_its_maker_until_queued():
    now = timezone.now()
    made = await store.create(id=store.new_task_id(), tool="t", owner="anonymous", protocol_version="2026-07-28",
                              created=now, last_updated=now)
    assert made.heartbeat == now and made.started is None
    await store.queued(made.id, "queue-row-1")
    row = await fresh(made)
    assert (row.backend_id, row.heartbeat) == ("queue-row-1", None)

    # A db_worker that claimed the work before the maker's update keeps its own heartbeat.
    raced = await store.create(id=store.new_task_id(), tool="t", owner="anonymous", protocol_version="2026-07-28",
                               created=now, last_updated=now)
    claimed = await store.claim(raced.id)
    await store.queued(raced.id, "queue-row-2")
    row = await fresh(raced)
    assert (row.backend_id, row.heartbeat) == ("queue-row-2", claimed.heartbeat)


async def test_overdue_lists_the_longest_silent_first_up_to_a_limit(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TASK_HEARTBEAT_SECONDS": 1}
    now = timezone.now()
    newer = await make(heartbeat=now - timedelta(seconds=10))
    older = await make(heartbeat=now - timedelta(seconds=20))
    await make(heartbeat=now)
    await make(status=McpTask.FAILED, heartbeat=now - timedelta(seconds=30))
    assert [task.id for task in await store.overdue()] == [older.id, newer.id]
    assert [task.id for task in await store.overdue(limit=1)] == [older.id]
    assert await store.any_active()
    await McpTask.objects.filter(status=McpTask.WORKING).aupdate(status=McpTask.COMPLETED)
    assert not await store.any_active()


async def test_active_count_counts_working_and_waiting_tasks_of_the_owner():
    owner = store.Owner("user:3", "app")
    for status in (McpTask.WORKING, McpTask.INPUT_REQUIRED, McpTask.COMPLETED, McpTask.CANCELLED):
        await make(owner="user:3", client="app", status=status)
    await make(owner="user:3", client="other-app")
    await make(owner="user:4", client="app")
    assert await store.active_count(owner) == 2


async def test_anonymous_legacy_sessions_count_on_their_own():
    await make(session="s1")
    await make(session="s1", status=McpTask.INPUT_REQUIRED)
    await make(session="s2")
    await make()  # a 2026-07-28 anonymous task: no session
    assert await store.active_count(store.Owner("anonymous", "", "s1")) == 2
    assert await store.active_count(store.Owner("anonymous", "", "s3")) == 0
