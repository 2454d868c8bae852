"""
The example's database prompt, as staff would write it in the admin (Django admin → MCP prompts).
``manage.py mcp_demo_data`` creates it; the prompts in files live in the top-level ``templates/``.
"""

from django_mcp.stored_prompts.models import McpPrompt


ASK_LIBRARIAN = """{% load i18n %}You are the librarian of a small lending library.
A reader{% if user.is_authenticated %} ({{ user.get_username }}){% endif %} asks:

{{ question }}

Answer from the catalogue: search it with search_books and read the book resources. Say so when the
catalogue does not have the answer, and suggest a book when one fits."""


def create_demo_prompts() -> int:
    """Create the demo's database prompts that do not exist yet (staff edits are kept); returns how many."""
    _, created = McpPrompt.objects.get_or_create(name="ask_librarian", defaults={
        "title": "Ask the librarian",
        "description": "A question for the library, answered from its catalogue.",
        "arguments": [{"name": "question", "description": "What you want to know"}],
        "template": ASK_LIBRARIAN,
    })
    return int(created)


def create_demo_query_tool() -> None:
    """
    A read-only query tool as staff would define it in the admin (MCP › Query tools): books by
    year range and title words, 20 rows a call. Left alone once it exists, so staff may edit it.
    """
    from django.contrib.contenttypes.models import ContentType

    from django_mcp.query_tools.models import McpQueryTool

    from .models import Book

    McpQueryTool.objects.get_or_create(name="books_by_year", defaults={
        "title": "Books by year",
        "description": "Books published in a range of years, optionally with words from the title.",
        "model": ContentType.objects.get_for_model(Book),
        "fields": ["title", "published", "available"],
        "filters": {"published": ["gte", "lte"], "title": ["icontains"]},
        "ordering": ["published", "title"],
        "row_limit": 20,
    })
