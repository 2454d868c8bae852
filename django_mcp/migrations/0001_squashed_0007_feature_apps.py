"""
The core's tables as a new database gets them: legacy sessions and their stream events, nothing
of the feature apps. A database migrated before the feature apps existed runs 0001 to 0007
instead (the feature tables stay, for their apps to take over).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('django_mcp', '0001_initial'),
        ('django_mcp', '0002_prompts'),
        ('django_mcp', '0003_tool_admin'),
        ('django_mcp', '0004_query_tools'),
        ('django_mcp', '0005_session_limits'),
        ('django_mcp', '0006_session_tombstones'),
        ('django_mcp', '0007_feature_apps'),
    ]

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='McpSession',
            fields=[
                ('id', models.CharField(max_length=64, primary_key=True, serialize=False, verbose_name='session id')),
                ('transport', models.CharField(choices=[('streamable-http', 'Streamable HTTP'), ('http-sse', 'HTTP+SSE (2024-11-05)')], default='streamable-http', max_length=16, verbose_name='transport')),
                ('protocol_version', models.CharField(max_length=16, verbose_name='protocol version')),
                ('client_capabilities', models.JSONField(default=dict, verbose_name='client capabilities')),
                ('client_info', models.JSONField(blank=True, null=True, verbose_name='client info')),
                ('log_level', models.CharField(blank=True, max_length=16, null=True, verbose_name='log level')),
                ('subscriptions', models.JSONField(default=list, verbose_name='resource subscriptions')),
                ('user_key', models.CharField(default='anonymous', max_length=150, verbose_name='user')),
                ('client_address', models.GenericIPAddressField(blank=True, null=True, verbose_name='client address')),
                ('stream_channel', models.CharField(blank=True, default='', max_length=200, verbose_name='stream channel')),
                ('ended', models.BooleanField(default=False, verbose_name='ended')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('last_seen_at', models.DateTimeField(auto_now=True, db_index=True, verbose_name='last seen')),
            ],
            options={
                'verbose_name': 'MCP session',
                'verbose_name_plural': 'MCP sessions',
                'ordering': ['-last_seen_at'],
                'indexes': [models.Index(fields=['user_key', 'client_address'], name='django_mcp_session_owner')],
            },
        ),
        migrations.CreateModel(
            name='McpEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('stream_id', models.CharField(max_length=32, verbose_name='stream id')),
                ('seq', models.PositiveIntegerField(verbose_name='sequence')),
                ('message', models.JSONField(null=True, verbose_name='message')),
                ('final', models.BooleanField(default=False, verbose_name='ends the stream')),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True, verbose_name='created')),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='django_mcp.mcpsession')),
            ],
            options={
                'verbose_name': 'MCP stream event',
                'verbose_name_plural': 'MCP stream events',
                'ordering': ['stream_id', 'seq'],
                'constraints': [models.UniqueConstraint(fields=('stream_id', 'seq'), name='django_mcp_event_stream_seq')],
            },
        ),
    ]
