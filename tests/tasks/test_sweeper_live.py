"""
Lost tasks announced with nobody asking (django_mcp/tasks/sweeper.py), with real processes
killed: two daphne workers on PostgreSQL and channels_redis, the task framework's ``db_worker`` as
a process of its own, a one-second heartbeat and a one-second sweep (``settings_sweeper_live``), so
the stated bound — three heartbeats and one sweep — is four seconds.

- A 2026-07-28 client that follows its task only through ``subscriptions/listen`` on the other
  worker (SEP-2663, "Task Status Notifications") hears ``failed`` after the ``db_worker`` running
  it is SIGKILLed; nobody sends ``tasks/get``.
- A 2025-11-25 client that waits on its GET stream, on the other worker, hears
  ``notifications/tasks/status`` ``failed`` the same way (MCP spec 2025-11-25,
  basic/utilities/tasks, "Task Status Notification").
- A web worker SIGKILLed after it made a task and before it queued the work, on a backend whose
  queue is elsewhere (as RQ's or Celery's: tests/tasks/stalling_backend.py, its enqueue held up):
  the task ends ``failed``; for a tool annotated ``idempotentHint`` it is queued again by exactly
  one of the two sweeping workers, and completes. (With django-tasks-db's backend on the same
  database the row and its queue entry are written in one transaction: there is no such window.)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.live import LiveServer
from tests.transports.sse_client import SSE, SSEStream, request
from tests.transports.workers import Workers, own_redis_prefix

from .clients import Modern, Session
from .deployment import Database, DbWorker


QUEUE = "sweeper_queue"  # the database backend the tasks end up on (settings_sweeper_live)
SETTINGS = "tests.tasks.settings_sweeper_live"
HEARTBEAT, SWEEP = 1.0, 1.0
# Three heartbeats and one sweep (the docs' bound), plus what the machine and the layer add.
BOUND = 3 * HEARTBEAT + SWEEP
SLACK = 2.0


@pytest.fixture(scope="module")
def deployment(services: Mapping[str, str]) -> Iterator[Workers]:
    env = {**own_redis_prefix(services, "sweeper_live"), "MCP_TEST_KEEPALIVE": "2", "MCP_TEST_TASKS": "db",
           "DJANGO_SETTINGS_MODULE": SETTINGS}
    with LiveServer(env=env, name="sweeper-a") as a, LiveServer(env=env, name="sweeper-b") as b:
        yield Workers(a, b, env)


@pytest.fixture
def database(deployment: Workers) -> Database:
    return Database(deployment.env)


@pytest.fixture
def db_worker(deployment: Workers, request: pytest.FixtureRequest) -> Iterator[DbWorker]:
    worker = DbWorker(deployment.env, "sweep-" + request.node.name.removeprefix("test_")[:30], QUEUE)
    try:
        yield worker.start()
    finally:
        worker.stop()


def wait_for_status(stream: SSEStream, method: str, status: str, timeout: float) -> tuple[dict[str, Any], float]:
    """The first ``method`` notification with ``status`` on the stream, and when it came."""
    found, _ = stream.wait_for(lambda m: m.get("method") == method and _status(m) == status, timeout)
    return found, time.monotonic()


def _status(message: dict[str, Any]) -> str | None:
    params = message.get("params") or {}
    return params.get("status")


def listen(server: LiveServer, task_id: str) -> SSEStream:
    """A 2026-07-28 ``subscriptions/listen`` following ``task_id``, acknowledged."""
    reply = Modern(server).listen({"taskIds": [task_id]})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    ack = reply.stream.next_message()
    assert ack["params"]["notifications"]["taskIds"] == [task_id], ack
    return reply.stream


# --- a db_worker killed: nobody reads, the listeners hear ------------------------------------------


def test_a_listen_only_client_hears_its_task_failed_when_the_db_worker_dies(
        deployment: Workers, db_worker: DbWorker, database: Database) -> None:
    task_id = Modern(deployment.a).start("durable_pid", {"seconds": 60})["taskId"]
    database.wait_started(task_id)
    stream = listen(deployment.b, task_id)
    try:
        db_worker.kill()
        killed = time.monotonic()
        message, heard = wait_for_status(stream, "notifications/tasks", "failed", BOUND + SLACK + 5)
    finally:
        stream.close()
    assert heard - killed <= BOUND + SLACK, f"told after {heard - killed:.1f} s (bound {BOUND} s)"
    assert "stopped" in message["params"]["error"]["message"], message
    assert database.task(task_id)["status"] == "failed"


def test_a_get_stream_client_hears_its_task_failed_when_the_db_worker_dies(
        deployment: Workers, db_worker: DbWorker, database: Database) -> None:
    session = Session.open(deployment.a)
    task_id = session.start("durable_pid", {"seconds": 60})["taskId"]
    database.wait_started(task_id)
    reply = request(deployment.b, "GET", headers={"Accept": SSE, **session.headers()})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    try:
        time.sleep(0.3)  # the stream has joined its session's group on worker B
        db_worker.kill()
        killed = time.monotonic()
        message, heard = wait_for_status(reply.stream, "notifications/tasks/status", "failed", BOUND + SLACK + 5)
    finally:
        reply.stream.close()
    assert heard - killed <= BOUND + SLACK, f"told after {heard - killed:.1f} s (bound {BOUND} s)"
    assert message["params"]["taskId"] == task_id
    assert "stopped" in message["params"]["statusMessage"], message


# --- a web worker killed between making a task and queuing it --------------------------------------


class StalledMaker:
    """A third web worker whose enqueue hangs: a task it makes is never handed over before it is killed."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.server = LiveServer(env={**env, "MCP_TEST_STALL_ENQUEUE": "120"}, name="sweeper-stalled")

    def make_and_die(self, database: Database, tool: str, marker: float) -> tuple[str, float]:
        """Have it make a task of ``tool`` (``seconds`` = ``marker``), find the row, SIGKILL it; (task id, when)."""
        caller = threading.Thread(target=self._call, args=(tool, marker), daemon=True)
        caller.start()
        deadline = time.monotonic() + 15
        while (row := database.one(
                "SELECT id, heartbeat, started, backend_id FROM django_mcp_tasks_mcptask "
                "WHERE tool = %s AND arguments = %s::jsonb", tool, json.dumps({"seconds": marker}))) is None:
            assert time.monotonic() < deadline, f"the stalled worker made no task:\n{self.server.log_path}"
            time.sleep(0.05)
        assert row["heartbeat"] is not None and row["started"] is None and row["backend_id"] == "", row
        self.server.kill()
        return row["id"], time.monotonic()

    def _call(self, tool: str, marker: float) -> None:
        try:
            Modern(self.server).call_tool(tool, {"seconds": marker})
        except Exception:  # noqa: BLE001 - its worker is killed under it
            pass


@pytest.fixture
def stalled_maker(deployment: Workers) -> Iterator[StalledMaker]:
    maker = StalledMaker(deployment.env)
    with maker.server:
        yield maker


def test_a_task_whose_maker_died_before_queuing_it_ends_failed(
        deployment: Workers, stalled_maker: StalledMaker, database: Database) -> None:
    task_id, _ = stalled_maker.make_and_die(database, "durable_pid", 0.125)
    stream = listen(deployment.b, task_id)
    try:
        message, heard = wait_for_status(stream, "notifications/tasks", "failed", BOUND + SLACK + 5)
    finally:
        stream.close()
    created = database.task(task_id)["created"].timestamp()
    # Held since it was made: lost three heartbeats after that, announced within one sweep more.
    assert database.task(task_id)["finished"].timestamp() - created <= BOUND + SLACK
    assert "before its work started" in message["params"]["error"]["message"], message


def test_an_idempotent_task_whose_maker_died_is_queued_again_by_one_sweeper(
        deployment: Workers, stalled_maker: StalledMaker, database: Database, db_worker: DbWorker) -> None:
    task_id, _ = stalled_maker.make_and_die(database, "durable_idempotent_pid", 0.25)
    # Both workers follow it, so both sweep it.
    on_a, on_b = listen(deployment.a, task_id), listen(deployment.b, task_id)
    try:
        message, _ = wait_for_status(on_b, "notifications/tasks", "completed", BOUND + SLACK + 10)
        seen_on_a, _ = wait_for_status(on_a, "notifications/tasks", "completed", 5)
    finally:
        on_a.close()
        on_b.close()
    assert message["params"]["result"]["content"][0]["text"] == f"ran in pid {db_worker.pid}", message
    assert seen_on_a["params"]["taskId"] == task_id
    row = database.task(task_id)
    assert row["attempts"] == 1, row  # one run: the maker's never started
    queued = database.one("SELECT count(*) AS n FROM django_tasks_database_dbtaskresult "
                          "WHERE args_kwargs::text LIKE %s", f"%{task_id}%")
    assert queued is not None and queued["n"] == 1, f"the work was queued {queued} times"
