"""
The library's MCP tools, resources and prompts tested as a Django app tests its views: with
django_mcp.test's client, in Django's TestCase, through the project's own ASGI application.

    python manage.py test example_project.library
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import TestCase

from django_mcp.test import ErrorResponse, McpClient, McpTestCase

from .models import Author, Book, Loan


class LibraryTests(McpTestCase, TestCase):
    """What the catalogue's clients can do, speaking 2026-07-28 (every request on its own)."""

    @classmethod
    def setUpTestData(cls):
        le_guin = Author.objects.create(name="Ursula K. Le Guin", born=1929)
        cls.earthsea = Book.objects.create(title="A Wizard of Earthsea", author=le_guin, published=1968,
                                           summary="A young wizard and his shadow.")
        cls.dispossessed = Book.objects.create(title="The Dispossessed", author=le_guin, published=1974,
                                               summary="Two worlds, one physicist.")
        User = get_user_model()
        cls.reader = User.objects.create_user("reader")
        cls.librarian = User.objects.create_user("librarian")
        cls.librarian.user_permissions.add(Permission.objects.get(codename="change_book"))

    def client_as(self, user, **options):
        """A client of this test's revision, signed in as ``user``, with ``options`` (answers…)."""
        client = McpClient(self.mcp_client.protocol_version, **options)
        client.force_authenticate(user)
        return client

    # --- searching ---------------------------------------------------------------------------------

    def test_search_finds_books_by_title_or_author(self):
        result = self.mcp_client.call_tool("search_books", query="earthsea")
        self.assertFalse(result.is_error)
        self.assertEqual([book["title"] for book in result.structured["result"]], ["A Wizard of Earthsea"])
        by_author = self.mcp_client.call_tool("search_books", query="le guin")
        self.assertEqual(len(by_author.structured["result"]), 2)

    def test_search_results_match_the_published_schema(self):
        result = self.mcp_client.call_tool("search_books", query="dispossessed", limit=1)
        self.assertStructuredValid("search_books", result)

    def test_a_limit_out_of_range_is_an_error_the_model_can_read(self):
        result = self.mcp_client.call_tool("search_books", query="x", limit=500)
        self.assertTrue(result.is_error)
        self.assertIn("limit", result.text)

    # --- lending and returning ----------------------------------------------------------------------

    def test_lending_asks_first_and_records_the_loan(self):
        client = self.client_as(self.reader, elicitation={"action": "accept", "content": {"confirm": True}})
        result = client.call_tool("lend_book", book_id=self.earthsea.pk)
        self.assertEqual(result.text, "Lent out: A Wizard of Earthsea.")
        self.assertEqual(result.structured, {"book_id": self.earthsea.pk, "available": False})
        self.assertEqual(client.answers.asked[0][1]["message"], "Lend 'A Wizard of Earthsea' by Ursula K. Le Guin?")
        self.assertTrue(Loan.objects.filter(book=self.earthsea, borrower=self.reader).exists())

    def test_a_declined_lend_changes_nothing(self):
        client = self.client_as(self.reader, elicitation={"action": "decline"})
        self.assertEqual(client.call_tool("lend_book", book_id=self.earthsea.pk).text, "Nothing changed.")
        self.earthsea.refresh_from_db()
        self.assertTrue(self.earthsea.available)

    def test_returning_is_for_librarians_only(self):
        Book.objects.filter(pk=self.dispossessed.pk).update(available=False)
        reader = self.client_as(self.reader)
        self.assertToolHidden("return_book", client=reader)
        self.assertCallRefused("return_book", {"book_id": self.dispossessed.pk}, code=-32602, client=reader)
        librarian = self.client_as(self.librarian)
        self.assertToolListed("return_book", client=librarian)
        self.assertEqual(librarian.call_tool("return_book", book_id=self.dispossessed.pk).text,
                         f"Returned book {self.dispossessed.pk}; librarian put it back on the shelf.")

    # --- a reader's own loans -------------------------------------------------------------------------

    def test_my_loans_are_for_signed_in_readers(self):
        self.assertToolHidden("my_loans")
        Loan.objects.create(book=self.earthsea, borrower=self.reader)
        summary = self.client_as(self.reader).call_tool("my_loans").structured
        self.assertEqual((summary["reader"], summary["count"]), ("reader", 1))
        self.assertEqual(summary["loans"][0]["title"], "A Wizard of Earthsea")

    def test_a_reader_reads_only_their_own_loans(self):
        theirs = Loan.objects.create(book=self.earthsea, borrower=self.librarian)
        mine = Loan.objects.create(book=self.dispossessed, borrower=self.reader)
        reader = self.client_as(self.reader)
        self.assertIn(f'"book": "library://book/{self.dispossessed.pk}"',
                      reader.read_resource(f"library://loan/{mine.pk}").text)
        with self.assertRaises(ErrorResponse):
            reader.read_resource(f"library://loan/{theirs.pk}")

    # --- progress, resources, prompts -------------------------------------------------------------

    def test_checking_the_shelves_reports_progress_shelf_by_shelf(self):
        result = self.mcp_client.call_tool("check_shelves", pause=0)
        self.assertEqual(result.text, "Checked 2 shelves: 0 book(s) out.")
        self.assertEqual([step["message"] for step in result.progress], ["Shelf A", "Shelf T"])
        self.assertNotified(result, "notifications/progress", progress=2, total=2)

    def test_each_book_is_a_resource(self):
        book = self.mcp_client.read_resource(f"library://book/{self.earthsea.pk}")
        self.assertEqual(book.mime_type, "application/json")
        self.assertIn('"title": "A Wizard of Earthsea"', book.text)

    def test_the_recommend_prompt_completes_author_names(self):
        self.assertEqual(self.mcp_client.complete("recommend", "author", "Urs").values, ["Ursula K. Le Guin"])
        prompt = self.mcp_client.get_prompt("recommend", author="Ursula K. Le Guin", mood="adventurous")
        self.assertIn("I enjoy books by Ursula K. Le Guin and I'm feeling adventurous.", prompt.text)


class LegacySessionLibraryTests(LibraryTests):
    """The same, through a 2025-11-25 session: initialize, then every request in the session."""

    mcp_protocol_version = "2025-11-25"
