"""
A small site of its own for the tests of django_mcp.test: a tool for signed-in users only, one
that needs a scope, one whose structured content breaks its own schema, and a sync tool that
reads the database (the catalogue's writers), served by an ASGI application built like a project's.
"""

from typing import Any

from pydantic import BaseModel

from django_mcp import tool
from django_mcp.permissions import HasScopes, IsAuthenticated
from django_mcp.sites import McpSite


site = McpSite("test-client-shelf")


class Shelf(BaseModel):
    """How many writers the catalogue has."""

    writers: int


@tool(site=site, annotations={"readOnlyHint": True})
def count_writers() -> Shelf:
    """Count the catalogue's writers (a sync tool: the ORM on the request's thread)."""
    from tests.catalogue.models import Writer

    return Shelf(writers=Writer.objects.count())


@tool(site=site, permission_classes=[IsAuthenticated])
def members_only() -> str:
    """Only for signed-in users."""
    return "welcome"


@tool(site=site, permission_classes=[HasScopes("shelf:write")])
def rearrange() -> str:
    """Needs the shelf:write scope."""
    return "rearranged"


@tool(site=site, output_schema={"type": "object", "properties": {"writers": {"type": "integer"}},
                                "required": ["writers"]})
def broken_promise() -> dict[str, Any]:
    """Answers a string where its schema promises an integer."""
    return {"writers": "many"}


_app: Any = None


def application() -> Any:
    """The test project's ASGI application serving this site at /mcp (made once)."""
    global _app
    if _app is None:
        from django.core.asgi import get_asgi_application

        import django_mcp.asgi

        _app = django_mcp.asgi.application(get_asgi_application(), site=site)
    return _app
