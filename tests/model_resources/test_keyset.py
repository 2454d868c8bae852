"""Keyset pagination: every row exactly once, stable under inserts and deletes, bad positions refused."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_mcp.protocol.errors import InvalidParams
from django_mcp.model_resources.keyset import Keyset
from tests.catalogue.models import Entry, Volume, Writer


pytestmark = pytest.mark.django_db


def walk(keyset: Keyset, queryset, size: int) -> list:
    """Every row, ``size`` at a time, following positions as a client follows cursors."""
    seen, position = [], None
    while True:
        page = list(keyset.after(queryset, position)[:size])
        seen.extend(page)
        if len(page) < size:
            return seen
        position = keyset.position_of(page[-1])


def test_ordering_with_duplicates_is_made_total_by_the_primary_key():
    Entry.objects.bulk_create([Entry(number=n % 7) for n in range(60)])
    keyset = Keyset(Entry, ["-number"])
    assert keyset.order_by == ["-number", "id"]
    rows = walk(keyset, Entry.objects.all(), 9)
    assert [row.pk for row in rows] == list(Entry.objects.order_by("-number", "id").values_list("pk", flat=True))


def test_positions_survive_inserts_and_deletes_between_pages():
    Entry.objects.bulk_create([Entry(number=n) for n in range(0, 100, 2)])
    keyset = Keyset(Entry, ["number"])
    first = list(keyset.after(Entry.objects.all(), None)[:10])
    position = keyset.position_of(first[-1])  # after number 18
    Entry.objects.filter(number__in=[0, 20, 22]).delete()  # one already seen, two not yet
    Entry.objects.bulk_create([Entry(number=1), Entry(number=21)])  # one before the position, one after
    rest = walk(keyset, keyset.after(Entry.objects.all(), position), 7)
    numbers = [row.number for row in first + rest]
    # Rows that stayed appear exactly once; the deleted unseen ones and the insert behind us do not.
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers))
    assert 21 in numbers and 1 not in numbers and 20 not in numbers and 22 not in numbers
    assert set(range(24, 100, 2)) <= set(numbers)


def test_positions_are_strings_that_round_trip_every_type():
    writer = Writer.objects.create(name="A", slug="a")
    Volume.objects.create(title="x", writer=writer)
    keyset = Keyset(Volume, ["-added", "price", "ref"])
    volume = Volume.objects.get()
    position = keyset.position_of(volume)
    assert all(isinstance(value, str) for value in position)
    assert list(keyset.after(Volume.objects.all(), position)) == []
    assert keyset.parse(position)[0] == volume.added


@pytest.mark.parametrize("position", [["x"], [1, 2, 3], "7", {"number": 1}, ["not a number", "1"]])
def test_a_position_that_does_not_fit_is_invalid_params(position):
    with pytest.raises(InvalidParams, match="Invalid cursor"):
        Keyset(Entry, ["number"]).parse(position)


def test_orderings_keyset_cannot_follow_are_refused():
    with pytest.raises(ImproperlyConfigured, match="allows NULL"):
        Keyset(Volume, ["published"])
    with pytest.raises(ImproperlyConfigured, match="not a field"):
        Keyset(Volume, ["nope"])
    with pytest.raises(ImproperlyConfigured, match="concrete field"):
        Keyset(Volume, ["tags"])
    assert Keyset(Volume, ["pk", "title"]).order_by == ["id"]  # nothing after the primary key matters
