"""
The 2026-07-28 tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663) on a real daphne
server: server-directed ``CreateTaskResult`` for a request that declares the extension,
``tasks/get`` (the DetailedTask), ``tasks/update``, ``tasks/cancel``, the ``-32021`` gate, the
``Mcp-Name`` routing header, and the methods the extension removed. The fixture tools are those of
the conformance suite (tests/conformance_app/tasks.py); the work runs in the server process.
"""

from __future__ import annotations

import base64
import time

import pytest

from .clients import EXT_CAPS, EXTENSION, ISO, RELATED, TASK_ID, tool_text
from .fixtures import modern, task_users  # noqa: F401 - fixtures

ENVELOPE_KEYS = {"taskId", "status", "result", "error", "inputRequests"}
CONFIRM = {"action": "accept", "content": {"confirm": True}}
ELICIT_AND_TASKS = {"elicitation": {}, **EXT_CAPS}


def assert_missing_extension(answer) -> None:
    """``-32021`` with HTTP 400 naming the extension in ``data.requiredCapabilities`` (SEP-2663, "Protocol Errors")."""
    assert answer.status == 400, (answer.status, answer.message)
    assert answer.error["code"] == -32021, answer.message
    assert answer.error["data"]["requiredCapabilities"]["extensions"] == {EXTENSION: {}}, answer.message


def assert_plain_ack(answer) -> None:
    """The empty acknowledgement of ``tasks/update`` and ``tasks/cancel``: ``resultType: "complete"``, no task."""
    result = answer.result
    assert result["resultType"] == "complete", result
    assert not ENVELOPE_KEYS & set(result), result


# --- negotiation -----------------------------------------------------------------------------------


def test_discover_advertises_the_extension_and_not_the_core_capability(modern):
    capabilities = modern().post("server/discover").result["capabilities"]
    assert capabilities["extensions"][EXTENSION] == {}
    assert "tasks" not in capabilities  # never also the 2025-11-25 capability (SEP-2663, "Backward Compatibility")


def test_tools_list_has_no_execution_field(modern):
    for client in (modern(), modern(capabilities={})):
        tools = {tool["name"]: tool for tool in client.post("tools/list").result["tools"]}
        assert {"slow_compute", "failing_job", "test_tool_with_task"} <= set(tools)
        assert [name for name, tool in tools.items() if "execution" in tool] == []


# --- creation and completion -----------------------------------------------------------------------


def test_a_task_is_followed_to_completed_with_what_a_plain_call_returns(modern):
    client = modern()
    arguments = {"seconds": 0.3, "label": "wire"}
    plain = modern(capabilities={}).call_tool("slow_compute", arguments).result  # no extension: runs at once
    assert plain["resultType"] == "complete" and "taskId" not in plain, plain

    created = client.start("slow_compute", arguments)
    assert created["status"] == "working"
    assert TASK_ID.match(created["taskId"]), created
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"]), created
    assert isinstance(created["ttlMs"], int) and created["ttlMs"] > 0, created
    assert isinstance(created["pollIntervalMs"], int) and created["pollIntervalMs"] > 0, created
    # Flat, with the 2026 field names, and nothing of a finished task or of MRTR.
    assert not {"task", "ttl", "pollInterval", "result", "error", "inputRequests", "requestState"} & set(created)

    # Durable before the answer: tasks/get resolves it at once (SEP-2663, "Task Creation").
    first = client.get(created["taskId"])
    assert first["taskId"] == created["taskId"] and first["resultType"] == "complete"
    assert first["status"] in {"working", "completed"}
    assert "requestState" not in first

    done = client.wait(created["taskId"])
    assert done["status"] == "completed", done
    assert done["resultType"] == "complete"
    assert done["result"] == plain  # exactly what tools/call answers, resultType included
    assert RELATED not in (done["result"].get("_meta") or {})
    assert "error" not in done and "inputRequests" not in done
    assert done["ttlMs"] == created["ttlMs"] and done["createdAt"] == created["createdAt"]
    assert done["lastUpdatedAt"] >= done["createdAt"]
    time.sleep(0.2)
    assert client.get(created["taskId"]) == done  # a pure read: nothing changes once ended


def test_a_tool_error_is_a_completed_task_with_is_error(modern):
    client = modern()
    created = client.start("failing_job")
    done = client.wait(created["taskId"])
    assert done["status"] == "completed", done
    assert done["result"]["isError"] is True
    assert tool_text(done["result"]) == "The job failed: the input file is empty"
    assert "error" not in done


def test_a_protocol_error_is_a_failed_task_with_the_error(modern):
    client = modern()
    created = client.start("protocol_error_job")
    done = client.wait(created["taskId"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == -32603
    assert done["error"]["message"] == "The job could not reach the service it depends on"
    assert done["statusMessage"] == done["error"]["message"]
    assert "result" not in done


def test_optional_tool_without_the_extension_runs_at_once_and_the_legacy_task_param_is_no_opt_in(modern):
    bare = modern(capabilities={})
    result = bare.call_tool("slow_compute", {"seconds": 0}, params={"task": {"ttl": 60000}}).result
    assert result["resultType"] == "complete" and "taskId" not in result and "task" not in result
    assert tool_text(result) == "computation done after 0 s"
    # A tool that never is a task ignores the old hint even with the extension declared.
    greeted = modern().call_tool("greet", {"name": "legacy-hint"}, params={"task": {"ttl": 60000}}).result
    assert greeted["resultType"] == "complete" and tool_text(greeted) == "Hello, legacy-hint!"
    assert "taskId" not in greeted


# --- input required --------------------------------------------------------------------------------


def test_input_required_then_tasks_update_completes_the_task(modern):
    client = modern(capabilities=ELICIT_AND_TASKS)
    created = client.start("confirm_delete", {"filename": "rt.txt"})
    waiting = client.wait(created["taskId"], {"input_required"})
    assert waiting["status"] == "input_required", waiting
    [(key, question)] = waiting["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "Delete rt.txt?"
    assert question["params"]["requestedSchema"]["properties"] == {"confirm": {"type": "boolean"}}

    # Answers to keys never asked are ignored before anything is checked (SEP-2663, "Task Update Requests").
    assert_plain_ack(client.update(created["taskId"], {"unknown-key": {"ignored": True}}))
    still = client.get(created["taskId"])
    assert still["status"] == "input_required" and set(still["inputRequests"]) == {key}

    assert_plain_ack(client.update(created["taskId"], {key: CONFIRM, "another-unknown": {"x": 1}}))
    done = client.wait(created["taskId"])
    assert done["status"] == "completed", done
    assert tool_text(done["result"]) == "Deleted rt.txt"
    assert "inputRequests" not in done


def test_a_partial_update_leaves_the_task_waiting_for_the_rest(modern):
    client = modern(capabilities=ELICIT_AND_TASKS)
    created = client.start("multi_input")
    waiting = client.wait(created["taskId"], {"input_required"})
    assert set(waiting["inputRequests"]) == {"first", "second"}, waiting

    assert_plain_ack(client.update(created["taskId"], {
        "first": {"action": "accept", "content": {"name": "partial-1", "confirm": True}}, "zzz": {}}))
    partial = client.get(created["taskId"])  # at once: the answer is recorded before the ack
    assert partial["status"] == "input_required", partial
    assert set(partial["inputRequests"]) == {"second"}

    # A key already answered is no longer outstanding: a second answer to it is ignored.
    assert_plain_ack(client.update(created["taskId"], {"first": {"action": "accept", "content": {"name": "late"}}}))
    assert set(client.get(created["taskId"])["inputRequests"]) == {"second"}

    assert_plain_ack(client.update(created["taskId"], {
        "second": {"action": "accept", "content": {"name": "partial-2", "confirm": True}}}))
    done = client.wait(created["taskId"])
    assert done["status"] == "completed", done
    assert tool_text(done["result"]) == "first: partial-1; second: partial-2"


def test_a_malformed_answer_to_an_outstanding_key_is_refused_and_changes_nothing(modern):
    client = modern(capabilities=ELICIT_AND_TASKS)
    created = client.start("confirm_delete", {"filename": "bad.txt"})
    client.wait(created["taskId"], {"input_required"})
    refused = client.update(created["taskId"], {"confirm_delete": {"not": "an ElicitResult"}})
    assert refused.status == 400 and refused.error["code"] == -32602, refused.message
    refused = client.update(created["taskId"], "not an object")
    assert refused.status == 400 and refused.error["code"] == -32602, refused.message
    task = client.get(created["taskId"])
    assert task["status"] == "input_required" and set(task["inputRequests"]) == {"confirm_delete"}


def test_input_is_asked_before_the_task_exists_then_the_task_uses_the_answer(modern):
    client = modern(capabilities=ELICIT_AND_TASKS)
    first = client.call_tool("test_tool_with_task").result
    assert first["resultType"] == "input_required", first
    assert "taskId" not in first
    [(key, question)] = first["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    assert question["params"]["requestedSchema"]["properties"]["name"] == {"type": "string"}

    retry = {"inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}}}
    if "requestState" in first:
        retry["requestState"] = first["requestState"]
    created = client.call_tool("test_tool_with_task", params=retry).result
    assert created["resultType"] == "task" and TASK_ID.match(created["taskId"]), created
    assert "requestState" not in created and "inputRequests" not in created
    client.made.append(created["taskId"])
    done = client.wait(created["taskId"])
    assert done["status"] == "completed", done
    assert "Alice" in tool_text(done["result"])


# --- cancellation ----------------------------------------------------------------------------------


def test_cancelling_a_running_task_stops_it_for_good(modern):
    client = modern()
    created = client.start("slow_compute", {"seconds": 60, "label": "cancel-me"})
    started = time.monotonic()
    assert_plain_ack(client.cancel(created["taskId"]))
    cancelled = client.wait(created["taskId"], timeout=1.0)
    assert time.monotonic() - started < 1.0
    assert cancelled["status"] == "cancelled", cancelled
    assert not {"result", "error", "inputRequests"} & set(cancelled)
    time.sleep(0.8)  # several of the work's cancellation checks later
    later = client.get(created["taskId"])
    assert later["status"] == "cancelled" and later["lastUpdatedAt"] == cancelled["lastUpdatedAt"], later
    # Cancelling again is acknowledged too.
    assert_plain_ack(client.cancel(created["taskId"]))
    assert client.get(created["taskId"])["status"] == "cancelled"


def test_cancelling_a_task_that_waits_for_input_ends_it_and_later_answers_change_nothing(modern):
    client = modern(capabilities=ELICIT_AND_TASKS)
    created = client.start("confirm_delete", {"filename": "never.txt"})
    client.wait(created["taskId"], {"input_required"})
    assert_plain_ack(client.cancel(created["taskId"]))
    cancelled = client.get(created["taskId"])
    assert cancelled["status"] == "cancelled" and "inputRequests" not in cancelled, cancelled
    assert_plain_ack(client.update(created["taskId"], {"confirm_delete": CONFIRM}))
    time.sleep(0.5)
    assert client.get(created["taskId"])["status"] == "cancelled"


def test_cancelling_an_ended_task_is_acknowledged_and_leaves_it_as_it_was(modern):
    client = modern()
    created = client.start("slow_compute", {"seconds": 0})
    done = client.wait(created["taskId"])
    assert done["status"] == "completed"
    assert_plain_ack(client.cancel(created["taskId"]))
    assert client.get(created["taskId"]) == done


# --- errors ----------------------------------------------------------------------------------------


def test_requests_without_the_extension_are_refused_before_the_task_is_looked_up(modern):
    client = modern()
    created = client.start("slow_compute", {"seconds": 60})
    for capabilities in ({}, {"elicitation": {}}, {"extensions": {"io.example/other": {}}}):
        bare = modern(capabilities=capabilities)
        for task_id in (created["taskId"], "gate-test"):
            assert_missing_extension(bare.post("tasks/get", {"taskId": task_id}))
            assert_missing_extension(bare.post("tasks/update", {"taskId": task_id, "inputResponses": {}}))
            assert_missing_extension(bare.post("tasks/cancel", {"taskId": task_id}))
        # A task-required tool cannot run without the extension (SEP-2663, "Capability Negotiation").
        assert_missing_extension(bare.call_tool("failing_job"))
    assert client.get(created["taskId"])["status"] == "working"  # the refused cancels did nothing


def test_unknown_and_malformed_task_ids_are_invalid_params(modern):
    client = modern()
    for task_id in ("tasks-conformance-nonexistent-12345", "x" * 65, ""):
        for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {})):
            answer = client.post(method, {"taskId": task_id, **extra})
            assert answer.status == 400 and answer.error["code"] == -32602, (method, task_id, answer.message)
    missing = client.post("tasks/get", {})
    assert missing.status == 400 and missing.error["code"] == -32602, missing.message


def test_mcp_name_must_equal_the_task_id(modern):
    client = modern()
    created = client.start("slow_compute", {"seconds": 60})
    task_id = created["taskId"]
    wrong = client.post("tasks/get", {"taskId": task_id}, name="sep-2663-wrong-task-id-for-routing-header-mismatch")
    assert wrong.status == 400 and wrong.error["code"] == -32020, wrong.message
    wrong = client.post("tasks/update", {"taskId": task_id, "inputResponses": {}}, name="another-task")
    assert wrong.status == 400 and wrong.error["code"] == -32020, wrong.message
    absent = client.post("tasks/cancel", {"taskId": task_id}, name=None)
    assert absent.status == 400 and absent.error["code"] == -32020, absent.message
    assert client.get(task_id)["status"] == "working"  # the refused cancel did nothing
    # The header's base64 form decodes to the id (MCP spec 2026-07-28, basic/transports/streamable-http).
    encoded = "=?base64?" + base64.b64encode(task_id.encode()).decode() + "?="
    assert client.post("tasks/get", {"taskId": task_id}, name=encoded).result["taskId"] == task_id
    # The method header must match too.
    mismatch = client.post("tasks/get", {"taskId": task_id}, headers={"Mcp-Method": "tasks/cancel"})
    assert mismatch.status == 400 and mismatch.error["code"] == -32020, mismatch.message


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_methods_the_extension_removed_are_not_found(modern, method):
    params = {"taskId": "tasks-conformance-isolation-probe"} if method == "tasks/result" else {}
    for client in (modern(), modern(capabilities={})):
        answer = client.post(method, params)
        assert answer.status == 404 and answer.error["code"] == -32601, answer.message


# --- status notifications --------------------------------------------------------------------------


def test_listen_with_task_ids_needs_the_extension(modern):
    created = modern().start("slow_compute", {"seconds": 60})
    reply = modern(capabilities={}).listen({"taskIds": [created["taskId"]]})
    assert reply.stream is None, "the listen stream opened without the extension"
    assert reply.status == 400 and reply.body["error"]["code"] == -32021, reply.body
    assert reply.body["error"]["data"]["requiredCapabilities"]["extensions"] == {EXTENSION: {}}


def test_a_listen_stream_follows_the_tasks_it_may_see(modern, task_users):
    alice = modern(capabilities=ELICIT_AND_TASKS, api_key="taskalice-key")
    created = alice.start("confirm_delete", {"filename": "listened.txt"})
    task_id = created["taskId"]
    alice.wait(task_id, {"input_required"})
    others = modern(api_key="taskbob-key").start("slow_compute", {"seconds": 60})  # bob's: not alice's to follow
    reply = alice.listen({"taskIds": [task_id, others["taskId"], "no-such-task"]}, request_id="follow-1")
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    stream = reply.stream
    try:
        ack = stream.next_message()
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        assert ack["params"]["notifications"]["taskIds"] == [task_id]  # only what alice may see
        assert_plain_ack(alice.update(task_id, {"confirm_delete": CONFIRM}))
        final, skipped = stream.wait_for(lambda m: m.get("method") == "notifications/tasks"
                                         and m["params"]["status"] in {"completed", "failed", "cancelled"})
    finally:
        stream.close()
    heard = [*skipped, final]
    assert all(m.get("method") == "notifications/tasks" and m["params"]["taskId"] == task_id for m in heard), heard
    assert "working" in [m["params"]["status"] for m in skipped]  # resumed after the answer
    params = final["params"]
    assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == "follow-1"
    assert "resultType" not in params  # a DetailedTask, not a result
    got = alice.get(task_id)
    assert params["status"] == got["status"] == "completed"
    assert {key: params[key] for key in ("taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")} == {
        key: got[key] for key in ("taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")}
    assert params["result"]["content"] == got["result"]["content"] == [{"type": "text", "text": "Deleted listened.txt"}]
    assert params["result"]["isError"] is False and params["result"]["resultType"] == "complete"


# --- who sees a task -------------------------------------------------------------------------------


def test_a_users_task_is_invisible_to_another_user_and_to_anonymous_clients(modern, task_users):
    alice = modern(api_key="taskalice-key")
    created = alice.start("slow_compute", {"seconds": 60})
    task_id = created["taskId"]
    for other in (modern(api_key="taskbob-key"), modern()):
        for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {})):
            answer = other.post(method, {"taskId": task_id, **extra})
            assert answer.status == 400 and answer.error["code"] == -32602, (method, answer.message)
    # The same user from another client (other info, other capabilities) sees it: tasks are not
    # bound to clientInfo or clientCapabilities.
    again = modern(api_key="taskalice-key", client_name="another-client",
                   capabilities={"elicitation": {}, **EXT_CAPS})
    assert again.get(task_id)["status"] == "working"
    assert_plain_ack(again.cancel(task_id))
    assert alice.get(task_id)["status"] == "cancelled"
