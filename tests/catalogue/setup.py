"""
Fill a live server's database with the catalogue: run in a subprocess with the server's
environment (``python -m tests.catalogue.setup [entries]``), as application code would.
"""

import sys

import django


def main(entries: int) -> None:
    django.setup()
    from django.contrib.auth.models import Permission, User
    from django.core.files.base import ContentFile

    from tests.catalogue.models import Entry, Tag, Volume, Writer

    User.objects.create_superuser("admin", password="admin-pass")
    view = Permission.objects.get(codename="view_volume")
    for name in ("alice", "bob"):
        User.objects.create_user(name).user_permissions.add(view)
    User.objects.create_user("nobody")
    le_guin = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    calvino = Writer.objects.create(name="Italo Calvino", slug="calvino")
    sf = Tag.objects.create(name="sf")
    earthsea = Volume.objects.create(title="A Wizard of Earthsea", writer=le_guin, pages=183)
    earthsea.tags.add(sf)
    earthsea.scan.save("earthsea.pdf", ContentFile(b"%PDF-1.4 earthsea"))
    Volume.objects.create(title="Invisible Cities", writer=calvino, pages=165)
    Volume.objects.create(title="Alice's diary", writer=calvino, secret=True, owner=User.objects.get(username="alice"))
    for mode in ("legacy", "2026-07-28"):  # one per client era, for the notification tests
        Volume.objects.create(title=f"Notify {mode}", writer=le_guin)
    Entry.objects.bulk_create([Entry(number=n) for n in range(entries)], batch_size=2000)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
