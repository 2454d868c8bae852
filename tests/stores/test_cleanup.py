"""``mcp_clearsessions``: idle sessions and old stream events are removed, fresh ones kept."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from django_mcp.models import McpEvent, McpSession


pytestmark = pytest.mark.django_db


def _session(session_id: str, idle: timedelta) -> McpSession:
    session = McpSession.objects.create(id=session_id, protocol_version="2025-11-25")
    McpSession.objects.filter(pk=session_id).update(last_seen_at=timezone.now() - idle)
    return session


def test_clearsessions_removes_idle_sessions_and_old_events(settings):
    settings.DJANGO_MCP = {"SESSION_IDLE_TIMEOUT_SECONDS": 3600, "EVENT_RETENTION_SECONDS": 60}
    stale, fresh = _session("stale", timedelta(hours=2)), _session("fresh", timedelta(minutes=1))
    McpEvent.objects.create(session=stale, stream_id="s1", seq=0, message=None)
    old = McpEvent.objects.create(session=fresh, stream_id="s2", seq=0, message=None)
    McpEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    kept = McpEvent.objects.create(session=fresh, stream_id="s2", seq=1, message={"jsonrpc": "2.0"})
    out = StringIO()
    call_command("mcp_clearsessions", stdout=out)
    assert list(McpSession.objects.values_list("id", flat=True)) == ["fresh"]
    assert list(McpEvent.objects.values_list("pk", flat=True)) == [kept.pk]
    assert "Removed 1 expired sessions" in out.getvalue()
