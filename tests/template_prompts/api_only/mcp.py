"""Prompts that need no template file, and one template file that cannot be served without an engine."""

from django_mcp import prompt, register, tool
from django_mcp.template_prompts.templates import TemplatePrompt


@prompt(description="Summarize a topic.")
def summarize(topic: str) -> str:
    return f"Summarize {topic} in three sentences."


@register()
class Brief(TemplatePrompt):
    """A brief written as a template string: django_mcp's own engine renders it."""

    template_string = ('{% load i18n mcp_prompts %}{% translate "Yes" %}: brief {{ subject|upper }} for {{ user }}.'
                       '{% message "assistant" %}Briefing on {{ subject }}.{% endmessage %}')

    def get_context_data(self, ctx, subject: str) -> dict:
        return {"subject": subject}


@tool()
def ping() -> str:
    """Answer pong."""
    return "pong"
