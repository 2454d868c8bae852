from django.apps import AppConfig


class TestAppConfig(AppConfig):
    """Fixtures for django_mcp's own tests (beside the conformance fixtures)."""

    name = "tests.testapp"
    label = "testapp"
