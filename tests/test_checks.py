"""django_mcp's system checks, each id triggered and each clean configuration silent."""

from django.core import checks
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


def test_channels_must_be_installed():
    from django.conf import settings

    apps_without_channels = [app for app in settings.INSTALLED_APPS if app != "channels"]
    with override_settings(INSTALLED_APPS=apps_without_channels):
        assert "django_mcp.E001" in ids()
