"""Shared pieces of the prompt tests: a request context for a user, and template prompts from source."""

from typing import Any

from django.contrib.auth.models import AnonymousUser

from django_mcp.template_prompts.templates import TemplatePrompt
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era


def request_for(user: Any = None, method: str = "prompts/get") -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user or AnonymousUser(), method=method)


def from_source(source: str, name: str = "t", **attrs: Any) -> TemplatePrompt:
    """A TemplatePrompt whose template is ``source``."""
    return type("SourcePrompt", (TemplatePrompt,), {"name": name, "template_string": source, **attrs})()


def texts(result: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every message, with "<type>" for non-text content."""
    return [(m["role"], m["content"]["text"] if m["content"]["type"] == "text" else f"<{m['content']['type']}>")
            for m in result["messages"]]
