"""
A :class:`~.plan.QueryPlan` made into ORM querysets, filtered for the user at every step.

The queried model's rows come from its resource's ``get_queryset(ctx)``. A condition on related
rows is an ``EXISTS`` over the related resource's ``get_queryset(ctx)``, and a count of related
rows a ``COUNT`` over it, so row-level rules hold through every relation, however deep. A column
read through to-one relations (``book__author__name``) keeps only the rows whose related rows are
all permitted (or absent): a row never shows a value from a row the user may not see. No join to
a to-many relation is ever made, so rows are never repeated and aggregates never inflated.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

from django.db.models import Avg, Count, Exists, F, Func, IntegerField, Max, Min, Q, QuerySet, Subquery, Sum
from django.db.models import lookups

from .catalog import Relation
from .plan import Aggregate, AllOf, AnyOf, Compare, Negation, QueryPlan, Related, RelatedCount

FUNCTIONS = {"count": Count, "sum": Sum, "avg": Avg, "min": Min, "max": Max}
LOOKUP_CLASSES = {"exact": lookups.Exact, "gt": lookups.GreaterThan, "gte": lookups.GreaterThanOrEqual,
                  "lt": lookups.LessThan, "lte": lookups.LessThanOrEqual, "range": lookups.Range, "in": lookups.In}


class Compiler:
    """Builds the querysets of one query for one request (``ctx``) on database ``using``; on a worker thread."""

    def __init__(self, ctx: Any, using: str) -> None:
        self.ctx = ctx
        self.using = using
        self._permitted: dict[Any, QuerySet] = {}

    def permitted(self, resource: Any) -> QuerySet:
        """The rows of ``resource`` this request may see, ready to be filtered further or nested."""
        found = self._permitted.get(resource)
        if found is None:
            rows = resource.get_queryset(self.ctx)
            query = rows.query
            if query.is_sliced or query.distinct or query.combinator or query.group_by is not None \
                    or query.values_select or any(getattr(a, "contains_aggregate", False)
                                                  for a in query.annotations.values()):
                # A queryset that cannot simply be filtered (sliced, distinct, grouped…): by its keys.
                rows = resource.model._base_manager.filter(pk__in=rows.values("pk"))
            found = self._permitted[resource] = rows.using(self.using).select_related(None) \
                .prefetch_related(None).order_by()
        return found

    # Conditions ---------------------------------------------------------------------------------

    def condition(self, node: Any) -> Q:
        if node is None:
            return Q()
        if isinstance(node, Compare):
            return Q(**{node.path: node.value})
        if isinstance(node, Related):
            related = self.related(node.relation)
            if node.condition is not None:
                related = related.filter(self.condition(node.condition))
            return Q(Exists(related))
        if isinstance(node, RelatedCount):
            counted = self.related(node.relation).annotate(
                mcp_count=Func(F("pk"), function="COUNT", output_field=IntegerField())).values("mcp_count")
            return Q(LOOKUP_CLASSES[node.lookup](Subquery(counted, output_field=IntegerField()), node.value))
        if isinstance(node, AllOf):
            return functools.reduce(operator.and_, (self.condition(part) for part in node.parts))
        if isinstance(node, AnyOf):
            return functools.reduce(operator.or_, (self.condition(part) for part in node.parts))
        if isinstance(node, Negation):
            return ~self.condition(node.part)
        raise TypeError(f"Not a condition: {node!r}")

    def related(self, relation: Relation) -> QuerySet:
        """The permitted rows at the other end of ``relation`` from the outer query's row."""
        return self.permitted(relation.target).filter(**relation.correlate())

    def readable(self, chains: set[tuple[Relation, ...]]) -> Q:
        """Rows whose every row read through ``chains`` is permitted, or absent (a null link)."""
        tree: dict[Relation, set[tuple[Relation, ...]]] = {}
        for chain in chains:
            tree.setdefault(chain[0], set())
            if len(chain) > 1:
                tree[chain[0]].add(chain[1:])
        condition = Q()
        for relation, rest in tree.items():
            further = self.readable(rest)
            if not further and relation.field.db_constraint and not self.permitted(relation.target).query.where:
                # Every row of the target is permitted and the database keeps the link valid: nothing to check.
                continue
            present = Q(Exists(self.related(relation).filter(further)))
            if relation.field.null:
                present |= Q(**{f"{relation.field.attname}__isnull": True})
            condition &= present
        return condition

    # The query ----------------------------------------------------------------------------------

    def rows(self, plan: QueryPlan) -> QuerySet:
        """The queried model's permitted rows that meet the query's conditions."""
        return self.permitted(plan.resource).filter(self.condition(plan.condition)).filter(self.readable(plan.reads))

    def queryset(self, plan: QueryPlan) -> tuple[QuerySet | None, dict[str, str], dict[str, Any]]:
        """
        The answer's queryset (None for aggregates over all rows, whose ``aggregate()`` kwargs are
        returned instead), the internal name → answer column map, and the aggregate expressions.
        """
        rows = self.rows(plan)
        taken = {field.name for field in plan.resource.opts.get_fields()} | {"pk"}
        names: dict[str, str] = {}

        def internal(prefix: str, index: int) -> str:
            name = f"mcp_{prefix}{index}"
            while name in taken:
                name += "_"
            return name

        if plan.aggregated:
            selected = {}
            for index, column in enumerate(plan.group_by):
                selected[internal("g", index)] = F(column.orm_path)
                names[internal("g", index)] = column.name
            expressions = {}
            for index, aggregate in enumerate(plan.aggregates):
                expressions[internal("a", index)] = self.aggregate(aggregate)
                names[internal("a", index)] = aggregate.alias
            if not plan.group_by:
                return None, names, expressions
            by_answer = {answer: name for name, answer in names.items()}
            grouped = rows.values(**selected).annotate(**expressions)
            if plan.having is not None:
                grouped = grouped.filter(self.condition(self.renamed(plan.having, by_answer)))
            order = [self.ordered(F(by_answer[name]), descending) for name, descending in plan.order_by]
            order += [F(name).asc(nulls_first=True) for name in selected]
            return grouped.order_by(*order)[:plan.limit + 1], names, {}
        selected = {}
        for index, column in enumerate(plan.columns):
            selected[internal("c", index)] = F(column.orm_path)
            names[internal("c", index)] = column.name
        values = rows.values(**selected)
        by_answer = {answer: name for name, answer in names.items()}
        order = []
        for column, descending in plan.order_by:
            name = by_answer.get(column.name)
            order.append(self.ordered(F(name) if name is not None and column in plan.columns
                                      else F(column.orm_path), descending))
        if plan.distinct:
            values = values.distinct()
            order += [F(name).asc(nulls_first=True) for name in selected]
        else:
            order.append(F("pk").asc())
        return values.order_by(*order)[:plan.limit + 1], names, {}

    @staticmethod
    def ordered(expression: F, descending: bool) -> Any:
        # Nulls sort low on every database, as SQLite and MySQL sort them by default.
        return expression.desc(nulls_last=True) if descending else expression.asc(nulls_first=True)

    @staticmethod
    def aggregate(aggregate: Aggregate) -> Any:
        if aggregate.column is None:
            return Count("pk")
        if aggregate.function == "count":
            return Count(aggregate.column.orm_path, distinct=aggregate.distinct)
        return FUNCTIONS[aggregate.function](aggregate.column.orm_path)

    def renamed(self, node: Any, by_answer: dict[str, str]) -> Any:
        """A ``having`` condition on the aggregates' internal names."""
        if isinstance(node, Compare):
            alias, _, lookup = node.path.partition("__")
            return Compare(f"{by_answer[alias]}__{lookup}", node.value)
        if isinstance(node, (AllOf, AnyOf)):
            return type(node)(tuple(self.renamed(part, by_answer) for part in node.parts))
        return Negation(self.renamed(node.part, by_answer))


def holds(node: Any, row: dict[str, Any]) -> bool:
    """Whether one answer row (of aggregates over all rows) meets a ``having`` condition."""
    if isinstance(node, AllOf):
        return all(holds(part, row) for part in node.parts)
    if isinstance(node, AnyOf):
        return any(holds(part, row) for part in node.parts)
    if isinstance(node, Negation):
        return not holds(node.part, row)
    alias, _, lookup = node.path.partition("__")
    value, wanted = row.get(alias), node.value
    if lookup == "isnull":
        return (value is None) == wanted
    if value is None or wanted is None:
        return False
    compare = {"exact": operator.eq, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}
    if lookup == "in":
        return value in wanted
    if lookup == "range":
        return wanted[0] <= value <= wanted[1]
    return compare[lookup](value, wanted)

