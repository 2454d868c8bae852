"""
Remove idle legacy sessions and old stream events, and whatever the installed feature apps keep
too long (the call log's old tool calls); run it from cron like ``clearsessions``.
"""

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from django_mcp.signals import clearing_expired
from django_mcp.stores.sweep import clear_expired


class Command(BaseCommand):
    help = "Delete MCP sessions idle longer than SESSION_IDLE_TIMEOUT_SECONDS and events older than " \
           "EVENT_RETENTION_SECONDS, through the configured SESSION_STORE and EVENT_STORE, and what feature " \
           "apps keep too long (the call log's CALL_LOG_RETENTION_DAYS)."

    def handle(self, *args, **options):
        sessions, events = async_to_sync(clear_expired)()
        removed = [f"{sessions} expired sessions", f"{events} old stream events"]
        # Feature apps prune their own rows (django_mcp.signals.clearing_expired).
        removed += [said for _, said in clearing_expired.send(sender=type(self)) if said]
        self.stdout.write(f"Removed {', '.join(removed[:-1])} and {removed[-1]}.")
