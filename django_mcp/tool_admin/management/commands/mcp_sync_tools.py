"""``manage.py mcp_sync_tools``: the admin's tool rows for the tools in code."""

from django.core.management.base import BaseCommand

from django_mcp.sites import get_default_site
from django_mcp.tool_admin.policies import sync_tool_rows


class Command(BaseCommand):
    help = ("Make an MCP tool row (Django admin) for each tool the code defines, and mark rows whose tool "
            "left the code as orphaned. Also done after migrate and by each worker on its first request.")

    def handle(self, *args, **options):
        created, orphaned, revived = sync_tool_rows(get_default_site())
        self.stdout.write(f"Tool rows: {created} created, {orphaned} orphaned, {revived} back in the code.")
