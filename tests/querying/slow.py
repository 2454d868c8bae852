"""
Sites for the query tool's guards: ``slow_site``, whose regions take seconds to read (a long
statement on SQLite, ``pg_sleep`` on PostgreSQL, ``SLEEP`` on MariaDB), and ``private_site``, whose
only queryable model needs ``querying.view_department``.
"""

from django.db import connection
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from django_mcp.model_resources import ModelQueryTool, ModelResource
from django_mcp.permissions import AllowAny
from django_mcp.sites import McpSite

from .models import Department, Region

SLOW_SQL = {
    "sqlite": "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000000) "
              "SELECT count(*) FROM c) > 0",
    "postgresql": "(SELECT count(*) FROM pg_sleep(10)) > 0",  # in FROM: run, not planned away as in EXISTS
    # SLEEP, not BENCHMARK: MariaDB's max_statement_time ends a BENCHMARK early without an error.
    "mysql": "SLEEP(10) = 0",
}


class SlowRegions(ModelResource):
    fields = ["name"]
    permission_classes = [AllowAny]
    queryable = True

    def get_queryset(self, ctx):
        return super().get_queryset(ctx).filter(RawSQL(SLOW_SQL[connection.vendor], [], output_field=BooleanField()))


slow_site = McpSite("querying_slow")
slow_site.register(Region, SlowRegions)
slow_site.add(ModelQueryTool(timeout_ms=300))

private_site = McpSite("querying_private")
private_site.register(Department, fields=["name", "code"], queryable=True)
private_site.add(ModelQueryTool(max_result_bytes=120))
