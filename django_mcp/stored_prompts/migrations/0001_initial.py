"""
The app's first migration. Its model lived in the ``django_mcp`` app until ``django_mcp`` 0007:
a database migrated before keeps the table and its rows (the content type moves with it), a new
database gets the table here (django_mcp/migration_operations.py).
"""

import django.core.validators
from django.db import migrations, models

from django_mcp.migration_operations import CreateModelIfMissing, adopt_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('django_mcp', '0007_feature_apps'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        CreateModelIfMissing(
            name='McpPrompt',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9_.-]+$', "Letters, digits, '_', '-' and '.' only: clients show it as a command.")], verbose_name='name')),
                ('title', models.CharField(blank=True, max_length=200, verbose_name='title')),
                ('description', models.TextField(blank=True, verbose_name='description')),
                ('arguments', models.JSONField(blank=True, default=list, help_text='A list of arguments, e.g. [{"name": "topic", "description": "What to write about"}, {"name": "tone", "choices": ["short", "long"], "default": "short"}]. Keys: name, title, description, type (str, int, float, decimal, bool, date, datetime, time, email, url, slug, uuid), required, default, choices.', verbose_name='arguments')),
                ('template', models.TextField(help_text='Django template of the messages. Arguments, "user" and "language" are variables; {% load mcp_prompts %} gives {% message "assistant" %}…{% endmessage %}, {% embed "uri" %} and {% image "static/path.png" %}. Autoescaping is off.', verbose_name='template')),
                ('enabled', models.BooleanField(default=True, verbose_name='enabled')),
                ('login_required', models.BooleanField(default=False, help_text='Only authenticated users see and use it.', verbose_name='login required')),
                ('permission', models.CharField(blank=True, help_text='Only users with this permission see and use it, as "app_label.codename"; blank for everyone.', max_length=255, verbose_name='permission')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated')),
            ],
            options={
                'db_table': 'django_mcp_mcpprompt',
                'verbose_name': 'MCP prompt',
                'verbose_name_plural': 'MCP prompts',
                'ordering': ['name'],
            },
        ),
        adopt_content_types('django_mcp', 'django_mcp_stored_prompts', ['mcpprompt']),
    ]
