"""
The 2025-11-25 experimental tasks (MCP spec 2025-11-25, basic/utilities/tasks) on a real daphne
server, in a Streamable HTTP session: the ``tasks`` capability, ``execution.taskSupport``,
task-augmented ``tools/call`` (``{task: Task}``), ``tasks/get``, ``tasks/result`` (blocking, with
the task's questions relayed as ``elicitation/create`` requests carrying related-task metadata),
``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status`` on the session's GET stream.
"""

from __future__ import annotations

import base64
import json
import time

from .clients import ISO, RELATED, TASK_ID, tool_text, without_related
from .fixtures import session, task_users  # noqa: F401 - fixtures

TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
TASK_KEYS = {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}
SERVER_TTL_MS = 3_600_000  # DJANGO_MCP["TASK_TTL_MS"]'s default, which tests/settings.py keeps


def assert_task(task: dict, status: str | None = None) -> None:
    """A 2025-11-25 ``Task``: its required fields, and nothing of the 2026 names."""
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} <= set(task) <= TASK_KEYS, task
    assert TASK_ID.match(task["taskId"]) and ISO.match(task["createdAt"]) and ISO.match(task["lastUpdatedAt"])
    assert task["ttl"] is None or (isinstance(task["ttl"], int) and task["ttl"] > 0), task
    if status is not None:
        assert task["status"] == status, task


def assert_error(response: dict, code: int) -> dict:
    assert "error" in response and response["error"]["code"] == code, response
    return response["error"]


# --- negotiation -----------------------------------------------------------------------------------


def test_initialize_announces_the_tasks_capability_from_2025_11_25_only(session):
    current = session()
    assert current.capabilities["tasks"] == TASKS_CAPABILITY
    # The 2026 extension is not defined here (SEP-2663); other extensions may be offered.
    assert "io.modelcontextprotocol/tasks" not in current.capabilities.get("extensions", {})
    assert_error(current.rpc("tasks/update", {"taskId": "anything", "inputResponses": {}}), -32601)  # 2026 only
    older = session(version="2025-06-18")
    assert "tasks" not in older.capabilities
    assert assert_error(older.rpc("tasks/get", {"taskId": "anything"}), -32601)
    tools = older.rpc("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools if "execution" in tool] == []


def test_tools_list_says_task_support_for_supporting_tools_only(session):
    tools = {tool["name"]: tool for tool in session().rpc("tools/list")["result"]["tools"]}
    expected = {"slow_compute": "optional", "confirm_delete": "optional", "multi_input": "optional",
                "failing_job": "required", "protocol_error_job": "required", "test_tool_with_task": "required"}
    assert {name: tools[name]["execution"]["taskSupport"] for name in expected} == expected
    for name in ("greet", "echo", "ask_name"):
        assert "execution" not in tools[name], tools[name]
    # Forbidden is the default and is never spelled out; no other value appears.
    assert {tool["execution"]["taskSupport"] for tool in tools.values() if "execution" in tool} <= {
        "optional", "required"}


# --- the life of a task ----------------------------------------------------------------------------


def test_a_task_augmented_call_is_followed_with_get_and_result(session):
    one = session()
    arguments = {"seconds": 0.3, "label": "legacy"}
    plain = one.rpc("tools/call", {"name": "slow_compute", "arguments": arguments})["result"]

    response = one.rpc("tools/call", {"name": "slow_compute", "arguments": arguments, "task": {"ttl": 5000}})
    assert set(response["result"]) == {"task"}, response  # CreateTaskResult: the Task in a wrapper
    task = response["result"]["task"]
    assert_task(task, "working")
    assert task["ttl"] == 5000  # shorter than the server's limit: the client's
    assert isinstance(task["pollInterval"], int) and task["pollInterval"] > 0

    got = one.get(task["taskId"])
    assert_task(got)
    assert got["taskId"] == task["taskId"] and got["status"] in {"working", "completed"}
    assert got["createdAt"] == task["createdAt"] and got["ttl"] == 5000
    assert "resultType" not in got and RELATED not in (got.get("_meta") or {})

    result = one.rpc("tasks/result", {"taskId": task["taskId"]})["result"]  # blocks until the end
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert without_related(result) == plain
    assert_task(one.get(task["taskId"]), "completed")


def test_the_ttl_is_the_servers_when_the_client_asks_more_or_nothing(session):
    one = session()
    longer = one.start("slow_compute", {"seconds": 0}, {"ttl": 10**12})
    assert longer["ttl"] == SERVER_TTL_MS
    unset = one.start("slow_compute", {"seconds": 0}, {})
    assert unset["ttl"] == SERVER_TTL_MS


def test_an_expired_task_is_gone(session):
    one = session()
    task = one.start("slow_compute", {"seconds": 0}, {"ttl": 300})
    one.wait(task["taskId"])
    time.sleep(0.5)
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert_error(one.rpc(method, {"taskId": task["taskId"]}), -32602)
    listed = [item["taskId"] for item in one.rpc("tasks/list")["result"]["tasks"]]
    assert task["taskId"] not in listed


def test_a_tool_error_fails_the_task_and_tasks_result_still_returns_the_result(session):
    one = session()
    task = one.start("failing_job")
    result = one.rpc("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is True
    assert tool_text(result) == "The job failed: the input file is empty"
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    failed = one.get(task["taskId"])
    assert_task(failed, "failed")
    assert failed["statusMessage"]


def test_a_protocol_error_is_what_tasks_result_answers(session):
    one = session()
    task = one.start("protocol_error_job")
    error = assert_error(one.rpc("tasks/result", {"taskId": task["taskId"]}), -32603)
    assert error["message"] == "The job could not reach the service it depends on"
    failed = one.get(task["taskId"])
    assert_task(failed, "failed")
    assert failed["statusMessage"] == error["message"]


def test_task_negotiation_errors_per_tool(session):
    one = session()
    # A required tool called without a task, and a task for a tool that supports none: -32601
    # (MCP spec 2025-11-25, basic/utilities/tasks, "Tool-Level Negotiation").
    assert_error(one.rpc("tools/call", {"name": "failing_job", "arguments": {}}), -32601)
    assert_error(one.rpc("tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}}), -32601)
    # An optional tool without a task runs as before.
    plain = one.rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})["result"]
    assert tool_text(plain) == "computation done after 0 s" and "task" not in plain
    assert one.rpc("tasks/list")["result"]["tasks"] == []  # none of them made a task


# --- listing ---------------------------------------------------------------------------------------


def test_tasks_list_lists_the_sessions_tasks_newest_first_and_refuses_bad_cursors(session):
    one = session()
    first = one.start("slow_compute", {"seconds": 0})
    second = one.start("slow_compute", {"seconds": 60})
    listed = one.rpc("tasks/list")["result"]
    assert [task["taskId"] for task in listed["tasks"]] == [second["taskId"], first["taskId"]]
    assert "nextCursor" not in listed
    for task in listed["tasks"]:
        assert_task(task)
    for cursor in ("bogus", base64.urlsafe_b64encode(json.dumps(["other", 0]).encode()).decode(),
                   base64.urlsafe_b64encode(json.dumps(["tasks", -1]).encode()).decode()):
        assert_error(one.rpc("tasks/list", {"cursor": cursor}), -32602)


def test_tasks_list_pages_through_every_task(session, task_users):
    pager = session(api_key="taskpager-key")  # a user of its own: the listing holds only these
    already = {task["taskId"] for task in pager.rpc("tasks/list")["result"]["tasks"]}
    assert not already, "taskpager had tasks before the test"
    made = []
    for _ in range(51):
        task = pager.start("slow_compute", {"seconds": 0})
        made.append(task["taskId"])
        pager.wait(task["taskId"])  # ended: the user's working-task limit does not apply
    seen, cursor, pages = [], None, 0
    while True:
        page = pager.rpc("tasks/list", {"cursor": cursor} if cursor else {})["result"]
        pages += 1
        seen += [task["taskId"] for task in page["tasks"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert pages == 2
    assert seen == list(reversed(made))  # every task once, newest first


# --- cancellation ----------------------------------------------------------------------------------


def test_tasks_cancel_cancels_a_running_task_and_refuses_an_ended_one(session):
    one = session()
    task = one.start("slow_compute", {"seconds": 60})
    started = time.monotonic()
    cancelled = one.rpc("tasks/cancel", {"taskId": task["taskId"]})["result"]
    assert time.monotonic() - started < 1.0
    assert_task(cancelled, "cancelled")  # set before the answer (MCP spec 2025-11-25, "Task Cancellation")
    time.sleep(0.8)
    later = one.get(task["taskId"])
    assert later["status"] == "cancelled" and later["lastUpdatedAt"] == cancelled["lastUpdatedAt"]
    error = assert_error(one.rpc("tasks/cancel", {"taskId": task["taskId"]}), -32602)
    assert "cancelled" in error["message"]
    # The result of a cancelled task is an error, not a result.
    assert "error" in one.rpc("tasks/result", {"taskId": task["taskId"]})

    done = one.start("slow_compute", {"seconds": 0})
    one.wait(done["taskId"])
    error = assert_error(one.rpc("tasks/cancel", {"taskId": done["taskId"]}), -32602)
    assert "completed" in error["message"]
    assert one.get(done["taskId"])["status"] == "completed"


def test_unknown_task_ids_are_invalid_params(session):
    one = session()
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        for params in ({"taskId": "no-such-task"}, {"taskId": 7}, {}):
            assert_error(one.rpc(method, params), -32602)


# --- input required --------------------------------------------------------------------------------


def test_tasks_result_relays_the_tasks_question_and_ends_with_the_result(session):
    one = session(capabilities={"elicitation": {}})
    task = one.start("confirm_delete", {"filename": "relay.txt"})
    # Asked while the task still works: tasks/result waits, relays the question once it is asked.
    message, stream = one.post_open("tasks/result", {"taskId": task["taskId"]})
    try:
        asked, skipped = stream.wait_for(lambda m: "method" in m and "id" in m, timeout=10)
        assert asked["method"] == "elicitation/create", asked
        assert asked["params"]["_meta"][RELATED] == {"taskId": task["taskId"]}
        assert asked["params"]["message"] == "Delete relay.txt?"
        assert asked["params"]["requestedSchema"]["properties"]["confirm"] == {"type": "boolean"}
        assert all(m.get("id") != message["id"] for m in skipped)
        assert one.get(task["taskId"])["status"] == "input_required"
        one.respond(asked["id"], {"action": "accept", "content": {"confirm": True},
                                  "_meta": {RELATED: {"taskId": task["taskId"]}}})
        final, others = stream.wait_for(lambda m: m.get("id") == message["id"], timeout=10)
        assert not [m for m in others if "id" in m and "method" in m], others  # asked once
    finally:
        stream.close()
    result = final["result"]
    assert tool_text(result) == "Deleted relay.txt" and result["isError"] is False
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert_task(one.get(task["taskId"]), "completed")


def test_a_declined_question_reaches_the_task_too(session):
    one = session(capabilities={"elicitation": {}})
    task = one.start("confirm_delete", {"filename": "keep.txt"})
    one.wait(task["taskId"], {"input_required"})
    message, stream = one.post_open("tasks/result", {"taskId": task["taskId"]})
    try:
        asked, _ = stream.wait_for(lambda m: m.get("method") == "elicitation/create", timeout=10)
        one.respond(asked["id"], {"action": "decline"})
        final, _ = stream.wait_for(lambda m: m.get("id") == message["id"], timeout=10)
    finally:
        stream.close()
    assert tool_text(final["result"]) == "Kept keep.txt"


def test_a_question_left_unanswered_is_asked_again_by_the_next_tasks_result(session):
    one = session(capabilities={"elicitation": {}})
    task = one.start("confirm_delete", {"filename": "again.txt"})
    one.wait(task["taskId"], {"input_required"})
    _, stream = one.post_open("tasks/result", {"taskId": task["taskId"]})
    try:
        first, _ = stream.wait_for(lambda m: m.get("method") == "elicitation/create", timeout=10)
    finally:
        stream.close()  # the client went away without answering
    assert one.get(task["taskId"])["status"] == "input_required"
    message, stream = one.post_open("tasks/result", {"taskId": task["taskId"]})
    try:
        second, _ = stream.wait_for(lambda m: m.get("method") == "elicitation/create", timeout=10)
        assert second["id"] != first["id"] and second["params"]["message"] == "Delete again.txt?"
        one.respond(second["id"], {"action": "accept", "content": {"confirm": True}})
        final, _ = stream.wait_for(lambda m: m.get("id") == message["id"], timeout=10)
    finally:
        stream.close()
    assert tool_text(final["result"]) == "Deleted again.txt"


def test_input_asked_before_the_task_exists_comes_on_the_calls_stream(session):
    one = session(capabilities={"elicitation": {}})
    message, stream = one.post_open("tools/call", {"name": "test_tool_with_task", "arguments": {},
                                                   "task": {"ttl": 60000}})
    try:
        asked, _ = stream.wait_for(lambda m: m.get("method") == "elicitation/create", timeout=10)
        assert RELATED not in (asked["params"].get("_meta") or {})  # no task yet
        one.respond(asked["id"], {"action": "accept", "content": {"name": "Bob"}})
        final, _ = stream.wait_for(lambda m: m.get("id") == message["id"], timeout=10)
    finally:
        stream.close()
    task = final["result"]["task"]
    assert_task(task, "working")
    one.made.append(task["taskId"])
    result = one.rpc("tasks/result", {"taskId": task["taskId"]})["result"]
    assert "Bob" in tool_text(result)


# --- notifications ---------------------------------------------------------------------------------


def test_status_notifications_reach_the_sessions_get_stream(session):
    one = session()
    stream = one.open_get()
    try:
        task = one.start("slow_compute", {"seconds": 0.3})
        note, _ = stream.wait_for(lambda m: m.get("method") == "notifications/tasks/status"
                                  and m["params"]["taskId"] == task["taskId"] and m["params"]["status"] == "completed",
                                  timeout=10)
    finally:
        stream.close()
    assert "id" not in note
    assert_task({key: value for key, value in note["params"].items() if key != "_meta"}, "completed")
    assert RELATED not in (note["params"].get("_meta") or {})  # SHOULD NOT carry it
    assert note["params"]["lastUpdatedAt"] == one.get(task["taskId"])["lastUpdatedAt"]
