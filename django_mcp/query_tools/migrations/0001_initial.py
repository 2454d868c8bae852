"""
The app's first migration. Its model lived in the ``django_mcp`` app until ``django_mcp`` 0007:
a database migrated before keeps the table and its rows (the content type moves with it), a new
database gets the table here (django_mcp/migration_operations.py).
"""

import django.core.validators
import django.db.models.deletion
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
            name='McpQueryTool',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('site', models.CharField(default='default', help_text='The name of the MCP site that serves it.', max_length=100, verbose_name='site')),
                ('name', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[a-zA-Z0-9_-]{1,64}$', "1 to 64 letters, digits, '_' or '-': clients call the tool by this name.")], verbose_name='name')),
                ('title', models.CharField(blank=True, max_length=200, verbose_name='title')),
                ('description', models.TextField(blank=True, help_text="What the tool finds, for the client's model. Blank: generated.", verbose_name='description')),
                ('fields', models.JSONField(default=list, help_text='The fields each row returns, e.g. ["id", "title", "published"].', verbose_name='fields returned')),
                ('filters', models.JSONField(blank=True, default=dict, help_text='Field → lookups offered as arguments, e.g. {"title": ["icontains"], "pages": ["gte", "lte"]}. Lookups: exact, iexact, contains, icontains, gt, gte, lt, lte, range, in, isnull.', verbose_name='filters')),
                ('ordering', models.JSONField(blank=True, default=list, help_text='Fields to order by, "-" for descending, e.g. ["-published", "title"]; the primary key breaks ties.', verbose_name='ordering')),
                ('row_limit', models.PositiveSmallIntegerField(default=25, help_text='At most 100.', validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(100)], verbose_name='rows per call')),
                ('enabled', models.BooleanField(default=True, verbose_name='enabled')),
                ('created', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('updated', models.DateTimeField(auto_now=True, verbose_name='updated')),
                ('model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='contenttypes.contenttype', verbose_name='model')),
            ],
            options={
                'db_table': 'django_mcp_mcpquerytool',
                'verbose_name': 'MCP query tool',
                'verbose_name_plural': 'MCP query tools',
                'ordering': ['site', 'name'],
                'constraints': [models.UniqueConstraint(fields=('site', 'name'), name='django_mcp_query_tool_unique_name')],
            },
        ),
        adopt_content_types('django_mcp', 'django_mcp_query_tools', ['mcpquerytool']),
    ]
