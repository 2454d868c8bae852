"""``django_mcp.asgi.application``: routing aside (tested with the transports), what building it does."""

import gc

import pytest

import django_mcp.asgi


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


async def django_app(scope, receive, send):
    raise AssertionError("not called")


def test_building_the_application_freezes_start_up_objects(unfrozen):
    assert gc.get_freeze_count() == 0
    django_mcp.asgi.application(django_app)
    assert gc.get_freeze_count() > 1000  # modules, settings, the site…


def test_the_freeze_can_be_switched_off(unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "FREEZE_STARTUP_OBJECTS": False}
    django_mcp.asgi.application(django_app)
    assert gc.get_freeze_count() == 0
