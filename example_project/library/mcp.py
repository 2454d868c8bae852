"""
The catalogue as an MCP server: tools to search, lend and return books, resources for each book
and author, and a prompt. Autodiscovered by django_mcp, as ``admin.py`` is by the admin. Both
forms are shown: decorated functions (the short form) and options classes registered with
``@register()``, which is what the decorators build.
"""

from django.db.models import Q
from pydantic import BaseModel, Field

from django_mcp import Context, Resource, Tool, prompt, register, resource, tool
from django_mcp.notifications import anotify_resource_updated
from django_mcp.permissions import HasPermission, IsAuthenticated

from .models import Author, Book


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


@tool(annotations={"readOnlyHint": True, "openWorldHint": False})
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

    async def call(self, book_id: int, ctx: Context) -> str:
        book = await Book.objects.select_related("author").filter(pk=book_id).afirst()
        if book is None:
            raise ValueError(f"No book with id {book_id}")
        if not book.available:
            return f"{book.title} is already lent out."
        if ctx.has_capability("elicitation"):
            answer = await ctx.elicit(f"Lend '{book.title}' by {book.author.name}?",
                                      {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                       "required": ["confirm"]}, key="confirm")
            if answer.action != "accept" or not (answer.content or {}).get("confirm"):
                return "Nothing changed."
        await Book.objects.filter(pk=book_id).aupdate(available=False)
        await anotify_resource_updated(f"library://books/{book_id}")
        return f"Lent out: {book.title}."


@register()
class ReturnBook(Tool):
    """Take a lent book back into the catalogue (librarians only)."""

    annotations = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
    # Hidden from everyone else: not in their tools/list, and "unknown tool" if they call it.
    # Try it with the librarian's API key: X-Api-Key: librarian-demo-key.
    permission_classes = [IsAuthenticated & HasPermission("library.change_book")]

    async def call(self, book_id: int, ctx: Context) -> str:
        updated = await Book.objects.filter(pk=book_id, available=False).aupdate(available=True)
        if not updated:
            return f"Book {book_id} is not lent out."
        await anotify_resource_updated(f"library://books/{book_id}")
        return f"Returned book {book_id}; {ctx.user.username} put it back on the shelf."


@resource("library://books/{book_id}", name="book", description="One book with its summary.",
          mime_type="application/json")
def book(book_id: str) -> dict:
    found = Book.objects.select_related("author").filter(pk=book_id).first()
    if found is None:
        raise LookupError(book_id)
    return {**_out(found).model_dump(), "summary": found.summary}


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
