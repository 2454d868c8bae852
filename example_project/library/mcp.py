"""
The catalogue as an MCP server: the models published as resources (``ModelResource``, registered
like a ``ModelAdmin``), tools to search, lend and return books, and a prompt. Autodiscovered by
django_mcp, as ``admin.py`` is by the admin. Both forms of primitives are shown: decorated
functions (the short form) and options classes registered with ``@register()``.

Two tools show views (the MCP Apps extension, ``django_mcp.ui``): ``search_books`` shows its
results as cards (templates/library/views/book_browser.html) whose buttons lend a book through
the host, and ``my_loans`` shows a reader's loans. Clients that show views render them beside the
result; the others get the same complete results.
"""

import asyncio

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field

from django_mcp import Context, Resource, Tool, ToolError, prompt, register, tool
from django_mcp.admin_actions import register_admin_actions
from django_mcp.drf import register_view
from django_mcp.model_resources import ModelQueryTool, ModelResource
from django_mcp.permissions import AllowAny, HasPermission, IsAuthenticated
from django_mcp.sites import site
from django_mcp.tool_search import enable_tool_search

from .api import BookViewSet
from .models import Author, Book, Loan


# Models as resources ---------------------------------------------------------------------------------
#
# Each book is a resource at library://book/<id> (JSON, its author a link to library://author/<id>),
# listed a page at a time in resources/list; library://book/$schema describes the fields. Saving a
# book anywhere (the admin, a tool, the shell) notifies the clients subscribed to it.


@register(Book)
class BookResource(ModelResource):
    """A book in the catalogue, with its summary and whether it is on the shelf."""

    fields = ["title", "author", "published", "summary", "available"]
    search_fields = ["title", "author__name"]
    permission_classes = [AllowAny]  # the catalogue is public; loans are not
    queryable = True  # the query tool (query_models, below) may read, filter and join books


@register(Author)
class AuthorResource(ModelResource):
    fields = ["name", "born"]
    permission_classes = [AllowAny]
    queryable = True


@register(Loan)
class LoanResource(ModelResource):
    """Who borrowed which book. Readers see their own loans; the librarian sees everybody's."""

    fields = ["book", "borrower", "lent_at"]
    permission_classes = [IsAuthenticated]
    # Also as tools (search_loan, get_loan), for clients that show tools but not resources.
    tools = ["search", "get"]
    filter_fields = ["book"]
    # Queries see loans through get_queryset below, through every relation: a reader who asks for
    # "authors whose books were lent this month" counts only their own loans.
    queryable = True

    def get_queryset(self, ctx):
        loans = super().get_queryset(ctx).select_related("book", "borrower")
        return loans if ctx.user.has_perm("library.view_loan") else loans.filter(borrower=ctx.user.pk)


# Ad-hoc questions ----------------------------------------------------------------------------------------
#
# One read-only tool, query_models, answers questions no tool was written for ("loans per author since
# October") from a JSON query: Django lookups, fields, group_by and aggregates over the queryable
# resources above, filtered by each one's get_queryset for the user who asks, read-only, under a timeout.


@register()
class QueryLibrary(ModelQueryTool):
    """Answers ad-hoc questions about books, authors and loans: read-only, only the rows the user may see."""

    timeout_ms = 2000


# Tools ---------------------------------------------------------------------------------------------------


class BookOut(BaseModel):
    """A book as tools return it."""

    id: int
    title: str
    author: str
    published: int
    available: bool


def _out(book: Book) -> BookOut:
    return BookOut(id=book.pk, title=book.title, author=book.author.name, published=book.published,
                   available=book.available)


# view=: hosts that show views (Claude, ChatGPT, VS Code, Goose; docs/howto/interactive-views.md
# lists what each does) render the results with this template, at ui://default/search_books; its
# Lend buttons call lend_book through the host.
@tool(annotations={"readOnlyHint": True, "openWorldHint": False}, view="library/views/book_browser.html")
def search_books(query: str = Field(description="Words from the title or the author's name"),
                 limit: int = Field(10, ge=1, le=50, description="At most this many books")) -> list[BookOut]:
    """Search the catalogue by title or author."""
    books = Book.objects.select_related("author").filter(Q(title__icontains=query) | Q(author__name__icontains=query))
    return [_out(book) for book in books[:limit]]


@register()
class LendBook(Tool):
    """Mark a book as lent out, after the user confirms."""

    # The class form: options as attributes, the work in call(). Anyone may lend.
    annotations = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
    # Each answer is a sentence for the model and, as structured content, the book's state now
    # (outcome() below), from which the book browser view flips its card.
    output_schema = {"type": "object", "properties": {"book_id": {"type": "integer"}, "available": {"type": "boolean"}},
                     "required": ["book_id", "available"]}

    async def call(self, book_id: int, ctx: Context) -> dict:
        book = await Book.objects.select_related("author").filter(pk=book_id).afirst()
        if book is None:
            raise ToolError(f"No book with id {book_id}")  # its message is for the model
        if not book.available:
            return outcome(book, f"{book.title} is already lent out.")
        if ctx.has_capability("elicitation"):
            answer = await ctx.elicit(f"Lend '{book.title}' by {book.author.name}?",
                                      {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                       "required": ["confirm"]}, key="confirm")
            if answer.action != "accept" or not (answer.content or {}).get("confirm"):
                return outcome(book, "Nothing changed.")
        book.available = False
        await book.asave(update_fields=["available"])  # saving notifies the book's subscribers
        if ctx.user.is_authenticated:
            await Loan.objects.acreate(book=book, borrower=ctx.user)
        return outcome(book, f"Lent out: {book.title}.")


def outcome(book: Book, message: str) -> dict:
    """
    A CallToolResult built by hand: the sentence the model reads, and the book's state for the
    book browser view (which flips the card's badge from it).
    """
    return {"content": [{"type": "text", "text": message}],
            "structuredContent": {"book_id": book.pk, "available": book.available}, "isError": False}


class BookDetails(BookOut):
    """A book with its summary, as the book browser's Details button shows it."""

    summary: str


# visibility=["app"]: only views call it. Hosts keep it from the model; clients that did not declare
# the views extension do not see it at all (the card's data is in search_books' result already).
@tool(visibility=["app"], annotations={"readOnlyHint": True, "openWorldHint": False})
async def book_details(book_id: int) -> BookDetails:
    """One book with its summary and whether it is on the shelf now (for the book browser view)."""
    book = await Book.objects.select_related("author").filter(pk=book_id).afirst()
    if book is None:
        raise ToolError(f"No book with id {book_id}")
    return BookDetails(**_out(book).model_dump(), summary=book.summary)


class LoanOut(BaseModel):
    """One of a reader's loans."""

    book_id: int
    title: str
    author: str
    lent_at: str = Field(description="When it was lent, ISO 8601")
    days_out: int


class LoanSummary(BaseModel):
    """What a reader has borrowed."""

    reader: str
    loans: list[LoanOut]
    count: int


@tool(permission_classes=[IsAuthenticated], view="library/views/loan_summary.html",
      annotations={"readOnlyHint": True, "openWorldHint": False})
async def my_loans(ctx: Context) -> LoanSummary:
    """The books you have borrowed, newest first, with how long each has been out."""
    now = timezone.now()
    loans = [LoanOut(book_id=loan.book_id, title=loan.book.title, author=loan.book.author.name,
                     lent_at=loan.lent_at.isoformat(), days_out=(now - loan.lent_at).days)
             async for loan in Loan.objects.filter(borrower=ctx.user.pk).select_related("book__author")]
    return LoanSummary(reader=ctx.user.get_username(), loans=loans, count=len(loans))


@register()
class ReturnBook(Tool):
    """Take a lent book back into the catalogue (librarians only)."""

    annotations = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
    # Hidden from everyone else: not in their tools/list, and "unknown tool" if they call it.
    # Try it with the librarian's API key: X-Api-Key: librarian-demo-key.
    permission_classes = [IsAuthenticated & HasPermission("library.change_book")]

    async def call(self, book_id: int, ctx: Context) -> str:
        book = await Book.objects.filter(pk=book_id, available=False).afirst()
        if book is None:
            return f"Book {book_id} is not lent out."
        book.available = True
        await book.asave(update_fields=["available"])
        await Loan.objects.filter(book=book).adelete()
        return f"Returned book {book_id}; {ctx.user.username} put it back on the shelf."


@tool(annotations={"readOnlyHint": True, "openWorldHint": False})
async def check_shelves(ctx: Context, pause: float = Field(0.05, ge=0, le=1, description="Seconds per shelf")) -> str:
    """Walk the shelves and count the books that are out, reporting progress shelf by shelf."""
    shelves = [letter async for letter in _shelf_letters()]
    out = 0
    for done, letter in enumerate(shelves, start=1):
        out += await Book.objects.filter(title__istartswith=letter, available=False).acount()
        await ctx.report_progress(done, len(shelves), f"Shelf {letter}")
        await asyncio.sleep(pause)  # a real inventory takes its time
    return f"Checked {len(shelves)} shelves: {out} book(s) out."


@tool(task_support="optional", annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False})
async def audit_books(ctx: Context, pause: float = Field(0.1, ge=0, le=2, description="Seconds per book")) -> str:
    """
    Audit every book of the catalogue (summary, year, author), reporting progress book by book. It
    takes a while, so clients that support MCP tasks get a task handle at once and follow it; the
    work runs in the task worker (scripts/demo starts one) and survives the client going away.
    """
    problems: list[str] = []
    total = await Book.objects.acount()
    done = 0
    async for book in Book.objects.select_related("author").order_by("pk"):
        done += 1
        if not book.summary.strip():
            problems.append(f"{book.title}: no summary")
        if not 1400 <= book.published <= 2100:
            problems.append(f"{book.title}: unlikely year {book.published}")
        await ctx.report_progress(done, total, f"Audited {book.title}")
        await asyncio.sleep(pause)  # a real audit looks further: scans, prices, availability
    found = "\n".join(f"- {problem}" for problem in problems) or "nothing to report"
    return f"Audited {total} books: {len(problems)} problem(s).\n{found}"


async def _shelf_letters():
    seen = set()
    async for title in Book.objects.values_list("title", flat=True):
        letter = title[:1].upper()
        if letter and letter not in seen:
            seen.add(letter)
            yield letter


# The REST API's viewset (api.py) as tools: book_list and book_retrieve run through its dispatch().
register_view(BookViewSet, actions=["list", "retrieve"], prefix="book", path="/api/books/")

# The admin's "put back on the shelf" action (admin.py) as the tool book_put_back_on_shelf: staff
# with library.change_book see it; the admin's log records what it did.
register_admin_actions(Book)


@register()
class Authors(Resource):
    """Every author in the catalogue."""

    uri = "library://authors"
    name = "authors"
    mime_type = "application/json"

    def read(self) -> list[dict]:
        return [{"id": a.pk, "name": a.name, "born": a.born} for a in Author.objects.all()]


def _author_names(value: str, context: dict[str, str]) -> list[str]:
    return list(Author.objects.filter(name__istartswith=value).values_list("name", flat=True)[:20])


@prompt(description="Ask for a reading recommendation in the style of an author.",
        complete={"author": _author_names})
def recommend(author: str, mood: str = "curious") -> str:
    return (f"I enjoy books by {author} and I'm feeling {mood}. Using the library catalogue, "
            f"recommend three books I could borrow next and say why.")


# DEMO_TOOL_SEARCH=1 (settings.py): a short tools/list, the rest found by search_tools; every tool,
# the admin's rows and the query tools included, stays callable by name behind its permissions.
if settings.DEMO_TOOL_SEARCH:
    enable_tool_search(site, pinned=["search_books", "lend_book", "query_models"])
