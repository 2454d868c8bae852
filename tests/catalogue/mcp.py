"""
The catalogue published as model resources on its own site (``tests.catalogue.sites.site``), so
the default site of the other tests is unchanged. Live tests serve it by setting
``MCP_TEST_SITE=tests.catalogue.sites.site``; the test app's tools then register on it too.
"""

from django_mcp import register
from django_mcp.permissions import AllowAny
from django_mcp.model_resources import ModelResource

from .models import Entry, Tag, Volume, Writer
from .sites import site


@register(Volume, site=site)
class VolumeResource(ModelResource):
    """Volumes: every user with the view permission sees the public ones and their own secret ones."""

    exclude = ["secret", "owner"]
    search_fields = ["title", "writer__name"]
    filter_fields = {"format": ["exact"], "pages": ["gte", "lte"], "writer": ["exact"], "in_print": ["exact"]}
    ordering = ["title"]
    tools = ["search", "get"]

    def get_queryset(self, ctx):
        volumes = super().get_queryset(ctx).select_related("writer").prefetch_related("tags")
        return volumes.filter(secret=False) | volumes.filter(owner=ctx.user.pk) if ctx.user.is_authenticated \
            else volumes.filter(secret=False)


site.register(Writer, fields=["name", "slug"], lookup_field="slug", permission_classes=[AllowAny])
site.register(Tag, fields="__all__", permission_classes=[AllowAny], list_rows=False)
site.register(Entry, fields="__all__", permission_classes=[AllowAny], cache_scope="public", ttl_ms=60000)
