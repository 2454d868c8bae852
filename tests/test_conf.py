"""``DJANGO_MCP`` settings: the site they name is the one everything uses; bad import strings say which setting."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_mcp import decorators, sites
from django_mcp.authentication import SessionAuthentication
from django_mcp.conf import mcp_settings
from django_mcp.sites import McpSite, get_default_site
from django_mcp.transports.http import McpHttpConsumer


class LibrarySite(McpSite):
    """A project's own site class."""


library_site = McpSite("library")


def test_the_default_site_is_one_object_for_decorators_and_transports():
    assert get_default_site() is get_default_site()
    assert sites.site.name == "default" and isinstance(sites.site, McpSite)
    assert sites.site.get_tool("echo") is not None  # tests/testapp/mcp.py registered it here


def test_a_custom_site_instance_in_settings_gets_the_registrations(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SITE": "tests.test_conf.library_site"}
    assert get_default_site() is library_site

    @decorators.tool()
    def only_on_the_library_site() -> str:
        return ""

    assert library_site.get_tool("only_on_the_library_site") is not None
    assert sites.site.get_tool("only_on_the_library_site") is not None  # django_mcp.site follows the setting
    # The HTTP endpoint serves the same object.
    consumer = McpHttpConsumer()
    assert consumer.dispatcher().backend is library_site
    library_site.remove_tool("only_on_the_library_site")


def test_a_site_class_in_settings_is_instantiated_once(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SITE": "tests.test_conf.LibrarySite"}
    first = get_default_site()
    assert type(first) is LibrarySite
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SERVER_NAME": "changed"}
    assert get_default_site() is first


def test_something_else_in_site_is_refused(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SITE": "django_mcp.conf.DEFAULTS"}
    with pytest.raises(ImproperlyConfigured, match=r'DJANGO_MCP\["SITE"\] must name an McpSite'):
        get_default_site()


@pytest.mark.parametrize("setting, value", [
    ("SITE", "myproject.nowhere.site"),
    ("SESSION_STORE", "django_mcp.stores.sessions.Missing"),
    ("DEFAULT_PERMISSION_CLASSES", ["django_mcp.permissions.AllowAny", "django_mcp.permissions.Nope"]),
    ("DEFAULT_AUTHENTICATION_CLASSES", ["nowhere.Auth"]),
])
def test_an_import_error_names_the_setting(settings, setting, value):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, setting: value}
    with pytest.raises(ImproperlyConfigured, match=rf'for the setting DJANGO_MCP\["{setting}"\]'):
        getattr(mcp_settings, setting)


def test_lists_of_import_strings_are_resolved(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP,
                           "DEFAULT_AUTHENTICATION_CLASSES": ["django_mcp.authentication.SessionAuthentication"]}
    assert mcp_settings.DEFAULT_AUTHENTICATION_CLASSES == [SessionAuthentication]


def test_an_import_string_of_a_moved_class_still_resolves(settings):
    from django_mcp.stores.database_sessions import DatabaseSessionStore

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_STORE": "django_mcp.stores.sessions.DatabaseSessionStore"}
    assert mcp_settings.SESSION_STORE is DatabaseSessionStore


def test_register_a_model_uses_the_model_options_class_setting(settings):
    from django.contrib.auth.models import Group

    from django_mcp.model_options import ModelOptions

    class Plain(ModelOptions):
        def get_primitives(self):
            return []

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "MODEL_OPTIONS_CLASS": Plain}
    site = McpSite("options-class")
    site.register(Group)
    assert type(site.get_model_options(Group)) is Plain
