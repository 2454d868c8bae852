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


@pytest.fixture
def gc_threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_building_the_application_raises_the_young_generations_threshold(gc_threshold, unfrozen):
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (10_000, 10, 10)


def test_the_threshold_comes_from_the_setting_and_is_never_lowered(gc_threshold, unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "GC_THRESHOLD": 5_000}
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (5_000, 10, 10)
    gc.set_threshold(50_000, 10, 10)
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (50_000, 10, 10)


def test_the_threshold_can_be_left_alone(gc_threshold, unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "GC_THRESHOLD": None}
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (700, 10, 10)
