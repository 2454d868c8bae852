from django.apps import AppConfig


class ApiOnlyConfig(AppConfig):
    """The app of a project without a DjangoTemplates engine (settings.py beside it)."""

    name = "tests.template_prompts.api_only"
    label = "prompts_api_only"
