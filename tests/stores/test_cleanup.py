"""``mcp_clearsessions``: idle sessions and old stream events are removed, fresh ones kept."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from django_mcp.models import McpEvent, McpSession


# Committed rows: the command runs the stores' queries on the thread pool, each thread on its own
# connection, as it would from cron, outside any transaction of the caller's.
pytestmark = pytest.mark.django_db(transaction=True)


def _session(session_id: str, idle: timedelta) -> McpSession:
    session = McpSession.objects.create(id=session_id, protocol_version="2025-11-25")
    McpSession.objects.filter(pk=session_id).update(last_seen_at=timezone.now() - idle)
    return session


def _event(session: McpSession, stream: str, seq: int, *, age: timedelta, final: bool = False) -> McpEvent:
    event = McpEvent.objects.create(session=session, stream_id=stream, seq=seq, message={"jsonrpc": "2.0"},
                                    final=final)
    McpEvent.objects.filter(pk=event.pk).update(created_at=timezone.now() - age)
    return event


def test_clearsessions_removes_idle_sessions_and_old_events(settings):
    settings.DJANGO_MCP = {"SESSION_IDLE_TIMEOUT_SECONDS": 3600, "EVENT_RETENTION_SECONDS": 60}
    stale, fresh = _session("stale", timedelta(hours=2)), _session("fresh", timedelta(minutes=1))
    McpEvent.objects.create(session=stale, stream_id="s1", seq=0, message=None)
    old = timedelta(minutes=5)
    # A finished stream whose last event is past retention goes, all of it.
    _event(fresh, "done", 0, age=old), _event(fresh, "done", 1, age=old, final=True)
    # A finished stream with a recent event stays, old events included: a resumer may still come.
    recent = [_event(fresh, "recent", 0, age=old).pk, _event(fresh, "recent", 1, age=timedelta(0), final=True).pk]
    # A stream still running stays however old its events: its request will add the rest, and a
    # client resuming it later must find the beginning (issue 11: the purge cut long streams).
    running = [_event(fresh, "running", 0, age=old).pk, _event(fresh, "running", 1, age=old).pk]
    out = StringIO()
    call_command("mcp_clearsessions", stdout=out)
    assert list(McpSession.objects.values_list("id", flat=True)) == ["fresh"]
    assert sorted(McpEvent.objects.values_list("pk", flat=True)) == sorted(recent + running)
    assert "Removed 1 expired sessions" in out.getvalue()
