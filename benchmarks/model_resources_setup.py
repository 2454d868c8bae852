"""
The rows of ``model_resources.py``, written through Django in a child process.

    python -m benchmarks.model_resources_setup '{"entries": 9000}'

Run with the benchmark server's environment (``tests.live.server_env``), so it writes to the same
fresh PostgreSQL database the server reads. One JSON job on the command line, one JSON answer on
the last line of stdout. Jobs:

- ``{"entries": K}``: K more ``tests.catalogue.models.Entry`` rows (``bulk_create``), numbered on
  from the last one;
- ``{"volumes": K, "user": NAME}``: K more ``Volume`` rows, each with a writer (one of 50) and two
  of 20 tags, and the user NAME holding ``catalogue.view_volume`` (the API key of the test app's
  ``ApiKeyAuthentication`` is ``NAME-key``);
- ``{"clear_volumes": true}``: empty the volume, writer and tag tables (TRUNCATE).

Each answer names the model's table, primary-key column, URI prefix on the catalogue site and row
count, so the orchestrator reads the database and builds URIs without importing Django itself.

The session turns ``log_statement`` off for itself (the benchmark database logs every statement,
see ``model_resources_log.py``): a 100,000-row insert would otherwise write megabytes to the shared
PostgreSQL log for nothing.
"""

from __future__ import annotations

import json
import sys

import django

BATCH = 5000
WRITERS = 50
TAGS = 20


def quiet_session() -> None:
    """Keep this process's statements out of the PostgreSQL log."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET log_statement = 'none'")


def describe(model) -> dict:
    """What the orchestrator needs to know about ``model``'s rows and their URIs."""
    from tests.catalogue.sites import site

    options = site.model_options_or_none(model)
    return {"table": model._meta.db_table, "pk_column": model._meta.pk.column,
            "prefix": options.prefix if options is not None else None, "count": model._default_manager.count()}


def add_entries(count: int) -> dict:
    """``count`` more entries; bulk_create sends no signals, so no change notifications either."""
    from django.db.models import Max

    from tests.catalogue.models import Entry

    start = (Entry.objects.aggregate(last=Max("number"))["last"] or 0) + 1
    Entry.objects.bulk_create((Entry(number=n) for n in range(start, start + count)), batch_size=BATCH)
    return describe(Entry)


def reader(username: str):
    """An active, non-staff user with the view permission of volumes only (what DjangoModelPermissions asks)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user, _ = get_user_model()._default_manager.get_or_create(username=username)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="catalogue", codename="view_volume"))
    return user


def add_volumes(count: int, username: str) -> dict:
    """``count`` more volumes over a fixed set of writers and tags, each volume with two tags."""
    from tests.catalogue.models import Tag, Volume, Writer

    reader(username)
    writers = list(Writer.objects.all()) or Writer.objects.bulk_create(
        Writer(name=f"Writer {n:02d}", slug=f"writer-{n:02d}") for n in range(WRITERS))
    tags = list(Tag.objects.all()) or Tag.objects.bulk_create(Tag(name=f"tag-{n:02d}") for n in range(TAGS))
    start = Volume.objects.count()
    # Titles sort in insertion order; the listing orders by title (VolumeResource.ordering).
    volumes = Volume.objects.bulk_create(
        (Volume(title=f"Volume {n:07d}", writer=writers[n % len(writers)], pages=100 + n % 900)
         for n in range(start, start + count)), batch_size=BATCH)
    through = Volume.tags.through
    links = [through(volume_id=volume.pk, tag_id=tags[(i + k) % len(tags)].pk)
             for i, volume in enumerate(volumes, start) for k in (0, 7)]
    through.objects.bulk_create(links, batch_size=BATCH)
    return describe(Volume)


def clear_volumes() -> dict:
    """Empty the tables behind volumes, so the entry listings that follow hold entries only."""
    from django.db import connection

    from tests.catalogue.models import Tag, Volume, Writer

    tables = [Volume.tags.through._meta.db_table, Volume._meta.db_table, Writer._meta.db_table, Tag._meta.db_table]
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE " + ", ".join(connection.ops.quote_name(t) for t in tables) + " CASCADE")
    return describe(Volume)


def main(job: dict) -> dict:
    django.setup()
    quiet_session()
    if "entries" in job:
        return add_entries(int(job["entries"]))
    if "volumes" in job:
        return add_volumes(int(job["volumes"]), job["user"])
    if job.get("clear_volumes"):
        return clear_volumes()
    raise SystemExit(f"unknown job {job!r}")


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
