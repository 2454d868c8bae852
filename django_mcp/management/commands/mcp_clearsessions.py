"""Remove idle legacy sessions and old stream events; run it from cron like ``clearsessions``."""

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from django_mcp.cleanup import clear_expired


class Command(BaseCommand):
    help = "Delete MCP sessions idle longer than SESSION_IDLE_TIMEOUT_SECONDS and events older than " \
           "EVENT_RETENTION_SECONDS."

    def handle(self, *args, **options):
        sessions, events = async_to_sync(clear_expired)()
        self.stdout.write(f"Removed {sessions} expired sessions and {events} old stream events.")
