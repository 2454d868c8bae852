"""
Durable MCP tasks with real clients over real HTTP: two daphne workers on PostgreSQL and
channels_redis, and the task framework's database backend (django-tasks-db) whose ``db_worker``
runs the work as a third, separate process.

- 2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663) with the official ``mcp``
  SDK client and a small tasks client extension (below): a task made on worker A by a client
  that then disconnects is polled to its result by another client on worker B; the work ran in
  the ``db_worker``, not in either daphne. With the extension's resolver, a plain
  ``call_tool()`` returns the final result.
- 2025-11-25 (MCP spec 2025-11-25, basic/utilities/tasks): the SDK's legacy mode cannot take a
  ``CreateTaskResult`` for ``tools/call`` (it validates the answer as a ``CallToolResult``), so a
  raw legacy session makes the task on A; ``tasks/result`` on B with the same session answers it.
  An anonymous session's ``tasks/list`` shows its own tasks only.
- Input required (``tasks/update``) and cancellation (``tasks/cancel``) across workers.
- A ``db_worker`` killed mid-task: with a one-second heartbeat (``settings_durable_live``) the
  task ends ``failed`` within seconds, or, for a tool annotated ``idempotentHint``, runs again on
  a new ``db_worker``.
- Polling ``tasks/get`` costs a web worker no database connection per poll.

The tasks go to a task backend of this module's own (``durable_live``), which only this module's
``db_worker`` processes serve, so queued work of other test modules on the same database never
reaches them (nor theirs this module's).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim

from tests.live import LiveServer
from tests.transports.sse_client import LegacySession
from tests.transports.workers import Workers, own_redis_prefix

from .deployment import Database, DbWorker


EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
BACKEND = "durable_live"
SETTINGS = "tests.tasks.settings_durable_live"
TIMEOUT = 30
ENDED = {"completed", "failed", "cancelled"}
# How often the tests poll tasks/get at most: the server's advice (pollIntervalMs, 1000 here).
POLL_SECONDS = 1.0


# --- the tasks extension of the SDK client (SEP-2663) --------------------------------------------


class TaskHandle(types.Result):
    """``CreateTaskResult`` of 2026-07-28: the task, flat, with ``resultType: "task"``."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """The ``DetailedTask`` of ``tasks/get``: its questions, its result or its error."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateTaskParams(TaskIdParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class TaskFailed(Exception):
    """A task the resolver waited for ended failed or cancelled."""

    def __init__(self, task: DetailedTask) -> None:
        super().__init__(f"task {task.task_id} ended {task.status}: {task.error or task.status_message}")
        self.task = task


async def get_task(session: Any, task_id: str) -> DetailedTask:
    return await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), DetailedTask)


async def update_task(session: Any, task_id: str, responses: dict[str, Any]) -> None:
    await session.send_request(UpdateTask(params=UpdateTaskParams(task_id=task_id, input_responses=responses)),
                               types.EmptyResult)


async def cancel_task(session: Any, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskIdParams(task_id=task_id)), types.EmptyResult)


async def poll(session: Any, task_id: str, until: set[str], timeout: float = 15.0,
               interval: float = POLL_SECONDS) -> tuple[DetailedTask, list[tuple[str, str | None]]]:
    """
    tasks/get until the status is one of ``until``; the task and every (status, status message)
    seen on the way.
    """
    seen: list[tuple[str, str | None]] = []
    try:
        async with asyncio.timeout(timeout):
            while True:
                task = await get_task(session, task_id)
                if not seen or seen[-1] != (task.status, task.status_message):
                    seen.append((task.status, task.status_message))
                if task.status in until:
                    return task, seen
                await asyncio.sleep(interval)
    except TimeoutError:
        raise AssertionError(f"task {task_id} not {sorted(until)} within {timeout:g} s; seen {seen}") from None


class TasksExtension(ClientExtension):
    """
    ``io.modelcontextprotocol/tasks`` for the SDK client: advertised in every request's
    capabilities, claiming ``resultType: "task"`` answers of ``tools/call``; the resolver polls
    ``tasks/get`` until the task ends and returns the call's result.
    """

    identifier = EXTENSION

    def __init__(self) -> None:
        self.resolved: list[str] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        self.resolved.append(handle.task_id)
        interval = min(POLL_SECONDS, (handle.poll_interval_ms or 1000) / 1000)
        task, _ = await poll(ctx.session, handle.task_id, ENDED, interval=interval)
        if task.status != "completed" or task.result is None:
            raise TaskFailed(task)
        return types.CallToolResult.model_validate(task.result)


@asynccontextmanager
async def client(url: str, **options: Any) -> AsyncIterator[Client]:
    """An entered 2026-07-28 SDK client with the tasks extension."""
    options.setdefault("extensions", [TasksExtension()])
    async with Client(url, mode="2026-07-28", **options) as entered:
        yield entered


def text(result: types.CallToolResult | dict[str, Any]) -> str:
    if isinstance(result, dict):
        result = types.CallToolResult.model_validate(result)
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


# --- the deployment ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deployment(services: Mapping[str, str]) -> Iterator[Workers]:
    """
    Two daphne workers on PostgreSQL and channels_redis (as ``tests.transports.workers.two_workers``
    makes them, each naming its database connections); tasks go to the database backend
    ``durable_live``, which only the db_worker processes of these tests serve.
    """
    env = {**own_redis_prefix(services, "durable_live"), "MCP_TEST_KEEPALIVE": "2", "MCP_TEST_TASKS": "db",
           "DJANGO_SETTINGS_MODULE": SETTINGS, "MCP_TEST_LOG_LEVEL": "INFO"}
    with LiveServer(env={**env, "MCP_TEST_PG_APPLICATION": "durable-a"}, name="durable-a") as a, \
            LiveServer(env={**env, "MCP_TEST_PG_APPLICATION": "durable-b"}, name="durable-b") as b:
        yield Workers(a, b, env)


@pytest.fixture
def workers(deployment: Workers) -> Workers:
    return deployment


@pytest.fixture
def database(deployment: Workers) -> Database:
    return Database(deployment.env)


@pytest.fixture
def tasks_worker(deployment: Workers, request: pytest.FixtureRequest) -> Iterator[DbWorker]:
    """A db_worker for the test, stopped (SIGTERM, then SIGKILL) at its end."""
    worker = DbWorker(deployment.env, request.node.name.removeprefix("test_")[:40], BACKEND)
    try:
        yield worker.start()
    finally:
        worker.stop()


def describe(workers: Workers, *db_workers: DbWorker) -> str:
    return "\n".join([workers.describe(), *(worker.describe() for worker in db_workers)])


# --- 2026-07-28 ----------------------------------------------------------------------------------


async def test_task_outlives_its_client_and_is_polled_on_the_other_worker(
        workers: Workers, tasks_worker: DbWorker, database: Database) -> None:
    """
    SEP-2663, "Task Creation": the task is durable before its handle is answered, so a client that
    disconnects at once and comes back on the other worker of the deployment polls it to its
    result; the work ran in the db_worker process, not in either daphne.
    """
    async with asyncio.timeout(TIMEOUT):
        async with client(workers.a.mcp_url) as first:
            created = await first.session.call_tool("durable_pid", {"seconds": 2}, allow_claimed=True)
        assert isinstance(created, TaskHandle), created
        assert created.status == "working" and created.poll_interval_ms == 1000, created

        async with client(workers.b.mcp_url) as second:
            task, seen = await poll(second.session, created.task_id, ENDED)
    assert task.status == "completed", (task, describe(workers, tasks_worker))
    assert seen[0][0] == "working", seen  # the client came back while the work still ran
    assert task.result is not None and text(task.result) == f"ran in pid {tasks_worker.pid}", task
    assert tasks_worker.pid not in (workers.a.pid, workers.b.pid)

    row = database.task(created.task_id)
    assert (row["status"], row["attempts"], row["tool"]) == ("completed", 1, "durable_pid"), row
    work = database.finished_work(row["backend_id"])
    assert (work["status"], work["backend_name"], work["worker_ids"]) == ("SUCCESSFUL", BACKEND, [tasks_worker.name])
    assert work["task_path"] == "django_mcp.tasks.runner.work", work


async def test_call_tool_resolves_the_task_through_the_extension(workers: Workers, tasks_worker: DbWorker) -> None:
    """With the tasks extension installed, a plain ``call_tool()`` gets the final result: its resolver polls."""
    extension = TasksExtension()
    async with asyncio.timeout(TIMEOUT), client(workers.b.mcp_url, extensions=[extension]) as connected:
        result = await connected.call_tool("durable_pid", {"seconds": 0.5})
    assert isinstance(result, types.CallToolResult) and result.is_error is False, result
    assert text(result) == f"ran in pid {tasks_worker.pid}"
    assert len(extension.resolved) == 1  # a task, resolved, not a direct answer


async def test_input_required_across_workers(workers: Workers, tasks_worker: DbWorker) -> None:
    """
    SEP-2663, "Task Update Requests": the work's question parks the task in ``input_required``
    with its ``inputRequests``, seen on the other worker; the answer given there
    (``tasks/update``) lets the work finish, and the first worker reports it completed.
    """

    async def never(context: Any, params: Any) -> Any:
        raise AssertionError("a task's question must not reach the client as a request")

    async with asyncio.timeout(TIMEOUT):
        async with client(workers.a.mcp_url, elicitation_callback=never) as on_a, \
                client(workers.b.mcp_url, elicitation_callback=never) as on_b:
            created = await on_a.session.call_tool("confirm_delete", {"filename": "notes.txt"}, allow_claimed=True)
            assert isinstance(created, TaskHandle), created
            task, _ = await poll(on_b.session, created.task_id, {"input_required", *ENDED})
            assert task.status == "input_required", (task, describe(workers, tasks_worker))
            assert task.input_requests is not None and list(task.input_requests) == ["confirm_delete"], task
            question = task.input_requests["confirm_delete"]
            assert question["method"] == "elicitation/create", question
            assert question["params"]["message"] == "Delete notes.txt?", question

            await update_task(on_b.session, created.task_id,
                              {"confirm_delete": {"action": "accept", "content": {"confirm": True}}})
            task, _ = await poll(on_a.session, created.task_id, ENDED)
    assert task.status == "completed", (task, describe(workers, tasks_worker))
    assert task.result is not None and text(task.result) == "Deleted notes.txt", task


async def test_cancel_on_the_other_worker_stops_the_work(
        workers: Workers, tasks_worker: DbWorker, database: Database) -> None:
    """
    SEP-2663, "Task Cancellation": ``tasks/cancel`` on worker A ends a task made on worker B; its
    work in the db_worker stops (the db_worker, which runs one task at a time, takes the next at
    once) and the task stays cancelled.
    """
    async with asyncio.timeout(TIMEOUT):
        async with client(workers.b.mcp_url) as on_b, client(workers.a.mcp_url) as on_a:
            created = await on_b.session.call_tool("slow_compute", {"seconds": 60, "label": "long"},
                                                   allow_claimed=True)
            assert isinstance(created, TaskHandle), created
            await asyncio.to_thread(database.wait_started, created.task_id)

            await cancel_task(on_a.session, created.task_id)
            task = await get_task(on_a.session, created.task_id)
            assert task.status == "cancelled", task

            started = time.monotonic()
            after = await on_a.session.call_tool("durable_pid", {"seconds": 0}, allow_claimed=True)
            assert isinstance(after, TaskHandle), after
            done, _ = await poll(on_b.session, after.task_id, ENDED, timeout=10)
            waited = time.monotonic() - started
            assert done.status == "completed", (done, describe(workers, tasks_worker))
            assert waited < 5, f"the next task waited {waited:.1f} s: the cancelled work still held the db_worker"

            task = await get_task(on_b.session, created.task_id)
    assert task.status == "cancelled" and task.result is None, task
    work = database.finished_work(database.task(created.task_id)["backend_id"])
    # The framework's own record: the work returned, long before its 60 s, instead of running on.
    assert work["status"] == "SUCCESSFUL" and work["finished_at"] is not None, work
    assert (work["finished_at"] - work["started_at"]).total_seconds() < 10, work


# --- 2025-11-25 ----------------------------------------------------------------------------------


def legacy_text(response: dict[str, Any]) -> str:
    assert "result" in response, response
    return "".join(block["text"] for block in response["result"]["content"] if block["type"] == "text")


def test_legacy_task_made_on_one_worker_is_answered_on_the_other(workers: Workers, tasks_worker: DbWorker) -> None:
    """
    MCP spec 2025-11-25, basic/utilities/tasks: a task-augmented ``tools/call`` on worker A
    answers a ``CreateTaskResult`` at once; with the same session (sessions work on any worker)
    ``tasks/get`` and ``tasks/result`` on worker B find it, the latter waiting for the work in the
    db_worker and answering the tool's result with the ``related-task`` metadata, while the
    db_worker's status notification reaches the session's GET stream held by worker B.

    Raw HTTP: the SDK's legacy mode cannot make a task (it validates every ``tools/call`` answer
    as a ``CallToolResult``, and a ``CreateTaskResult`` has no ``content``).
    """
    session = LegacySession.start(workers.a)
    assert session.capabilities.get("tasks", {}).get("requests") == {"tools": {"call": {}}}, session.capabilities
    created = session.call(workers.a, "tools/call", {"name": "durable_pid", "arguments": {"seconds": 1.5},
                                                     "task": {"ttl": 60000}})
    assert "result" in created, created
    task = created["result"]["task"]
    assert task["status"] == "working" and task["ttl"] == 60000, task

    got = session.call(workers.b, "tasks/get", {"taskId": task["taskId"]})
    assert got.get("result", {}).get("status") == "working", got
    stream = session.open_get_stream(workers.b)
    try:
        answered = session.call(workers.b, "tasks/result", {"taskId": task["taskId"]})
        assert legacy_text(answered) == f"ran in pid {tasks_worker.pid}", (answered, describe(workers, tasks_worker))
        assert answered["result"]["_meta"][RELATED_TASK] == {"taskId": task["taskId"]}, answered
        status, _ = stream.wait_for(lambda m: m.get("method") == "notifications/tasks/status"
                                    and m["params"]["status"] == "completed", timeout=5)
        assert status["params"]["taskId"] == task["taskId"], status
    finally:
        stream.close()
    listed = session.call(workers.b, "tasks/list")
    assert (task["taskId"], "completed") in [(t["taskId"], t["status"]) for t in listed["result"]["tasks"]], listed


async def test_legacy_tasks_list_shows_only_the_sessions_own_tasks(workers: Workers, tasks_worker: DbWorker) -> None:
    """
    Who sees a task (docs/howto/long-running-tools.md, "Who sees a task": "for anonymous
    2025-11-25 clients, only their session"): an anonymous session's ``tasks/list`` shows its own
    tasks and nobody else's; the id is an anonymous client's only handle on its task.
    """
    async with asyncio.timeout(TIMEOUT), client(workers.a.mcp_url) as modern:
        foreign = await modern.session.call_tool("durable_pid", {"seconds": 0}, allow_claimed=True)
        assert isinstance(foreign, TaskHandle), foreign
    other = LegacySession.start(workers.a)
    other_task = other.call(workers.a, "tools/call", {"name": "durable_pid", "arguments": {"seconds": 0},
                                                      "task": {"ttl": 60000}})["result"]["task"]

    session = LegacySession.start(workers.b)
    own = session.call(workers.b, "tools/call", {"name": "durable_pid", "arguments": {"seconds": 0},
                                                 "task": {"ttl": 60000}})["result"]["task"]
    listed = session.call(workers.b, "tasks/list")
    ids = [t["taskId"] for t in listed["result"]["tasks"]]
    assert other_task["taskId"] not in ids, listed
    assert ids == [own["taskId"]], (
        f"tasks/list of one anonymous legacy session lists {len(ids) - 1} tasks of other clients "
        f"(e.g. the 2026-07-28 client's {foreign.task_id} is listed: {foreign.task_id in ids})")


# --- a db_worker killed mid-task -----------------------------------------------------------------


async def test_killed_worker_fails_the_task_or_reruns_an_idempotent_one(workers: Workers, database: Database) -> None:
    """
    A db_worker killed mid-task leaves the framework's row running for ever; django_mcp's
    heartbeat (every second here) shows the work lost: three seconds later the next ``tasks/get``,
    on either web worker, ends the task ``failed`` saying the worker stopped. A tool annotated
    ``idempotentHint`` is queued again instead, run by the next db_worker, and completes.
    """
    first, second, third = (DbWorker(workers.env, name, BACKEND) for name in ("killed-1", "killed-2", "rerun-3"))
    try:
        first.start()
        async with asyncio.timeout(TIMEOUT), client(workers.a.mcp_url) as on_a, client(workers.b.mcp_url) as on_b:
            created = await on_a.session.call_tool("durable_pid", {"seconds": 30}, allow_claimed=True)
            assert isinstance(created, TaskHandle), created
            await asyncio.to_thread(database.wait_started, created.task_id)
            await asyncio.sleep(0.5)
            first.kill()
            killed = time.monotonic()
            task, seen = await poll(on_b.session, created.task_id, ENDED, timeout=10)
            noticed = time.monotonic() - killed
            assert task.status == "failed", (task, seen, describe(workers, first))
            assert task.error is not None and "worker" in task.error["message"], task
            assert "stopped" in task.error["message"], task
            assert noticed < 5.5, f"the lost work was noticed only after {noticed:.1f} s"
            again = await get_task(on_a.session, created.task_id)
            assert again.status == "failed" and again.error == task.error, again
            assert database.work(database.task(created.task_id)["backend_id"])["status"] == "RUNNING"

            second.start()
            created = await on_b.session.call_tool("durable_idempotent_pid", {"seconds": 2}, allow_claimed=True)
            assert isinstance(created, TaskHandle), created
            await asyncio.to_thread(database.wait_started, created.task_id)
            await asyncio.sleep(0.5)
            second.kill()
            lost_work = database.task(created.task_id)["backend_id"]
            third.start()
            task, seen = await poll(on_a.session, created.task_id, ENDED, timeout=15)
    finally:
        for worker in (first, second, third):
            worker.stop()
    assert task.status == "completed", (task, seen, describe(workers, second, third))
    assert ("working", "Its worker stopped; started again") in seen, seen
    assert task.result is not None and text(task.result) == f"ran in pid {third.pid}", task
    row = database.task(created.task_id)
    assert row["attempts"] == 2, row
    assert database.work(lost_work)["status"] == "RUNNING"  # the killed run's row, left as it was
    rerun = database.finished_work(row["backend_id"])
    assert (rerun["status"], rerun["worker_ids"]) == ("SUCCESSFUL", [third.name]), rerun


# --- the web workers' database connections -------------------------------------------------------


async def test_polling_a_task_does_not_pile_up_database_connections(
        workers: Workers, tasks_worker: DbWorker, database: Database) -> None:
    """
    A client polling ``tasks/get`` must not cost the web worker a database connection per poll:
    PostgreSQL allows a hundred by default, and a few clients polling a long task would use them
    all (each ``tasks/get`` reads the task through the async ORM in the request's own thread, and
    the connection that thread opened must be closed when the request ends).
    """
    async with asyncio.timeout(TIMEOUT), client(workers.b.mcp_url) as on_b:
        created = await on_b.session.call_tool("durable_pid", {"seconds": 0}, allow_claimed=True)
        assert isinstance(created, TaskHandle), created
        await poll(on_b.session, created.task_id, ENDED)
        before = database.connections("durable-b")
        for _ in range(10):
            await get_task(on_b.session, created.task_id)
        after = database.connections("durable-b")
    assert after - before <= 2, (
        f"worker B held {before} connections to PostgreSQL before 10 tasks/get and {after} after")
