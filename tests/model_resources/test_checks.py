"""System checks of the model resources (django_mcp/model_resources/checks.py)."""

from django.core import checks
from django.test import override_settings

from django_mcp.model_resources.checks import check_model_resources
from django_mcp.sites import McpSite
from tests.catalogue.models import Entry, Volume


def test_a_model_listing_without_an_index_is_a_warning():
    site = McpSite("checked")
    site.register(Volume, fields=["title"], ordering=["pages"])  # no index starts with pages
    site.register(Entry, fields="__all__")  # by primary key
    with override_settings(DJANGO_MCP={"SITE": site}):
        messages = check_model_resources()
    assert [(m.id, m.obj) for m in messages] == [("django_mcp.W003", Volume)]
    assert "ordered by 'pages'" in messages[0].msg and "db_index=True" in messages[0].hint
    site.unregister(Volume)
    site.register(Volume, fields=["title"])  # ordered by the indexed title
    with override_settings(DJANGO_MCP={"SITE": site}):
        assert check_model_resources() == []
    assert check_model_resources in checks.registry.registry.get_checks(include_deployment_checks=True)
