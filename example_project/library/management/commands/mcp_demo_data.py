"""Load authors, books, readers and loans so the example server has something to show."""

import os
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from example_project.library.demo_prompts import create_demo_prompts, create_demo_query_tool
from example_project.library.models import Author, Book, Loan


DEMO = {
    ("Ursula K. Le Guin", 1929): [
        ("A Wizard of Earthsea", 1968, "A young mage's shadow hunts him across an archipelago."),
        ("The Left Hand of Darkness", 1969, "An envoy on a winter planet whose people have no fixed sex."),
        ("The Dispossessed", 1974, "A physicist between an anarchist moon and its capitalist twin."),
    ],
    ("Italo Calvino", 1923): [
        ("Invisible Cities", 1972, "Marco Polo describes impossible cities to Kublai Khan."),
        ("If on a winter's night a traveler", 1979, "A novel about reading a novel that keeps breaking off."),
    ],
    ("Octavia E. Butler", 1947): [
        ("Kindred", 1979, "A woman is pulled back in time to antebellum Maryland."),
        ("Parable of the Sower", 1993, "A young woman founds a new faith in a collapsing America."),
    ],
}


# A shelf of made-up small-press books, so that listing books takes several pages (100 rows each).
PRESS_AUTHORS = ["Ada Quill", "Bram Hollow", "Cora Vance", "Dmitri Sol", "Esme Arden", "Felix Marr",
                 "Greta Lind", "Hugo Pell", "Iris Okafor", "Jonas Reed", "Kira Maeda", "Luca Ferro"]
PRESS_WORDS = [("The Quiet", "Harbour"), ("A Map of", "Salt"), ("Under", "Lanterns"), ("The Glass", "Orchard"),
               ("Letters from", "the North"), ("The Long", "Winter"), ("Songs for", "Rivers"), ("The Last", "Lighthouse"),
               ("A House of", "Paper"), ("Night", "Ferries"), ("The Copper", "Garden"), ("Small", "Weathers"),
               ("The Hidden", "Stair"), ("Borrowed", "Light"), ("The Ninth", "Bell"), ("Winter", "Apples"),
               ("The Drowned", "Library"), ("Field Notes on", "Moths"), ("The Salt", "Road"), ("An Atlas of", "Rain")]


def press_books():
    """(author, born, [(title, year, summary)…]) for the made-up small press: 240 books."""
    for index, name in enumerate(PRESS_AUTHORS):
        books = [(f"{first} {second}" + (f", book {index + 1}" if index else ""), 1990 + (index * 7 + n) % 35,
                  f"A small-press novel by {name}.") for n, (first, second) in enumerate(PRESS_WORDS)]
        yield name, 1950 + index * 3, books


def demo_reader_token() -> str:
    """The reader's API token: ``$DEMO_READER_TOKEN``, or the demo's own (40 characters, as DRF's keys)."""
    return os.environ.get("DEMO_READER_TOKEN", "reader-demo-api-token-000000000000000000")


class Command(BaseCommand):
    help = "Create the example library's demo authors and books (idempotent)."

    @transaction.atomic
    def handle(self, *args, **options):
        created = 0
        shelves = [(name, born, books) for (name, born), books in DEMO.items()] + list(press_books())
        for name, born, books in shelves:
            author, _ = Author.objects.get_or_create(name=name, defaults={"born": born})
            for title, year, summary in books:
                _, made = Book.objects.get_or_create(title=title, author=author,
                                                     defaults={"published": year, "summary": summary})
                created += made
        # The librarian may take books back (library.change_book); MCP clients act as them with the
        # demo API key. No password: nobody logs in to the site as the librarian.
        librarian, _ = get_user_model().objects.get_or_create(username="librarian")
        librarian.set_unusable_password()
        librarian.save()
        librarian.user_permissions.add(Permission.objects.get(content_type__app_label="library", codename="change_book"))
        # The librarian sees every loan (library.view_loan); a reader sees only their own.
        librarian.user_permissions.add(Permission.objects.get(content_type__app_label="library", codename="view_loan"))
        # The query tool staff define in the admin (books_by_year) needs library.view_book; the
        # admin action tool (book_put_back_on_shelf) needs a staff member with library.change_book.
        librarian.user_permissions.add(Permission.objects.get(content_type__app_label="library", codename="view_book"))
        librarian.is_staff = True
        librarian.save(update_fields=["is_staff"])
        # The reader logs in on the OAuth consent flow (DEMO_OAUTH=1), as the staff admin does in the
        # admin; scripts/demo prints both passwords. Set on every start, so what it prints works.
        reader, _ = get_user_model().objects.get_or_create(username="reader")
        reader.set_password(os.environ.get("DEMO_READER_PASSWORD", "reader-demo-password"))
        reader.save()
        # The reader's REST API token (DRF's TokenAuthentication), which MCP clients may send too
        # (django_mcp.drf.DRFAuthentication): "Authorization: Token <key>". Set on every start.
        Token.objects.filter(user=reader).exclude(key=demo_reader_token()).delete()
        Token.objects.get_or_create(user=reader, key=demo_reader_token())
        admin, _ = get_user_model().objects.get_or_create(username=os.environ.get("DEMO_ADMIN_USER", "admin"))
        admin.is_staff = admin.is_superuser = True
        admin.set_password(os.environ.get("DEMO_ADMIN_PASSWORD", "admin-demo-password"))
        admin.save()
        for title in ("Kindred", "Invisible Cities"):
            book = Book.objects.get(title=title)
            if not Loan.objects.filter(book=book).exists():
                Loan.objects.create(book=book, borrower=reader)
                Book.objects.filter(pk=book.pk).update(available=False)
        # Another reader's loans, lent over the last months: the librarian's "loans per author" counts
        # them; the reader's own queries never see them, through any relation (query_models).
        neighbour, _ = get_user_model().objects.get_or_create(username="neighbour")
        neighbour.set_unusable_password()
        neighbour.save()
        for days, title in ((3, "The Quiet Harbour, book 2"), (35, "A Map of Salt, book 2"), (64, "The Quiet Harbour, book 3")):
            book = Book.objects.filter(title=title).first()
            if book is not None and not Loan.objects.filter(book=book).exists():
                Loan.objects.create(book=book, borrower=neighbour, lent_at=timezone.now() - timedelta(days=days))
                Book.objects.filter(pk=book.pk).update(available=False)
        create_demo_prompts()
        create_demo_query_tool()
        self.stdout.write(f"Demo data ready: {Author.objects.count()} authors, {Book.objects.count()} books "
                          f"({created} new), {Loan.objects.count()} loans, the librarian, two readers and the admin.")
