"""
Who sees a task, on a real daphne server: its owner only — the user, and for anonymous 2025-11-25
clients their session (MCP spec 2025-11-25, basic/utilities/tasks, "Security": tasks are bound to
the requestor's authorization context). Any other requester gets ``-32602``, as for an id that
does not exist, and ``tasks/list`` leaves the task out.
"""

from __future__ import annotations

from .clients import EXT_CAPS
from .fixtures import modern, session, task_users  # noqa: F401 - fixtures


def listed(one) -> list[str]:
    return [task["taskId"] for task in one.rpc("tasks/list")["result"]["tasks"]]


def refused(one, method: str, task_id: str) -> bool:
    response = one.rpc(method, {"taskId": task_id})
    return response.get("error", {}).get("code") == -32602


def test_an_anonymous_sessions_task_is_invisible_to_another_session(session):
    owner, other = session(), session()
    task = owner.start("slow_compute", {"seconds": 60})
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert refused(other, method, task["taskId"]), method
    assert task["taskId"] not in listed(other)
    assert task["taskId"] in listed(owner)
    assert owner.get(task["taskId"])["status"] == "working"  # the other session's cancel did nothing


def test_an_anonymous_sessions_task_is_invisible_to_stateless_clients(session, modern):
    owner = session()
    task = owner.start("slow_compute", {"seconds": 60})
    stranger = modern(capabilities=dict(EXT_CAPS))
    for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {})):
        answer = stranger.post(method, {"taskId": task["taskId"], **extra})
        assert answer.status == 400 and answer.error["code"] == -32602, (method, answer.message)
    assert owner.get(task["taskId"])["status"] == "working"


def test_tasks_list_of_an_anonymous_session_does_not_show_other_clients_tasks(session, modern):
    """
    A 2026-07-28 anonymous task is reachable only by whoever holds its id (SEP-2663, "Security":
    unguessable ids); a 2025-11-25 anonymous session's ``tasks/list`` must not hand those ids out.
    """
    stateless = modern()
    made = stateless.start("slow_compute", {"seconds": 60})
    one = session()
    assert made["taskId"] not in listed(one)


def test_a_users_tasks_follow_the_user_across_sessions_and_no_one_else(session, task_users):
    alice = session(api_key="taskalice-key")
    task = alice.start("slow_compute", {"seconds": 60})
    # The same user in another session: an authenticated owner is the user, not the session.
    again = session(api_key="taskalice-key")
    assert again.get(task["taskId"])["status"] == "working"
    assert task["taskId"] in listed(again)
    for stranger in (session(api_key="taskbob-key"), session()):
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert refused(stranger, method, task["taskId"]), method
        assert task["taskId"] not in listed(stranger)
    assert alice.get(task["taskId"])["status"] == "working"


def test_a_users_legacy_and_stateless_tasks_are_one_set(session, modern, task_users):
    """The owner is the user whatever the revision: a 2026 task of alice is in her 2025 listing, and back."""
    alice_modern = modern(api_key="taskalice-key")
    stateless_task = alice_modern.start("slow_compute", {"seconds": 60})
    alice = session(api_key="taskalice-key")
    assert stateless_task["taskId"] in listed(alice)
    legacy_task = alice.start("slow_compute", {"seconds": 60})
    assert alice_modern.get(legacy_task["taskId"])["status"] == "working"
    bob_modern = modern(api_key="taskbob-key")
    answer = bob_modern.post("tasks/get", {"taskId": legacy_task["taskId"]})
    assert answer.status == 400 and answer.error["code"] == -32602
