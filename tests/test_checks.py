"""django_mcp's system checks, each id triggered and each clean configuration silent."""

import pytest
from django.apps import apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from django_mcp.checks import check_configuration


def ids() -> list[str]:
    return [message.id for message in check_configuration()]


def test_clean_configuration_has_no_messages():
    assert ids() == []


def test_check_is_registered():
    assert check_configuration in checks.registry.registry.get_checks()


@override_settings(CHANNEL_LAYERS={})
def test_missing_channel_layer_is_a_warning():
    assert ids() == ["django_mcp.W001"]


@override_settings(DJANGO_MCP={"SERVER_NAME": "x", "PAGESIZE": 10})
def test_unknown_setting_is_named():
    messages = check_configuration()
    assert [m.id for m in messages] == ["django_mcp.W002"]
    assert "'PAGESIZE'" in messages[0].msg


@override_settings(DJANGO_MCP=["not", "a", "dict"])
def test_settings_must_be_a_dict():
    assert ids() == ["django_mcp.E002"]


def test_channels_need_not_be_installed():
    """A project that serves the plain view under WSGI has no reason to list Channels (django_mcp.views)."""
    from django.conf import settings

    apps_without_channels = [app for app in settings.INSTALLED_APPS if app not in ("channels", "daphne")]
    with override_settings(INSTALLED_APPS=apps_without_channels):
        assert ids() == []


def security_ids() -> list[str]:
    """The django_mcp messages of every registered security check (Django's own included, then filtered)."""
    return [message.id for message in checks.run_checks(tags=[checks.Tags.security])
            if message.id.startswith("django_mcp.")]


@override_settings(ALLOWED_HOSTS=["*"])
def test_wildcard_allowed_hosts_is_a_warning():
    assert security_ids() == ["django_mcp.W005"]
    from django_mcp.checks import check_allowed_hosts

    message = check_allowed_hosts()[0]
    assert message.level == checks.WARNING
    assert "DNS rebinding" in message.msg and "ALLOWED_ORIGINS" in message.msg
    assert "docs/security.md" in message.hint


@override_settings(ALLOWED_HOSTS=["mcp.example.com", ".example.org"])
def test_exact_and_subdomain_hosts_are_silent():
    assert security_ids() == []


def test_kept_connections_without_health_checks_are_a_warning():
    from django_mcp.checks import check_persistent_connections

    base = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    with override_settings(DATABASES={"default": {**base, "CONN_MAX_AGE": 60}}):
        [message] = check_persistent_connections()
        assert message.id == "django_mcp.W006" and "CONN_HEALTH_CHECKS" in message.hint
    with override_settings(DATABASES={"default": {**base, "CONN_MAX_AGE": None}}):
        assert [m.id for m in check_persistent_connections()] == ["django_mcp.W006"]
    for fine in ({**base, "CONN_MAX_AGE": 60, "CONN_HEALTH_CHECKS": True}, {**base, "CONN_MAX_AGE": 0}, base):
        with override_settings(DATABASES={"default": fine}):
            assert check_persistent_connections() == []


def test_a_setting_of_a_feature_app_that_is_not_installed_is_a_warning():
    from django.conf import settings

    without_call_log = [app for app in settings.INSTALLED_APPS if app != "django_mcp.call_log"]
    with override_settings(INSTALLED_APPS=without_call_log,
                           DJANGO_MCP={**settings.DJANGO_MCP, "CALL_LOG_REDACT": ["pin"]}):
        messages = [m for m in check_configuration() if m.id == "django_mcp.W008"]
    assert [m.msg.split(" is set")[0] for m in messages] == ['DJANGO_MCP["CALL_LOG"]', 'DJANGO_MCP["CALL_LOG_REDACT"]']
    assert 'Add "django_mcp.call_log" to INSTALLED_APPS' in messages[0].hint


def test_a_feature_app_refuses_to_start_without_the_apps_it_builds_on():
    config = apps.get_app_config("django_mcp_query_tools")
    with override_settings(INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "django_mcp"]):
        with pytest.raises(ImproperlyConfigured, match="builds on django_mcp.tool_admin, django_mcp.model_resources"):
            config.ready()


def test_changing_installed_apps_in_a_test_adds_no_second_source_to_the_default_site():
    # Django runs every app's ready() again under override_settings(INSTALLED_APPS=...): the
    # feature apps' sources must stay one each (AppConfig.ready() may run more than once).
    from django.conf import settings

    from django_mcp.sites import get_default_site

    site = get_default_site()
    before = {kind: [type(source) for source in site.sources(kind)] for kind in ("tool", "prompt", "resource")}
    with override_settings(INSTALLED_APPS=list(settings.INSTALLED_APPS)):
        pass
    after = {kind: [type(source) for source in site.sources(kind)] for kind in ("tool", "prompt", "resource")}
    assert after == before


def test_the_plain_view_where_mcp_path_says_is_no_warning() -> None:
    from django_mcp.checks import check_plain_view_path

    assert check_plain_view_path() == []  # tests.urls mounts it at /mcp


@override_settings(ROOT_URLCONF="tests.urls_plain_elsewhere")
def test_the_plain_view_elsewhere_than_mcp_path_is_a_warning() -> None:
    from django_mcp.checks import check_plain_view_path

    messages = check_plain_view_path()
    assert [message.id for message in messages] == ["django_mcp.W012"]
    assert "/api/v2/mcp" in messages[0].msg and "'/mcp'" in messages[0].msg
    with override_settings(DJANGO_MCP={"MCP_PATH": "/api/v2/mcp/"}):
        assert check_plain_view_path() == []
