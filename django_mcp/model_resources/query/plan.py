"""
A query document once checked (:class:`QueryPlan`): every name resolved to an exposed field or a
relation between queryable resources, every value converted by its field. The parser
(``parser.py``) makes it without touching the database; the compiler (``compiler.py``) turns it
into ORM querysets filtered by each resource's queryset for the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .catalog import Relation


@dataclass(frozen=True)
class Column:
    """A value read from each row: a field of the queried model or of a row it points at (to-one)."""

    name: str  # as the query wrote it; the key of the answer's rows
    hops: tuple[Relation, ...]  # the to-one relations followed, in order
    field: Any  # the model field read at the end (a foreign key reads the related row's key)
    transforms: tuple[str, ...] = ()  # year, month, date…

    @property
    def orm_path(self) -> str:
        return "__".join([hop.name for hop in self.hops] + [self.field.name, *self.transforms])


# Conditions ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    """``<field>[__<transform>…]__<lookup>`` against a converted value, on the current model's rows."""

    path: str  # an ORM lookup path on the current model: "published__year__gte"
    value: Any


@dataclass(frozen=True)
class Related:
    """Some related row, among those the user may see, meets ``condition`` (None: any related row)."""

    relation: Relation
    condition: Any


@dataclass(frozen=True)
class RelatedCount:
    """The number of related rows the user may see compares with ``value`` by ``lookup``."""

    relation: Relation
    lookup: str
    value: Any


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class Negation:
    part: Any


# The query -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Aggregate:
    """``count``, ``sum``, ``avg``, ``min`` or ``max`` of a column (count: of rows when None) per group."""

    alias: str
    function: str
    column: Column | None
    distinct: bool = False


@dataclass
class QueryPlan:
    """What one query reads, how it is filtered, grouped and ordered, and how much of it."""

    resource: Any
    condition: Any  # a condition or None
    columns: list[Column]  # the answer's columns when nothing is aggregated
    group_by: list[Column]
    aggregates: list[Aggregate]
    having: Any  # a condition on aggregate aliases (Compare paths start with the alias) or None
    #: (column, descending): a :class:`Column` for rows, an answer column's name for groups.
    order_by: list[tuple[Any, bool]]
    distinct: bool
    limit: int
    #: The resources the query reads through, each checked for the user's permission.
    touched: set[Any] = field(default_factory=set)
    #: The to-one chains read by columns: each row reads them only when every row on the way is permitted.
    reads: set[tuple[Relation, ...]] = field(default_factory=set)

    @property
    def aggregated(self) -> bool:
        return bool(self.aggregates)

    @property
    def answer_columns(self) -> list[str]:
        if self.aggregated:
            return [column.name for column in self.group_by] + [aggregate.alias for aggregate in self.aggregates]
        return [column.name for column in self.columns]
