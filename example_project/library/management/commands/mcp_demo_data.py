"""Load a few authors and books so the example server has something to show."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction

from example_project.library.demo_prompts import create_demo_prompts
from example_project.library.models import Author, Book


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


class Command(BaseCommand):
    help = "Create the example library's demo authors and books (idempotent)."

    @transaction.atomic
    def handle(self, *args, **options):
        created = 0
        for (name, born), books in DEMO.items():
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
        create_demo_prompts()
        self.stdout.write(f"Demo data ready: {Author.objects.count()} authors, {Book.objects.count()} books "
                          f"({created} new), and the librarian.")
