"""
The app's first migration. Its model lived in the ``django_mcp`` app until ``django_mcp`` 0007:
a database migrated before keeps the table and its rows (the content type moves with it), a new
database gets the table here (django_mcp/migration_operations.py).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from django_mcp.migration_operations import CreateModelIfMissing, adopt_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('django_mcp', '0007_feature_apps'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        CreateModelIfMissing(
            name='McpToolCall',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('site', models.CharField(default='default', max_length=100, verbose_name='site')),
                ('tool', models.CharField(db_index=True, max_length=128, verbose_name='tool')),
                ('username', models.CharField(blank=True, max_length=150, verbose_name='username')),
                ('client', models.CharField(blank=True, max_length=200, verbose_name='OAuth client')),
                ('arguments', models.JSONField(blank=True, null=True, verbose_name='arguments')),
                ('outcome', models.CharField(choices=[('ok', 'ok'), ('tool_error', 'tool error (isError)'), ('protocol_error', 'protocol error'), ('cancelled', 'cancelled'), ('rate_limited', 'rate-limited')], db_index=True, max_length=16, verbose_name='outcome')),
                ('message', models.TextField(blank=True, verbose_name='error message')),
                ('duration_ms', models.FloatField(verbose_name='duration (ms)')),
                ('protocol_version', models.CharField(blank=True, max_length=16, verbose_name='protocol revision')),
                ('transport', models.CharField(blank=True, max_length=16, verbose_name='transport')),
                ('created', models.DateTimeField(db_index=True, verbose_name='called at')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'db_table': 'django_mcp_mcptoolcall',
                'verbose_name': 'MCP tool call',
                'verbose_name_plural': 'MCP tool calls',
                'ordering': ['-created'],
            },
        ),
        adopt_content_types('django_mcp', 'django_mcp_call_log', ['mcptoolcall']),
    ]
