"""
The app's first migration. Its model lived in the ``django_mcp`` app until ``django_mcp`` 0007:
a database migrated before keeps the table and its rows (the content type moves with it), a new
database gets the table here (django_mcp/migration_operations.py).
"""

from django.db import migrations, models

from django_mcp.migration_operations import CreateModelIfMissing, adopt_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('django_mcp', '0007_feature_apps'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        CreateModelIfMissing(
            name='McpTool',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('site', models.CharField(default='default', max_length=100, verbose_name='site')),
                ('name', models.CharField(max_length=128, verbose_name='name')),
                ('source', models.CharField(choices=[('code', 'code'), ('admin', 'admin')], default='code', max_length=8, verbose_name='defined in')),
                ('enabled', models.BooleanField(default=True, help_text='Disabled tools are neither listed nor callable, for anyone.', verbose_name='enabled')),
                ('title', models.CharField(blank=True, help_text="Blank: the code's title.", max_length=200, verbose_name='title')),
                ('description', models.TextField(blank=True, help_text="Blank: the code's description.", verbose_name='description')),
                ('annotations', models.JSONField(blank=True, help_text='Merged over the code\'s, e.g. {"readOnlyHint": true}.', null=True, verbose_name='annotation overrides')),
                ('required_scopes', models.CharField(blank=True, help_text='Space-separated; asked of OAuth tokens and other scoped credentials.', max_length=500, verbose_name='required OAuth scopes')),
                ('rate_limit', models.CharField(blank=True, help_text='Calls per period per user, e.g. "10/min", "100/hour", "5/10s".', max_length=32, verbose_name='rate limit')),
                ('log_arguments', models.BooleanField(default=True, help_text='Off: the call log keeps no arguments of this tool.', verbose_name='log arguments')),
                ('orphaned', models.BooleanField(default=False, editable=False, help_text='The code no longer defines this tool.', verbose_name='orphaned')),
                ('created', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('updated', models.DateTimeField(auto_now=True, verbose_name='updated')),
                ('groups', models.ManyToManyField(blank=True, help_text='If any are chosen, only their members (and superusers) may use it.', to='auth.group', verbose_name='allowed groups')),
                ('permissions', models.ManyToManyField(blank=True, help_text='A user needs every one of these to see and call the tool.', to='auth.permission', verbose_name='required permissions')),
            ],
            options={
                'db_table': 'django_mcp_mcptool',
                'verbose_name': 'MCP tool',
                'verbose_name_plural': 'MCP tools',
                'ordering': ['name'],
                'constraints': [models.UniqueConstraint(fields=('site', 'name'), name='django_mcp_tool_unique_name')],
            },
        ),
        adopt_content_types('django_mcp', 'django_mcp_tool_admin', ['mcptool']),
    ]
