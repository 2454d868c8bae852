"""
The feature models leave the core app for apps of their own, keeping their tables (each new model
sets ``db_table`` to the old name, and its app's first migration creates the table only where it
does not exist yet): McpTool → django_mcp.tool_admin, McpToolCall → django_mcp.call_log,
McpQueryTool → django_mcp.query_tools, McpPrompt → django_mcp.stored_prompts. Only the migration
state changes here; the database is left as it is.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('django_mcp', '0006_session_tombstones'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='McpQueryTool'),
                migrations.DeleteModel(name='McpTool'),
                migrations.DeleteModel(name='McpToolCall'),
                migrations.DeleteModel(name='McpPrompt'),
            ],
            database_operations=[],
        ),
    ]
