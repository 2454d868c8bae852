"""
Telling clients that published rows changed: a row saved or deleted anywhere (the admin, the
shell, a tool, another worker) sends ``notifications/resources/updated`` for its URI and
``notifications/resources/list_changed`` for the listing — after its transaction commits, and not
at all if it rolls back (MCP spec 2025-11-25, server/resources, "Subscriptions" and "List Changed
Notification"; 2026-07-28 delivers both on ``subscriptions/listen`` streams).

The changes of one transaction are sent together when it commits: each URI once, and one
``list_changed`` per model. They travel over the channel layer to every worker, and each stream
delivers them only if its user may see the row (``SiteBackend.may_notify``).

``QuerySet.update()`` and ``bulk_create()`` send no signals, so use the helpers for them::

    from django_mcp.resources import changes
    changes.update(Book.objects.filter(author=author), available=True)
    changes.notify_changed(books)                       # after any other bulk write
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from django.db import router, transaction
from django.db.models import QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_save

from ..fanout import BROADCAST_GROUP, NOTIFY, publish, resource_group
from ..model_options import ModelOptions


logger = logging.getLogger("django_mcp.resources")

#: How many changed URIs a ``list_changed`` carries for the per-stream visibility check.
VISIBILITY_URIS = 20

# Model → the resources publishing it (one per site), for the signals and the helpers. Weak: a
# site that is gone (a test's, say) stops being notified without unregistering first.
_resources: dict[Any, weakref.WeakSet[ModelOptions]] = {}


def connect(resource: ModelOptions) -> None:
    """Start notifying changes of ``resource``'s rows (called when the site registers the model)."""
    model = resource.model
    first = model not in _resources
    _resources.setdefault(model, weakref.WeakSet()).add(resource)
    if first:
        uid = f"django_mcp.changes.{model._meta.label}"
        post_save.connect(_saved, sender=model, dispatch_uid=uid, weak=False)
        post_delete.connect(_deleted, sender=model, dispatch_uid=uid, weak=False)
        for field in model._meta.many_to_many:
            m2m_changed.connect(_m2m_changed, sender=field.remote_field.through, dispatch_uid=f"{uid}.{field.name}",
                                weak=False)


def disconnect(resource: ModelOptions) -> None:
    """Stop notifying (called when the site unregisters the model)."""
    model = resource.model
    remaining = _resources.get(model)
    if remaining is not None:
        remaining.discard(resource)
        if remaining:
            return
    _resources.pop(model, None)
    uid = f"django_mcp.changes.{model._meta.label}"
    post_save.disconnect(sender=model, dispatch_uid=uid)
    post_delete.disconnect(sender=model, dispatch_uid=uid)
    for field in model._meta.many_to_many:
        m2m_changed.disconnect(sender=field.remote_field.through, dispatch_uid=f"{uid}.{field.name}")


def _saved(sender: Any, instance: Any, using: str, raw: bool = False, **kwargs: Any) -> None:
    if not raw:  # loaddata: fixtures are not changes anyone is watching
        record(sender, [instance], using=using)


def _deleted(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
    record(sender, [instance], using=using, deleted=True)


def _m2m_changed(sender: Any, instance: Any, action: str, using: str, reverse: bool, **kwargs: Any) -> None:
    if action.startswith("post_") and not reverse and _resources.get(type(instance)):
        record(type(instance), [instance], using=using)


def notify_changed(objects: Iterable[Any], *, deleted: bool = False, using: str | None = None) -> None:
    """Announce changes the ORM sent no signal for (``bulk_create``, raw SQL…), after the commit."""
    by_model: dict[Any, list[Any]] = {}
    for obj in objects:
        by_model.setdefault(type(obj), []).append(obj)
    for model, rows in by_model.items():
        record(model, rows, using=using or router.db_for_write(model), deleted=deleted)


def update(queryset: QuerySet, **values: Any) -> int:
    """``queryset.update(**values)``, then the change notifications ``update()`` alone does not send."""
    model = queryset.model
    if not _resources.get(model):
        return queryset.update(**values)
    with transaction.atomic(using=queryset.db):
        rows = list(queryset.select_for_update().only(*_lookup_fields(model)))
        count = queryset.filter(pk__in=[row.pk for row in rows]).update(**values)
        # Read again: the update may have changed the lookup field itself.
        changed = list(model._base_manager.using(queryset.db).filter(pk__in=[row.pk for row in rows])
                       .only(*_lookup_fields(model)))
        record(model, changed, using=queryset.db)
    return count


def _lookup_fields(model: Any) -> list[str]:
    """What building the rows' URIs reads: the primary key and each resource's lookup field."""
    return sorted({model._meta.pk.name} | {r.lookup_field for r in _resources[model] if r.lookup_field != "pk"})


def record(model: Any, objects: list[Any], *, using: str, deleted: bool = False) -> None:
    """Queue notifications for ``objects`` in the current transaction's batch (sent on commit)."""
    resources = list(_resources.get(model) or ())
    if not resources:
        return
    connection = transaction.get_connection(using)
    batch = _transaction_batch(connection, using) if connection.in_atomic_block else ChangeBatch()
    for resource in resources:
        for obj in objects:
            batch.add(resource, resource.get_object_uri(obj), deleted)
    if not connection.in_atomic_block:
        batch.flush()  # autocommit: the change is already committed


class ChangeBatch:
    """The changes of one transaction: URIs updated and models whose listing changed."""

    def __init__(self) -> None:
        self.updated: dict[str, str | None] = {}  # uri → model label if the row was deleted
        self.listings: dict[str, dict[str, Any]] = {}  # model label → {"uris": [...], "deleted": bool}

    def add(self, resource: ModelOptions, uri: str, deleted: bool) -> None:
        label = resource.opts.label
        self.updated[uri] = label if deleted else self.updated.get(uri)
        if resource.list_rows:
            listing = self.listings.setdefault(label, {"uris": [], "deleted": False})
            listing["deleted"] |= deleted
            if len(listing["uris"]) < VISIBILITY_URIS and uri not in listing["uris"]:
                listing["uris"].append(uri)

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        events = []
        for uri, deleted_from in self.updated.items():
            # A deleted row cannot be checked any more: the model's own permission decides.
            visibility = {"model": deleted_from} if deleted_from else {"uris": [uri]}
            events.append((resource_group(uri), {
                "type": NOTIFY, "kind": "resource", "uri": uri, "visibility": visibility,
                "message": {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}}))
        for label, listing in self.listings.items():
            visibility = {"model": label} if listing["deleted"] else {"model": label, "uris": listing["uris"]}
            events.append((BROADCAST_GROUP, {
                "type": NOTIFY, "kind": "resources", "visibility": visibility,
                "message": {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}}))
        return events

    def flush(self) -> None:
        events = self.events()
        self.updated, self.listings = {}, {}
        try:
            async_to_sync(_publish_all)(events)
        except Exception:
            # The data is committed whatever happens here; a lost notification must not undo it or fail the caller.
            logger.exception("Could not send %d change notifications", len(events))


async def _publish_all(events: list[tuple[str, dict[str, Any]]]) -> None:
    for group, event in events:
        await publish(group, event)


def _transaction_batch(connection: Any, using: str) -> ChangeBatch:
    """The batch of the transaction open on ``connection``, sent by ``on_commit``."""
    batch = getattr(connection, "django_mcp_changes", None)
    # A batch whose flush is no longer queued belongs to a transaction that rolled back.
    if batch is None or not any(entry[1] == batch.flush for entry in connection.run_on_commit):
        batch = ChangeBatch()
        connection.django_mcp_changes = batch
        transaction.on_commit(batch.flush, using=using)
    return batch
