"""
``DJANGO_MCP["MAX_TASKS_PER_USER"]`` on a real daphne server of its own (tests/tasks/settings_limits.py:
a limit of two), on a copy of the suite's live database without its tasks: a principal with that
many working tasks is refused another (``-32602``, and no task is made) in either revision, other
users are not affected, an ended task frees its place (and so does one past its TTL, which the
client can no longer see or cancel), anonymous 2025-11-25 sessions count each on their own, and
anonymous 2026-07-28 clients (which have no session) share one count of their own.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping

import pytest

from tests.live import LiveServer

from .clients import Modern, Session
from .fixtures import task_users  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def limited_server(sqlite_server_env: Mapping[str, str], task_users, tmp_path_factory) -> Iterator[LiveServer]:
    copy = tmp_path_factory.mktemp("tasks-limits") / "limits.sqlite3"
    with sqlite3.connect(sqlite_server_env["MCP_TEST_SQLITE"]) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # migrated, with the users; consistent even while the live server writes
        target.execute("DELETE FROM django_mcp_tasks_mcptask")
    env = {**sqlite_server_env, "MCP_TEST_SQLITE": str(copy), "DJANGO_SETTINGS_MODULE": "tests.tasks.settings_limits"}
    with LiveServer(env=env, name="tasks-limits") as server:
        yield server


@pytest.fixture
def clients(limited_server) -> Iterator[list]:
    made: list = []
    yield made
    for client in made:
        client.cancel_all()


def test_a_user_may_have_only_so_many_working_tasks(limited_server, clients):
    carol = Modern(limited_server, api_key="limitcarol-key")
    dan = Modern(limited_server, api_key="limitdan-key")
    legacy_carol = Session.open(limited_server, api_key="limitcarol-key")
    clients += [carol, dan, legacy_carol]
    first = carol.start("slow_compute", {"seconds": 30})
    carol.start("slow_compute", {"seconds": 30})

    refused = carol.call_tool("slow_compute", {"seconds": 30})
    assert refused.status == 400 and refused.error["code"] == -32602, refused.message
    assert "Too many tasks" in refused.error["message"]
    response = legacy_carol.rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}, "task": {}})
    assert response["error"]["code"] == -32602, response  # the user's count, whatever the revision
    assert len(legacy_carol.rpc("tasks/list")["result"]["tasks"]) == 2  # nothing made for the refused calls
    # Without the extension the optional tool still runs at once: the limit is on tasks only.
    plain = Modern(limited_server, capabilities={}, api_key="limitcarol-key").call_tool(
        "slow_compute", {"seconds": 0}).result
    assert plain["resultType"] == "complete"

    dan.start("slow_compute", {"seconds": 30})  # another user: a count of their own

    carol.cancel(first["taskId"])  # an ended task frees its place
    assert carol.get(first["taskId"])["status"] == "cancelled"
    carol.start("slow_compute", {"seconds": 30})


def test_anonymous_sessions_count_each_on_their_own(limited_server, clients):
    one, two = Session.open(limited_server), Session.open(limited_server)
    clients += [one, two]
    for _ in range(2):
        one.start("slow_compute", {"seconds": 30})
    assert one.rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30},
                                  "task": {}})["error"]["code"] == -32602
    two.start("slow_compute", {"seconds": 30})


def test_anonymous_stateless_clients_share_one_count(limited_server, clients):
    first, second = Modern(limited_server, client_name="first"), Modern(limited_server, client_name="second")
    clients += [first, second]
    first.start("slow_compute", {"seconds": 30})
    second.start("slow_compute", {"seconds": 30})
    refused = first.call_tool("slow_compute", {"seconds": 30})
    assert refused.status == 400 and refused.error["code"] == -32602, refused.message


def test_anonymous_sessions_do_not_use_up_the_stateless_clients_count(limited_server, clients):
    """Sessions count each on their own (above): their tasks are not the stateless clients' shared count."""
    legacy = Session.open(limited_server)
    stateless = Modern(limited_server)
    clients += [legacy, stateless]
    for _ in range(2):
        legacy.start("slow_compute", {"seconds": 30})
    answer = stateless.call_tool("slow_compute", {"seconds": 30})
    assert answer.status == 200 and answer.result["resultType"] == "task", answer.message


def test_a_task_past_its_ttl_no_longer_holds_a_place(limited_server, clients):
    """
    A 2025-11-25 client may ask for a short TTL; once it has passed the task is gone for the client
    (``-32602``, not listed, not cancellable: MCP spec 2025-11-25, basic/utilities/tasks, "TTL and
    Resource Management"), so it cannot hold one of the user's places either.
    """
    erin = Session.open(limited_server, api_key="limiterin-key")
    clients.append(erin)
    short = [erin.start("slow_compute", {"seconds": 10}, {"ttl": 300})["taskId"] for _ in range(2)]
    time.sleep(0.5)
    assert erin.rpc("tasks/list")["result"]["tasks"] == []
    for task_id in short:
        assert erin.rpc("tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602
    response = erin.rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 10}, "task": {}})
    assert "result" in response and response["result"]["task"]["status"] == "working", response
