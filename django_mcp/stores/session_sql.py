"""
The statements legacy sessions cost: the three of a session stored when it opens (opening one,
counting a principal's open sessions, deleting one), reading one (each GET stream that opens
does), written as SQL instead of compiled by the ORM each time, and those of sessions whose rows
are written later (stores/pending_rows.py): the batch, the single row a worker writes for a
session it serves, and the tombstone of one ended young.

Building and compiling the query took most of their time: in a profile of a cold session
(``initialize`` … ``DELETE``) on SQLite, ``objects.create()`` cost about 430 us, the bounded count
about 600 us and ``filter().delete()``, with its cascade collector, about 1,600 us, where the
statements themselves run in 40-100 us. Values still pass through each field's own
``get_db_prep_*`` (JSON, datetimes, IP addresses, as the backend wants them) and names through
``quote_name``, so the SQL is the same on every database Django supports; Django's own database
cache backend works the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connections, models, router, transaction
from django.db.models.constants import OnConflict
from django.utils import timezone


def _connection(model: type[models.Model]) -> Any:
    # Writes and the count that guards them go to one database: the count must see its writes.
    return connections[router.db_for_write(model)]


def insert(model: type[models.Model], values: dict[str, Any]) -> None:
    """``INSERT`` one row of ``model`` with ``values`` (field name → Python value)."""
    connection = _connection(model)
    quote = connection.ops.quote_name
    meta = model._meta
    fields = [meta.get_field(name) for name in values]
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    params = [field.get_db_prep_save(values[field.name], connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def read(model: type[models.Model], pk: Any) -> models.Model | None:
    """The row ``pk`` of ``model`` as an instance (every concrete field loaded), or None."""
    connection = _connection(model)
    sql, _converters = _reading(model, connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, [model._meta.pk.get_db_prep_value(pk, connection)])
        # fetchall, not fetchone: SQLite keeps a statement not stepped to its end active after
        # the cursor closes, and another connection's write to the table then fails at once
        # ("database table is locked") in the in-memory databases tests share.
        rows = cursor.fetchall()
    return instance(model, connection, rows[0]) if rows else None


def columns(model: type[models.Model], connection: Any) -> str:
    """Every concrete column of ``model``, quoted and in field order: what :func:`instance` takes."""
    return _reading(model, connection)[0].split(" FROM ", 1)[0].removeprefix("SELECT ")


def instance(model: type[models.Model], connection: Any, row: Any) -> models.Model:
    """The instance of ``model`` a row of :func:`columns` makes, each value converted as the ORM would."""
    values = list(row)
    for index, expression, functions in _reading(model, connection)[1]:
        for convert in functions:
            values[index] = convert(values[index], expression, connection)
    return model.from_db(connection.alias, [field.attname for field in model._meta.concrete_fields], values)


def update_live(model: type[models.Model], pk: Any, values: dict[str, Any]) -> int:
    """``UPDATE`` the row ``pk`` of ``model`` with ``values`` unless it has ended; how many rows changed."""
    connection = _connection(model)
    quote = connection.ops.quote_name
    meta = model._meta
    fields = [meta.get_field(name) for name in values]
    ended = meta.get_field("ended")
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    params = [field.get_db_prep_save(values[field.name], connection) for field in fields]
    params += [meta.pk.get_db_prep_value(pk, connection), ended.get_db_prep_value(False, connection)]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {quote(meta.db_table)} SET {assignments} "
                       f"WHERE {quote(meta.pk.column)} = %s AND {quote(ended.column)} = %s", params)
        return cursor.rowcount


def returns_from_update(connection: Any) -> bool:
    """Whether ``UPDATE … RETURNING`` works on ``connection`` (PostgreSQL, SQLite 3.35 and later)."""
    return connection.vendor == "postgresql" or (
        connection.vendor == "sqlite" and connection.features.can_return_columns_from_insert)


_readings: dict[tuple[type[models.Model], str, str], tuple[str, list[tuple[int, Any, list[Any]]]]] = {}


def _reading(model: type[models.Model], connection: Any) -> tuple[str, list[tuple[int, Any, list[Any]]]]:
    """The ``SELECT`` of one row by its key, and the converters of its columns (as the ORM's compiler finds them)."""
    cached = _readings.get((model, connection.alias, connection.vendor))
    if cached is not None:
        return cached
    quote = connection.ops.quote_name
    meta = model._meta
    fields = meta.concrete_fields
    sql = (f"SELECT {', '.join(quote(field.column) for field in fields)} FROM {quote(meta.db_table)} "
           f"WHERE {quote(meta.pk.column)} = %s")
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(meta.db_table)
        functions = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if functions:
            converters.append((index, column, functions))
    _readings[(model, connection.alias, connection.vendor)] = (sql, converters)
    return sql, converters


def count_held(model: type[models.Model], user_key: str, client_address: str | None, since: datetime,
               limit: int) -> int:
    """
    How many sessions of this principal were seen since ``since``, counting no further than
    ``limit`` (a principal far past the limit costs no more than one at it).
    """
    connection = _connection(model)
    quote = connection.ops.quote_name
    meta = model._meta
    user, address, seen, ended = (meta.get_field(name) for name in
                                  ("user_key", "client_address", "last_seen_at", "ended"))
    params: list[Any] = [user.get_db_prep_value(user_key, connection)]
    if client_address is None:
        address_test = f"{quote(address.column)} IS NULL"
    else:
        address_test = f"{quote(address.column)} = %s"
        params.append(address.get_db_prep_value(client_address, connection))
    params += [seen.get_db_prep_value(since, connection), ended.get_db_prep_value(False, connection), limit]
    sql = (f"SELECT COUNT(*) FROM (SELECT 1 FROM {quote(meta.db_table)} WHERE {quote(user.column)} = %s "
           f"AND {address_test} AND {quote(seen.column)} >= %s AND {quote(ended.column)} = %s LIMIT %s) held")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def _cascades(model: type[models.Model]) -> list[models.ForeignObjectRel] | None:
    """
    The relations whose rows go with a session, if a plain ``DELETE`` of each can take them: all
    of them ``CASCADE``, to models nothing else points at. None: leave it to the ORM's collector.
    """
    relations = []
    for relation in model._meta.related_objects:
        if (relation.on_delete is not models.CASCADE or relation.many_to_many or relation.field.target_field
                is not model._meta.pk or relation.related_model._meta.related_objects):
            return None
        relations.append(relation)
    return relations


def delete(model: type[models.Model], pk: Any) -> bool:
    """Delete the row ``pk`` of ``model`` and the rows that cascade from it; whether it existed."""
    cascades = _cascades(model)
    if cascades is None:
        deleted, _ = model.objects.filter(pk=pk).delete()
        return deleted > 0
    connection = _connection(model)
    quote = connection.ops.quote_name
    key = model._meta.pk.get_db_prep_value(pk, connection)
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for relation in cascades:
            cursor.execute(f"DELETE FROM {quote(relation.related_model._meta.db_table)} "
                           f"WHERE {quote(relation.field.column)} = %s", [key])
        cursor.execute(f"DELETE FROM {quote(model._meta.db_table)} WHERE {quote(model._meta.pk.column)} = %s", [key])
        return cursor.rowcount > 0


def insert_missing(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """
    ``INSERT`` sessions (field name → Python value; the rest take their defaults, both times now),
    leaving any whose key has a row already (a tombstone above all) as it is: the statement
    ``bulk_create(ignore_conflicts=True)`` makes, without an instance per row. A thousand rows
    through the ORM cost the batch writer's thread more than their statements did, and it holds
    the interpreter while the event loop answers the thousand requests of a reconnection burst.
    """
    if not rows:
        return
    connection = _connection(model)
    quote = connection.ops.quote_name
    meta = model._meta
    fields = meta.concrete_fields
    now = timezone.now()
    defaults = {field.name: field.get_default() for field in fields}
    defaults["created_at"] = defaults["last_seen_at"] = now
    row_sql = f"({', '.join(['%s'] * len(fields))})"
    head = (f"{connection.ops.insert_statement(on_conflict=OnConflict.IGNORE)} {quote(meta.db_table)} "
            f"({', '.join(quote(field.column) for field in fields)}) VALUES ")
    tail = connection.ops.on_conflict_suffix_sql(fields, OnConflict.IGNORE, None, None)
    size = max(1, connection.ops.bulk_batch_size(fields, rows))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), size):
            batch = rows[start:start + size]
            params = [field.get_db_prep_save(row.get(field.name, defaults[field.name]), connection)
                      for row in batch for field in fields]
            cursor.execute(f"{head}{', '.join([row_sql] * len(batch))} {tail}".rstrip(), params)


def write_batch(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """Write sessions opened earlier; a row already there (a tombstone above all) is left as it is."""
    # No transaction around the batches: each row stands alone, and one written twice (the writer
    # tries a failed batch again) is left as it is the second time.
    insert_missing(model, rows)


def insert_unless_present(model: type[models.Model], fields: dict[str, Any]) -> bool:
    """Write one session's row unless it has one; False when what it has is a tombstone."""
    connection = _connection(model)
    insert_missing(model, [fields])
    return model.objects.using(connection.alias).filter(pk=fields["id"], ended=False).exists()


def end(model: type[models.Model], pk: Any, tombstone: dict[str, Any] | None) -> bool:
    """
    End the session ``pk``: its row and the rows that cascade from it go, or with ``tombstone``,
    its row stays as that tombstone (or becomes it, if it had none); whether it had a row.
    """
    if tombstone is None:
        return delete(model, pk)
    connection = _connection(model)
    quote = connection.ops.quote_name
    meta = model._meta
    key = meta.pk.get_db_prep_value(pk, connection)
    ended = meta.get_field("ended")
    cascades = _cascades(model)
    with transaction.atomic(using=connection.alias):
        if cascades is None:
            for relation in meta.related_objects:
                relation.related_model._base_manager.using(connection.alias).filter(
                    **{relation.field.name: pk}).delete()
        else:
            with connection.cursor() as cursor:
                for relation in cascades:
                    cursor.execute(f"DELETE FROM {quote(relation.related_model._meta.db_table)} "
                                   f"WHERE {quote(relation.field.column)} = %s", [key])
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {quote(meta.db_table)} SET {quote(ended.column)} = %s "
                           f"WHERE {quote(meta.pk.column)} = %s", [ended.get_db_prep_value(True, connection), key])
            existed = cursor.rowcount > 0
        if not existed:
            insert_missing(model, [tombstone])
        return existed
