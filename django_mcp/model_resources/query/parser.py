"""
A query document (JSON, never SQL) checked and resolved into a :class:`~.plan.QueryPlan`.

Every name is resolved against the :class:`~.catalog.Catalog`: fields must be exposed by the
model's resource, relations must join two queryable resources, lookups and transforms must suit
the field, and values are converted by the field (``to_python``) before any SQL is built. What
does not fit is a :class:`~.errors.QueryError` naming the key and what would fit instead. The
parser reads no row: it runs before the user's permission for each touched model is asked.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import models

from .catalog import Catalog, Relation, exposed_fields, kind_of
from .errors import QueryError
from .lookups import (COUNT_LOOKUPS, DATE_TRANSFORMS, LOOKUPS, ORDER_LOOKUPS, convert, lookups_of, transforms_of,
                      value_field)
from .plan import Aggregate, AllOf, AnyOf, Column, Compare, Negation, QueryPlan, Related, RelatedCount

#: The keys a query document may have.
KEYS = ("model", "filter", "exclude", "fields", "group_by", "aggregates", "having", "order_by", "distinct", "limit")
FUNCTIONS = ("count", "sum", "avg", "min", "max")
MAX_DEPTH = 8
ALIAS = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
COMBINATORS = ("and", "or", "not")


class Parser:
    """Checks one query document against a site's catalog; :meth:`parse` returns the plan."""

    def __init__(self, catalog: Catalog, max_rows: int, default_limit: int) -> None:
        self.catalog = catalog
        self.max_rows = max_rows
        self.default_limit = min(default_limit, max_rows)

    def parse(self, document: Any) -> QueryPlan:
        if not isinstance(document, dict):
            raise QueryError("A query is a JSON object with at least \"model\".")
        unknown = [key for key in document if key not in KEYS]
        if unknown:
            raise QueryError(f"Unknown key {', '.join(map(repr, unknown))}; a query may have: {', '.join(KEYS)}.")
        if "model" not in document:
            raise QueryError("\"model\" is required: the model to query.")
        resource = self.catalog.named(document["model"])
        plan = QueryPlan(resource=resource, condition=None, columns=[], group_by=[], aggregates=[], having=None,
                         order_by=[], distinct=False, limit=self.default_limit, touched={resource})
        self.plan = plan
        conditions = []
        if document.get("filter") is not None:
            conditions.append(self.condition(resource, document["filter"], "filter", 0))
        if document.get("exclude") is not None:
            conditions.append(Negation(self.condition(resource, document["exclude"], "exclude", 0)))
        plan.condition = conditions[0] if len(conditions) == 1 else AllOf(tuple(conditions)) if conditions else None
        aggregates = document.get("aggregates")
        group_by = document.get("group_by")
        if aggregates is None and group_by is not None:
            raise QueryError("\"group_by\" needs \"aggregates\": what to compute for each group, e.g. "
                             "{\"count\": {\"function\": \"count\"}}.")
        if aggregates is not None:
            if document.get("fields") is not None:
                raise QueryError("A query has either \"fields\" (rows) or \"aggregates\" (with optional "
                                 "\"group_by\"), not both: the groups' columns are those of \"group_by\".")
            if document.get("distinct"):
                raise QueryError("\"distinct\" applies to \"fields\"; groups are already distinct.")
            plan.group_by = self.columns(resource, group_by or [], "group_by", allow_empty=True)
            plan.aggregates = self.aggregates(resource, aggregates)
            names = [column.name for column in plan.group_by]
            clash = sorted(set(names) & {aggregate.alias for aggregate in plan.aggregates})
            if clash:
                raise QueryError(f"Aggregate names must differ from the group_by columns: {', '.join(clash)}.")
            if document.get("having") is not None:
                plan.having = self.having(document["having"], {a.alias: self.aggregate_field(a)
                                                               for a in plan.aggregates}, 0)
        else:
            if document.get("having") is not None:
                raise QueryError("\"having\" filters groups by their aggregates: it needs \"aggregates\".")
            fields = document.get("fields")
            if fields is None:
                fields = [name for name, field in exposed_fields(resource).items() if not field.many_to_many]
            plan.columns = self.columns(resource, fields, "fields")
            distinct = document.get("distinct", False)
            if not isinstance(distinct, bool):
                raise QueryError("\"distinct\" is true or false.")
            plan.distinct = distinct
        plan.order_by = self.order_by(resource, document.get("order_by"))
        plan.limit = self.limit(document.get("limit"))
        return plan

    # Names -------------------------------------------------------------------------------------------

    def field_named(self, resource: Any, name: str, where: str) -> Any:
        """The exposed, non-relational field ``name`` of ``resource``; a clear error otherwise."""
        if name == "pk":
            return resource.opts.pk
        exposed = exposed_fields(resource)
        field = exposed.get(name)
        if field is not None and field.name not in self.catalog.relations(resource):
            if field.is_relation and field.many_to_many:
                raise self.relation_problem(resource, name, where)
            return field
        raise self.relation_problem(resource, name, where)

    def relation_problem(self, resource: Any, name: str, where: str) -> QueryError:
        model_name = resource.get_name()
        try:
            field = resource.opts.get_field(name)
        except Exception:
            field = None
        if field is not None and field.is_relation and field.related_model is not None \
                and (not field.concrete or name in exposed_fields(resource)):
            related = field.related_model._meta.label_lower
            return QueryError(f"{where}: relation {name!r} of {model_name} leads to {related}, which is not a "
                              "model you may query.")
        if field is not None and getattr(field, "concrete", False):
            return QueryError(f"{where}: field {name!r} is not exposed on {model_name}.")
        known = [n for n, f in exposed_fields(resource).items() if not f.many_to_many]
        relations = list(self.catalog.relations(resource))
        return QueryError(f"{where}: {model_name} has no field {name!r}. Fields: {', '.join(known)}"
                          + (f"; relations: {', '.join(relations)}." if relations else "."))

    def touch(self, relation: Relation) -> None:
        self.plan.touched.add(relation.target)

    # Columns ----------------------------------------------------------------------------------------

    def columns(self, resource: Any, names: Any, where: str, allow_empty: bool = False) -> list[Column]:
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names) \
                or (not names and not allow_empty):
            raise QueryError(f"\"{where}\" is a list of field names, e.g. [\"title\", \"author__name\"].")
        if len(set(names)) != len(names):
            raise QueryError(f"\"{where}\" names a column twice.")
        return [self.column(resource, name, where) for name in names]

    def column(self, resource: Any, path: str, where: str) -> Column:
        """A to-one path to a field, with date transforms: ``book__author__name``, ``lent_at__month``."""
        parts = path.split("__")
        hops: list[Relation] = []
        current = resource
        while True:
            head = parts.pop(0)
            relation = self.catalog.relations(current).get(head)
            if relation is None:
                field = self.field_named(current, head, f"{where} {path!r}")
                if field.is_relation and parts and parts[0] not in transforms_of(field):
                    raise self.relation_problem(current, head, f"{where} {path!r}")  # borrower__username
                break
            if not relation.to_one:
                raise QueryError(f"{where} {path!r}: {head!r} leads to many {relation.target.get_name()} rows; "
                                 f"a column reads one value per row. Query {relation.target.get_name()} instead "
                                 f"(grouping by its link back), or count them with a filter such as "
                                 f"{{\"{head}__count__gt\": 0}}.")
            if not parts or parts[0] in transforms_of(relation.field):
                field = relation.field  # the foreign key itself: the related row's key
                break
            hops.append(relation)
            self.touch(relation)
            current = relation.target
        allowed = transforms_of(field)
        for transform in parts:
            if transform not in allowed:
                raise QueryError(f"{where} {path!r}: {transform!r} is not a field of {current.get_name()}."
                                 + (f" Transforms of {field.name}: {', '.join(allowed)}." if allowed else ""))
        if len(hops) > MAX_DEPTH:
            raise QueryError(f"{where} {path!r}: at most {MAX_DEPTH} relations deep.")
        if hops:
            self.plan.reads.add(tuple(hops))
        return Column(path, tuple(hops), field, tuple(parts))

    # Conditions -----------------------------------------------------------------------------------

    def condition(self, resource: Any, node: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise QueryError(f"{where}: nested more than {MAX_DEPTH} levels.")
        if not isinstance(node, dict) or not node:
            raise QueryError(f"{where}: a condition is a non-empty object of lookups, e.g. "
                             "{\"title__icontains\": \"war\", \"published__gte\": 1900}, or {\"or\": [...]}, "
                             "{\"and\": [...]}, {\"not\": {...}}.")
        if len(node) == 1:
            [(key, value)] = node.items()
            if key in ("and", "or"):
                if not isinstance(value, list) or not value:
                    raise QueryError(f"{where}: {key!r} takes a non-empty list of conditions.")
                parts = tuple(self.condition(resource, part, where, depth + 1) for part in value)
                return AllOf(parts) if key == "and" else AnyOf(parts)
            if key == "not":
                return Negation(self.condition(resource, value, where, depth + 1))
        parts: list[Any] = []
        groups: dict[str, dict[str, Any]] = {}
        relations = self.catalog.relations(resource)
        for key, value in node.items():
            if key in COMBINATORS:
                raise QueryError(f"{where}: {key!r} must be alone in its object: {{\"{key}\": ...}}.")
            head, _, rest = key.partition("__")
            relation = relations.get(head)
            if relation is None:
                parts.append(self.compare(resource, key, value, where))
                continue
            if relation.to_one and (rest in ("", *LOOKUPS)):
                # The foreign key's own value, an exposed field of this model: no related row is read.
                parts.append(self.compare_key(relation, key, rest or "exact", value, where))
                continue
            self.touch(relation)
            if not relation.to_one and rest == "isnull":
                if not isinstance(value, bool):
                    raise QueryError(f"{where} {key!r}: true (no related row) or false (at least one).")
                related = Related(relation, None)
                parts.append(Negation(related) if value else related)
            elif not relation.to_one and (rest == "count" or rest.startswith("count__")):
                parts.append(self.count(relation, key, rest.partition("__")[2] or "exact", value, where))
            else:
                if not relation.to_one and rest in ("", "exact", "in"):
                    rest = "pk" if rest in ("", "exact") else "pk__in"
                groups.setdefault(head, {})[rest] = value
        for head, sub in groups.items():
            relation = relations[head]
            parts.append(Related(relation, self.condition(relation.target, sub, f"{where} {head}", depth + 1)))
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def compare(self, resource: Any, key: str, value: Any, where: str) -> Compare:
        head, *rest = key.split("__")
        field = self.field_named(resource, head, f"{where} {key!r}")
        if field.is_relation and rest and rest[0] not in LOOKUPS:
            raise self.relation_problem(resource, head, f"{where} {key!r}")
        transforms: list[str] = []
        allowed = transforms_of(field)
        while rest and rest[0] in allowed and (len(rest) > 1 or rest[0] not in LOOKUPS):
            transforms.append(rest.pop(0))
            allowed = DATE_TRANSFORMS if transforms[-1] == "date" else ()
        lookup = rest.pop(0) if rest else "exact"
        if rest:
            raise QueryError(f"{where} {key!r}: {'__'.join(rest)!r} cannot follow {lookup!r}.")
        target = value_field(field, tuple(transforms))
        lookups = lookups_of(target) if transforms else lookups_of(field)
        if lookup not in lookups:
            raise QueryError(f"{where} {key!r}: {lookup!r} is not a lookup of {field.name} "
                             f"({kind_of(target)}); lookups: {', '.join(lookups)}"
                             + (f"; transforms: {', '.join(transforms_of(field))}" if transforms_of(field) else "")
                             + ".")
        path = "__".join([field.name, *transforms, lookup])
        return Compare(path, convert(target, lookup, value, f"{where} {key!r}"))

    def compare_key(self, relation: Relation, key: str, lookup: str, value: Any, where: str) -> Compare:
        """``author=3``, ``author__in=[…]``, ``author__isnull``: the foreign key's own value."""
        if lookup not in ("exact", "in", "isnull"):
            raise QueryError(f"{where} {key!r}: a relation's key takes exact, in or isnull; to compare the "
                             f"related row's fields, write {relation.name}__<field>__{lookup}.")
        field = relation.field
        return Compare(f"{field.attname}__{lookup}", convert(value_field(field, ()), lookup, value,
                                                                f"{where} {key!r}"))

    def count(self, relation: Relation, key: str, lookup: str, value: Any, where: str) -> RelatedCount:
        if lookup not in COUNT_LOOKUPS:
            raise QueryError(f"{where} {key!r}: a count takes {', '.join(COUNT_LOOKUPS)}.")
        return RelatedCount(relation, lookup, convert(models.IntegerField(), lookup, value, f"{where} {key!r}"))

    # Aggregates ----------------------------------------------------------------------------------

    def aggregates(self, resource: Any, spec: Any) -> list[Aggregate]:
        example = "{\"loans\": {\"function\": \"count\"}, \"latest\": {\"function\": \"max\", \"field\": \"lent_at\"}}"
        if not isinstance(spec, dict) or not spec:
            raise QueryError(f"\"aggregates\" is an object of name → aggregate, e.g. {example}.")
        found = []
        for alias, entry in spec.items():
            where = f"aggregates {alias!r}"
            if not ALIAS.match(alias) or "__" in alias or alias in COMBINATORS:
                raise QueryError(f"{where}: a name is a letter then letters, digits or single '_'.")
            if not isinstance(entry, dict) or set(entry) - {"function", "field", "distinct"}:
                raise QueryError(f"{where}: {{\"function\": one of {', '.join(FUNCTIONS)}, \"field\": a column, "
                                 "\"distinct\": true or false (count only)}.")
            function = entry.get("function")
            if function not in FUNCTIONS:
                raise QueryError(f"{where}: \"function\" is one of {', '.join(FUNCTIONS)}.")
            distinct = entry.get("distinct", False)
            if not isinstance(distinct, bool) or (distinct and function != "count"):
                raise QueryError(f"{where}: \"distinct\" is true or false, and only for count.")
            column = None
            if entry.get("field") is not None:
                if not isinstance(entry["field"], str):
                    raise QueryError(f"{where}: \"field\" is a column name.")
                column = self.column(resource, entry["field"], where)
            elif function != "count":
                raise QueryError(f"{where}: {function} needs a \"field\".")
            if column is not None and function in ("sum", "avg") and (column.transforms and column.transforms[-1] == "date"
                                                                     or not column.transforms and kind_of(column.field)
                                                                     not in ("integer", "number")):
                raise QueryError(f"{where}: {function} needs a numeric field; {column.name} is "
                                 f"{kind_of(column.field)}.")
            if column is not None and function in ("min", "max") and kind_of(column.field) in ("json", "file",
                                                                                                "boolean"):
                raise QueryError(f"{where}: {function} does not apply to {kind_of(column.field)} values.")
            found.append(Aggregate(alias, function, column, distinct))
        return found

    @staticmethod
    def aggregate_field(aggregate: Aggregate) -> Any:
        """The field that converts values compared with an aggregate in ``having``."""
        if aggregate.function == "count":
            return models.IntegerField()
        if aggregate.function in ("sum", "avg"):
            return models.FloatField()
        column = aggregate.column
        return value_field(column.field, column.transforms)

    def having(self, node: Any, aliases: dict[str, Any], depth: int) -> Any:
        where = "having"
        if depth > MAX_DEPTH or not isinstance(node, dict) or not node:
            raise QueryError(f"{where}: an object of aggregate lookups, e.g. {{\"loans__gt\": 3}}.")
        if len(node) == 1:
            [(key, value)] = node.items()
            if key in ("and", "or") and isinstance(value, list) and value:
                parts = tuple(self.having(part, aliases, depth + 1) for part in value)
                return AllOf(parts) if key == "and" else AnyOf(parts)
            if key == "not":
                return Negation(self.having(value, aliases, depth + 1))
        parts = []
        for key, value in node.items():
            alias, _, lookup = key.partition("__")
            lookup = lookup or "exact"
            if alias not in aliases:
                raise QueryError(f"{where} {key!r}: {alias!r} is not an aggregate of this query "
                                 f"({', '.join(sorted(aliases))}).")
            if lookup not in ("exact", *ORDER_LOOKUPS, "in", "isnull"):
                raise QueryError(f"{where} {key!r}: lookups on aggregates: exact, gt, gte, lt, lte, range, in, isnull.")
            parts.append(Compare(f"{alias}__{lookup}", convert(aliases[alias], lookup, value, f"{where} {key!r}")))
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    # Order and size -------------------------------------------------------------------------------

    def order_by(self, resource: Any, spec: Any) -> list[tuple[Any, bool]]:
        """(answer column name, or for rows any column, descending) pairs."""
        if spec is None:
            return []
        if not isinstance(spec, list) or not all(isinstance(entry, str) and entry.strip("-") for entry in spec):
            raise QueryError("\"order_by\" is a list of column names, \"-\" before one for descending.")
        plan = self.plan
        names = plan.answer_columns
        order: list[tuple[Any, bool]] = []
        for entry in spec:
            name, descending = entry.removeprefix("-"), entry.startswith("-")
            if plan.aggregated:
                if name not in names:
                    raise QueryError(f"order_by {entry!r}: order groups by one of {', '.join(names)}.")
                order.append((name, descending))
                continue
            chosen = next((column for column in plan.columns if column.name == name), None)
            if chosen is None:
                if plan.distinct:
                    raise QueryError(f"order_by {entry!r}: with distinct, order by one of {', '.join(names)}.")
                chosen = self.column(resource, name, "order_by")
            order.append((chosen, descending))
        if len({name.removeprefix("-") for name in spec}) != len(spec):
            raise QueryError("\"order_by\" names a column twice.")
        return order

    def limit(self, value: Any) -> int:
        if value is None:
            return self.default_limit
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= self.max_rows:
            raise QueryError(f"\"limit\" is a whole number from 1 to {self.max_rows}.")
        return value
