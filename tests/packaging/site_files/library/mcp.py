"""
The installed-package test's ``mcp.py`` (tests/packaging), copied into a project made by the fresh
venv's ``django-admin startproject``: what README.md "Using it in your project" has an app register.
"""

from django_mcp import Context, register, tool
from django_mcp.model_resources import ModelResource

from .models import Book


@tool(annotations={"readOnlyHint": True})
async def whoami(ctx: Context) -> str:
    """Who the call runs as, and the scopes of its credential."""
    who = ctx.user.get_username() if ctx.user.is_authenticated else "anonymous"
    return " ".join([who, *sorted(ctx.scopes or ())])


@tool(view="library/shelf_card.html")
def shelf_card(title: str) -> str:
    """A card for a shelf, shown as a view by hosts that show views (django_mcp.ui)."""
    return f"The shelf {title}."


@register(Book)
class BookResource(ModelResource):
    fields = ["title"]
