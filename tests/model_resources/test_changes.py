"""
Change notifications of model resources, on the in-memory channel layer: sent after the commit,
once per change, not at all after a rollback; bulk updates through the helper; and the check each
stream makes before delivering (``SiteBackend.may_notify``).
"""

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import Permission, User
from django.db import transaction

from django_mcp.fanout import BROADCAST_GROUP, resource_group
from django_mcp.model_resources import changes
from django_mcp.transports.visibility import may_deliver
from tests.catalogue.models import Volume, Writer
from tests.catalogue.sites import site


pytestmark = pytest.mark.django_db(transaction=True)


class Listener:
    """A channel in the groups a subscribed stream would join."""

    def __init__(self) -> None:
        self.layer = get_channel_layer()

    async def join(self, *groups: str) -> "Listener":
        self.channel = await self.layer.new_channel()
        for group in groups:
            await self.layer.group_add(group, self.channel)
        return self

    async def events(self, wait: float = 0.3) -> list[dict[str, Any]]:
        found = []
        while True:
            try:
                found.append(await asyncio.wait_for(self.layer.receive(self.channel), wait))
            except asyncio.TimeoutError:
                return found


@pytest.fixture
async def volume() -> Volume:
    writer = await Writer.objects.acreate(name="Octavia E. Butler", slug="butler")
    return await Volume.objects.acreate(title="Kindred", writer=writer)


def methods(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["message"]["method"], e["message"].get("params", {}).get("uri")) for e in events]


async def test_a_save_notifies_subscribers_and_list_listeners_once(volume):
    uri = f"catalogue://volume/{volume.pk}"
    listener = await Listener().join(resource_group(uri), BROADCAST_GROUP)
    volume.pages = 264
    await volume.asave()
    events = await listener.events()
    assert methods(events) == [("notifications/resources/updated", uri),
                               ("notifications/resources/list_changed", None)]
    assert events[0]["visibility"] == {"uris": [uri]}
    assert events[1]["visibility"] == {"model": "catalogue.Volume", "uris": [uri]}


async def test_changes_wait_for_the_commit_and_vanish_with_a_rollback(volume):
    uri = f"catalogue://volume/{volume.pk}"
    listener = await Listener().join(resource_group(uri), BROADCAST_GROUP)

    def three_saves_then(outcome: str) -> None:
        try:
            with transaction.atomic():
                for pages in (1, 2, 3):
                    volume.pages = pages
                    volume.save()
                if outcome == "rollback":
                    raise RuntimeError
        except RuntimeError:
            pass

    await database_sync_to_async(three_saves_then)("rollback")
    assert await listener.events() == []
    await database_sync_to_async(three_saves_then)("commit")
    # Three saves in one transaction: one update for the URI, one list change for the model.
    assert methods(await listener.events()) == [("notifications/resources/updated", uri),
                                                ("notifications/resources/list_changed", None)]


async def test_a_delete_is_checked_against_the_model_not_the_gone_row(volume):
    uri = f"catalogue://volume/{volume.pk}"
    listener = await Listener().join(resource_group(uri), BROADCAST_GROUP)
    await volume.adelete()
    events = await listener.events()
    assert methods(events)[0] == ("notifications/resources/updated", uri)
    assert [e["visibility"] for e in events] == [{"model": "catalogue.Volume"}] * 2


async def test_bulk_update_through_the_helper_notifies_each_row(volume):
    other = await Volume.objects.acreate(title="Dawn", writer_id=volume.writer_id)
    uris = {f"catalogue://volume/{pk}" for pk in (volume.pk, other.pk)}
    listener = await Listener().join(*(resource_group(uri) for uri in uris))
    count = await database_sync_to_async(changes.update)(Volume.objects.filter(writer_id=volume.writer_id),
                                                        in_print=False)
    assert count == 2
    assert {uri for _, uri in methods(await listener.events())} == uris
    await database_sync_to_async(Volume.objects.filter(pk=volume.pk).update)(pages=1)  # plain update(): silent
    assert await listener.events() == []
    await database_sync_to_async(changes.notify_changed)([volume])
    assert methods(await listener.events()) == [("notifications/resources/updated", f"catalogue://volume/{volume.pk}")]


async def test_only_users_who_may_see_the_row_get_its_notifications(volume):
    def users() -> tuple[User, User, User]:
        view = Permission.objects.get(codename="view_volume")
        made = []
        for name in ("alice", "bob", "nobody"):
            user = User.objects.create_user(name)
            if name != "nobody":
                user.user_permissions.add(view)
            made.append(User.objects.get(pk=user.pk))
        return tuple(made)

    alice, bob, nobody = await database_sync_to_async(users)()
    uri = f"catalogue://volume/{volume.pk}"

    def updated() -> dict[str, Any]:  # each change is announced as an event of its own
        return {"visibility": {"uris": [uri]}}

    assert await may_deliver(updated(), site, user=bob)
    assert not await may_deliver(updated(), site, user=nobody)
    volume.secret, volume.owner = True, alice
    await volume.asave()
    assert await may_deliver(updated(), site, user=alice) and not await may_deliver(updated(), site, user=bob)
    deleted = {"visibility": {"model": "catalogue.Volume"}}
    assert await may_deliver(deleted, site, user=bob) and not await may_deliver(deleted, site, user=nobody)
    assert await may_deliver({"message": {}}, site, user=nobody)  # no rule: a plain list change


async def test_an_event_is_checked_once_per_viewer_however_many_streams_it_reaches(volume):
    # The worker hands one event to every stream of its (transports/shared_groups.py): a user's
    # streams share one check, other users and other credentials have their own.
    def users() -> tuple[User, User]:
        view = Permission.objects.get(codename="view_volume")
        made = []
        for name in ("carol", "dave"):
            user = User.objects.create_user(name)
            user.user_permissions.add(view)
            made.append(User.objects.get(pk=user.pk))
        return tuple(made)

    carol, dave = await database_sync_to_async(users)()

    class CountingBackend:
        """The catalogue site, counting the visibility checks asked of it."""

        asked: list[str] = []

        async def may_notify(self, visibility: dict[str, Any], ctx: Any) -> bool:
            self.asked.append(ctx.user.username)
            return await site.may_notify(visibility, ctx)

    backend = CountingBackend()
    event = {"visibility": {"uris": [f"catalogue://volume/{volume.pk}"]}}
    streams = [(carol, None)] * 50 + [(dave, None)] * 50 + [(carol, "token-1"), (carol, "token-1")]
    decisions = await asyncio.gather(*(may_deliver(event, backend, user=user, auth=auth) for user, auth in streams))
    assert all(decisions)
    # carol and dave with no credential once each; carol's token, one object on two streams, once more.
    assert sorted(backend.asked) == ["carol", "carol", "dave"]
    # A new event is a new decision: nothing is carried from one announcement to the next.
    assert await may_deliver({"visibility": dict(event["visibility"])}, backend, user=carol)
    assert sorted(backend.asked) == ["carol", "carol", "carol", "dave"]


async def test_unregistering_stops_the_notifications():
    from django_mcp.sites import McpSite
    other = McpSite("other")
    other.register(Writer, fields=["name"])
    writer = await Writer.objects.acreate(name="N. K. Jemisin", slug="jemisin")
    listener = await Listener().join(resource_group(f"catalogue://writer/{writer.slug}"),
                                     resource_group(f"catalogue://writer/{writer.pk}"))
    await writer.asave()
    # Both sites publish writers (by slug on the catalogue site, by pk on the other).
    assert len(await listener.events()) == 2
    other.unregister(Writer)
    await writer.asave()
    assert len(await listener.events()) == 1
