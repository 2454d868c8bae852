"""
A site of views for the views app's tests (``django_mcp.ui``): a tool that shows a card rendered
from a template (the short form), a view as an options class with CSP origins, a tool only views
may call, a tool (and so its view) for signed-in users only, and a tool without a view. Its own
site, so the default site's listings stay as they are.
"""

from pydantic import BaseModel

from django_mcp import Tool
from django_mcp.permissions import IsAuthenticated
from django_mcp.sites import McpSite
from django_mcp.ui.tool_views import ToolViews
from django_mcp.ui.views import View


views_site = McpSite("views")
# The views app publishes the short form's views on the default site by itself; another site adds
# their source.
views_site.add_source(ToolViews(views_site))


class Book(BaseModel):
    """A book as the card shows it."""

    title: str
    available: bool


@views_site.tool(view="ui_tests/book_card.html", view_csp={"resourceDomains": ["https://covers.example.org"]})
def show_book(title: str) -> Book:
    """Show a book as a card."""
    return Book(title=title, available=True)


@views_site.tool(visibility=["app"])
def lend_from_view(title: str) -> str:
    """Lend a book (called by the card's button through the host)."""
    return f"Lent {title}."


class ShelfView(View):
    """The shelf, as a page."""

    uri = "ui://views/shelf"
    template_name = "ui_tests/book_card.html"
    csp = {"connectDomains": ["https://api.example.org", "wss://live.example.org:8443"]}
    permissions = ["clipboardWrite"]
    prefers_border = True


views_site.register(ShelfView)


class ShowShelf(Tool):
    """Show the shelf."""

    view = ShelfView

    def call(self) -> str:
        return "The shelf has 3 books."


views_site.register(ShowShelf)


@views_site.tool(view="ui_tests/book_card.html", permission_classes=[IsAuthenticated])
def my_card() -> Book:
    """A signed-in reader's card: the tool and its view are for signed-in users only."""
    return Book(title="Kindred", available=False)


@views_site.tool()
def plain_tool() -> str:
    """A tool without a view."""
    return "plain"
