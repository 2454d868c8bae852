"""
The tasks' admin (django_mcp/tasks/admin.py: the list, a read-only task page, the cancel action)
and ``mcp_clearsessions``'s part for tasks (django_mcp/tasks/maintenance.py: expired tasks go,
tasks whose worker went quiet end).
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from django_mcp.tasks import store
from django_mcp.tasks.models import McpTask

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "admin:django_mcp_tasks_mcptask_changelist"


def make(**fields) -> McpTask:
    now = timezone.now()
    values = {"id": store.new_task_id(), "tool": "slow_compute", "owner": "anonymous",
              "protocol_version": "2026-07-28", "created": now, "last_updated": now, **fields}
    return McpTask.objects.create(**values)


def test_the_changelist_shows_tool_user_status_and_duration(admin_client):
    started = timezone.now() - timedelta(seconds=3)
    make(tool="report_builder", username="alice", owner="user:1", status=McpTask.COMPLETED, started=started,
         finished=started + timedelta(seconds=2.5))
    make(tool="nightly_sync", status=McpTask.FAILED, status_message="the service is down")
    page = admin_client.get(reverse(CHANGELIST))
    assert page.status_code == 200
    html = page.content.decode()
    for text in ("report_builder", "alice", "2.5 s", "nightly_sync", "anonymous", "the service is down"):
        assert text in html, text
    assert len(page.context["cl"].result_list) == 2
    assert admin_client.get(reverse(CHANGELIST), {"status__exact": "failed"}).context["cl"].result_count == 1


def test_a_task_page_is_read_only(admin_client):
    task = make(result={"content": [{"type": "text", "text": "the answer"}]}, status=McpTask.COMPLETED)
    # quote(), as the admin's links do: a task id is URL-safe base64, whose "_" the admin unquotes ("_2F" is "/").
    page = admin_client.get(reverse("admin:django_mcp_tasks_mcptask_change", args=[quote(task.pk)]))
    assert page.status_code == 200
    assert "the answer" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    assert admin_client.get(reverse("admin:django_mcp_tasks_mcptask_add")).status_code == 403


def test_the_cancel_action_cancels_active_tasks_only(admin_client):
    working = make()
    waiting = make(status=McpTask.INPUT_REQUIRED, input_requests={"k": {"method": "elicitation/create"}})
    done = make(status=McpTask.COMPLETED, result={"content": []})
    answer = admin_client.post(reverse(CHANGELIST), {
        "action": "cancel_tasks", "_selected_action": [working.pk, waiting.pk, done.pk]}, follow=True)
    assert answer.status_code == 200
    assert "Cancelled 2 tasks." in [str(message) for message in answer.context["messages"]]
    statuses = {task.pk: task.status for task in McpTask.objects.all()}
    assert statuses == {working.pk: "cancelled", waiting.pk: "cancelled", done.pk: "completed"}
    assert McpTask.objects.get(pk=working.pk).cancel_requested  # the work is told to stop
    assert McpTask.objects.get(pk=done.pk).result == {"content": []}


def test_staff_who_may_only_view_tasks_cannot_cancel_them(client, django_user_model):
    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_mcptask"))
    client.force_login(viewer)
    task = make()
    page = client.get(reverse(CHANGELIST))
    assert page.status_code == 200
    assert "cancel_tasks" not in page.content.decode()
    client.post(reverse(CHANGELIST), {"action": "cancel_tasks", "_selected_action": [task.pk]})
    assert McpTask.objects.get(pk=task.pk).status == McpTask.WORKING


def test_mcp_clearsessions_removes_expired_tasks_and_ends_lost_ones():
    now = timezone.now()
    expired = make(status=McpTask.COMPLETED, expires=now - timedelta(seconds=1))
    expired_working = make(expires=now - timedelta(minutes=1))
    kept = make(status=McpTask.COMPLETED, expires=now + timedelta(hours=1))
    lost = make(tool="no-longer-served", started=now - timedelta(minutes=5), heartbeat=now - timedelta(minutes=2),
                attempts=1)
    alive = make(started=now - timedelta(minutes=5), heartbeat=now)
    out = StringIO()
    call_command("mcp_clearsessions", stdout=out)
    assert "2 expired tasks" in out.getvalue(), out.getvalue()
    remaining = {task.pk: task for task in McpTask.objects.all()}
    assert set(remaining) == {kept.pk, lost.pk, alive.pk}
    assert expired.pk not in remaining and expired_working.pk not in remaining
    assert remaining[lost.pk].status == McpTask.FAILED and remaining[lost.pk].error["code"] == -32603
    assert remaining[alive.pk].status == McpTask.WORKING
    assert remaining[kept.pk].status == McpTask.COMPLETED
