"""
The query tool's oracle: a query document answered in plain Python from the rows each resource's
``get_queryset`` permits for a user, with no ORM filtering, joins or SQL of its own.

It reads the documents the property test writes (the ``tests.querying`` schema) by its own rules:
a relation named in a filter is followed to the permitted rows at its other end, conditions on
the same relation in one object hold for the same related row, a column read through to-one
relations keeps a row only when every row on the way is permitted or absent, groups are formed by
equal column values. It knows which fields are exposed and which models each user may read from
the test schema, not from the tool.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from django.db import connection
from django.utils import timezone

from tests.querying.models import Assignment, Department, Employee, Project, Region, Skill

MODELS = {"region": Region, "department": Department, "skill": Skill, "employee": Employee, "project": Project,
          "assignment": Assignment}
#: Exposed columns (not relations) of each model.
COLUMNS = {
    "region": ["id", "name"],
    "department": ["id", "name", "code"],
    "skill": ["id", "name"],
    "employee": ["id", "name", "level", "hired", "active", "rating"],
    "project": ["id", "title", "confidential", "cost", "started"],
    "assignment": ["id", "hours", "since"],
}
#: name → (target model, to-one, Django field name on the model that holds it, forward)
RELATIONS = {
    "region": {"departments": ("department", False, "region", False)},
    "department": {"region": ("region", True, "region", True), "employees": ("employee", False, "department", False),
                   "projects": ("project", False, "department", False)},
    "skill": {"employees": ("employee", False, "skills", False)},
    "employee": {"department": ("department", True, "department", True), "manager": ("employee", True, "manager", True),
                 "reports": ("employee", False, "manager", False), "skills": ("skill", False, "skills", True),
                 "assignments": ("assignment", False, "employee", False)},
    "project": {"department": ("department", True, "department", True),
                "assignments": ("assignment", False, "project", False)},
    "assignment": {"employee": ("employee", True, "employee", True), "project": ("project", True, "project", True)},
}
BOOLEANS = {"active", "confidential"}
HIDDEN = {"employee": ["salary", "badges"], "department": ["budget"]}
#: Who may read which models' rows.
READABLE = {
    "boss": set(MODELS),
    "clerk": set(MODELS) - {"department"},
    "guest": {"region", "skill"},
}


class Refused(Exception):
    """The reference expects the tool to refuse this document."""


class Reference:
    """Answers documents for one user from the permitted rows, in Python."""

    def __init__(self, site: Any, username: str, user: Any) -> None:
        self.username = username
        ctx = SimpleNamespace(user=user)
        self.rows = {name: {obj.pk: obj for obj in site.get_model_options(model).get_queryset(ctx)}
                     for name, model in MODELS.items()}
        self.skill_pairs = list(Employee.skills.through.objects.values_list("employee_id", "skill_id"))
        self.sqlite = connection.vendor == "sqlite"
        # MariaDB's and MySQL's default collations (utf8mb4_*_ci) compare text without its case: =,
        # <, IN and LIKE alike, except contains, startswith and endswith (Django: LIKE BINARY).
        self.caseless = connection.vendor == "mysql"

    # Relations -----------------------------------------------------------------------------------

    def related(self, model: str, obj: Any, name: str) -> list[Any]:
        target, to_one, field, forward = RELATIONS[model][name]
        permitted = self.rows[target]
        if name == "skills":
            return [permitted[s] for e, s in self.skill_pairs if e == obj.pk and s in permitted]
        if model == "skill":
            return [permitted[e] for e, s in self.skill_pairs if s == obj.pk and e in permitted]
        if forward:
            key = getattr(obj, f"{field}_id")
            return [permitted[key]] if key in permitted else []
        return [row for row in permitted.values() if getattr(row, f"{field}_id") == obj.pk]

    def touch(self, model: str) -> None:
        if model not in READABLE[self.username]:
            raise Refused(f"{model} is not readable by {self.username}")

    # Conditions ----------------------------------------------------------------------------------

    def holds(self, model: str, obj: Any, node: dict[str, Any]) -> bool:
        if len(node) == 1:
            [(key, value)] = node.items()
            if key == "and":
                return all(self.holds(model, obj, part) for part in value)
            if key == "or":
                return any(self.holds(model, obj, part) for part in value)
            if key == "not":
                return not self.holds(model, obj, value)
        groups: dict[str, dict[str, Any]] = defaultdict(dict)
        verdicts = []
        for key, value in node.items():
            head, _, rest = key.partition("__")
            if head in HIDDEN.get(model, ()):
                raise Refused(f"{head} is hidden")
            relation = RELATIONS[model].get(head)
            if relation is None:
                verdicts.append(self.compare(model, obj, key, value))
                continue
            target, to_one, _, _ = relation
            if to_one and rest in ("", "exact", "in", "isnull"):
                verdicts.append(self.compare_value(getattr(obj, f"{relation[2]}_id"), rest or "exact", value))
                continue
            self.touch(target)
            if not to_one and rest == "isnull":
                verdicts.append(not self.related(model, obj, head) if value else bool(self.related(model, obj, head)))
            elif not to_one and rest.startswith("count"):
                verdicts.append(self.compare_value(len(self.related(model, obj, head)),
                                                   rest.partition("__")[2] or "exact", value))
            else:
                groups[head][rest] = value
        for head, sub in groups.items():
            target = RELATIONS[model][head][0]
            verdicts.append(any(self.holds(target, other, sub) for other in self.related(model, obj, head)))
        return all(verdicts)

    def compare(self, model: str, obj: Any, key: str, value: Any) -> bool:
        head, *rest = key.split("__")
        if head not in COLUMNS[model]:
            raise Refused(f"{head} is not a column of {model}")
        current = getattr(obj, head)
        lookup = rest.pop() if rest and rest[-1] not in TRANSFORMS else "exact"
        for transform in rest:
            current = transformed(current, transform)
        if rest:  # compared after a transform: a date, or a whole number
            convert = datetime.date.fromisoformat if rest[-1] == "date" else int
            if lookup != "isnull" and value is not None:
                value = [convert(v) for v in value] if isinstance(value, list) else convert(value)
            return self.compare_value(current, lookup, value)
        return self.compare_value(current, lookup, value, getattr(obj.__class__, head).field)

    def compare_value(self, current: Any, lookup: str, value: Any, field: Any = None) -> bool:
        if lookup == "isnull":
            return (current is None) == value
        if current is None:
            return False
        if value is None:
            return False
        if field is not None and not isinstance(value, list):
            value = field.to_python(value) if not isinstance(current, (int, float)) or isinstance(current, bool) \
                else type(current)(value) if not isinstance(current, Decimal) else Decimal(str(value))
        if isinstance(value, datetime.datetime) and timezone.is_naive(value):
            value = timezone.make_aware(value)  # as forms and the tool read a naive time: the site's zone
        if isinstance(current, Decimal):
            value = [Decimal(str(v)) for v in value] if isinstance(value, list) else Decimal(str(value))
        if isinstance(current, datetime.date) and not isinstance(current, datetime.datetime):
            value = [datetime.date.fromisoformat(v) if isinstance(v, str) else v for v in value] \
                if isinstance(value, list) else value
        if isinstance(current, str) and self.caseless and lookup not in ("contains", "startswith", "endswith"):
            current = current.lower()
            value = [v.lower() if isinstance(v, str) else v for v in value] if isinstance(value, list) \
                else value.lower() if isinstance(value, str) else value
        if isinstance(current, str) and lookup in ("contains", "startswith", "endswith") and self.sqlite:
            lookup = "i" + lookup  # SQLite's LIKE ignores the case of ASCII letters (Django's documented caveat)
        if lookup == "exact":
            return current == value
        if lookup == "iexact":
            return current.lower() == value.lower()
        if lookup in ("contains", "icontains", "startswith", "istartswith", "endswith", "iendswith"):
            a, b = (current.lower(), value.lower()) if lookup.startswith("i") else (current, value)
            test = lookup.removeprefix("i")
            return b in a if test == "contains" else a.startswith(b) if test == "startswith" else a.endswith(b)
        if lookup == "in":
            return current in value
        if lookup == "range":
            return value[0] <= current <= value[1]
        return {"gt": current > value, "gte": current >= value, "lt": current < value, "lte": current <= value}[lookup]

    # Columns -------------------------------------------------------------------------------------

    def column(self, model: str, obj: Any, path: str) -> tuple[bool, Any]:
        """(readable, value) of a to-one column path from ``obj``."""
        parts = path.split("__")
        current_model, current = model, obj
        while parts:
            head = parts.pop(0)
            if head in HIDDEN.get(current_model, ()):
                raise Refused(f"{head} is hidden")
            relation = RELATIONS[current_model].get(head)
            if relation is None:
                if head not in COLUMNS[current_model]:
                    raise Refused(f"{head} is not a column")
                value = getattr(current, head)
                for transform in parts:
                    value = transformed(value, transform)
                return True, value
            target, to_one, field, _ = relation
            if not to_one:
                raise Refused("to-many column")
            key = getattr(current, f"{field}_id")
            if not parts or parts[0] in TRANSFORMS:
                return True, key  # the foreign key's own value: no related row is read
            self.touch(target)
            if key is None:
                # A null link: the rest of the path reads null, if the rest is valid.
                self.check_path(target, parts)
                return True, None
            if key not in self.rows[target]:
                self.check_path(target, parts)
                return False, None
            current_model, current = target, self.rows[target][key]
        raise Refused("empty path")

    def check_path(self, model: str, parts: list[str]) -> None:
        head = parts[0]
        if head in HIDDEN.get(model, ()):
            raise Refused("hidden")
        relation = RELATIONS[model].get(head)
        if relation is not None:
            if not relation[1]:
                raise Refused("to-many column")
            if len(parts) > 1 and parts[1] not in TRANSFORMS:
                self.touch(relation[0])
                self.check_path(relation[0], parts[1:])
        elif head not in COLUMNS[model]:
            raise Refused("not a column")

    def check_condition(self, model: str, node: dict[str, Any]) -> None:
        """Refuse, before reading any row, what the tool refuses whatever the rows."""
        if len(node) == 1:
            [(key, value)] = node.items()
            if key in ("and", "or"):
                for part in value:
                    self.check_condition(model, part)
                return
            if key == "not":
                self.check_condition(model, value)
                return
        groups: dict[str, dict[str, Any]] = defaultdict(dict)
        for key in node:
            head, _, rest = key.partition("__")
            if head in HIDDEN.get(model, ()) or (head not in COLUMNS[model] and head not in RELATIONS[model]):
                raise Refused(f"{head} is not exposed on {model}")
            relation = RELATIONS[model].get(head)
            if relation is None:
                continue
            target, to_one = relation[0], relation[1]
            if to_one and rest in ("", "exact", "in", "isnull"):
                continue
            self.touch(target)
            if not to_one and (rest == "isnull" or rest.startswith("count")):
                continue
            groups[head][rest or "pk"] = None
        for head, sub in groups.items():
            self.check_condition(RELATIONS[model][head][0], sub)

    # The answer ----------------------------------------------------------------------------------

    def answer(self, document: dict[str, Any]) -> list[dict[str, Any]]:
        """Every answer row (no limit), in no particular order; :class:`Refused` when the tool must refuse."""
        model = document["model"]
        self.touch(model)
        for key in ("filter", "exclude"):
            if key in document:
                self.check_condition(model, document[key])
        paths = [*document.get("fields", []), *document.get("group_by", []),
                 *[entry.lstrip("-") for entry in document.get("order_by", [])],
                 *[spec["field"] for spec in document.get("aggregates", {}).values() if spec.get("field")]]
        for path in paths:
            if path not in document.get("aggregates", {}):
                self.check_path(model, path.split("__"))
        for spec in document.get("aggregates", {}).values():
            if spec["function"] in ("min", "max") and spec.get("field", "").split("__")[-1] in BOOLEANS:
                raise Refused("min and max do not apply to booleans")
        rows = list(self.rows[model].values())
        if "filter" in document:
            rows = [obj for obj in rows if self.holds(model, obj, document["filter"])]
        if "exclude" in document:
            rows = [obj for obj in rows if not self.holds(model, obj, document["exclude"])]
        if "aggregates" not in document:
            names = document["fields"]
            order = [entry.lstrip("-") for entry in document.get("order_by", [])]
            answer = []
            for obj in rows:
                read = {name: self.column(model, obj, name) for name in [*names, *order]}
                if all(readable for readable, _ in read.values()):
                    answer.append({name: read[name][1] for name in names})
            if document.get("distinct"):
                unique = {tuple(sorted((k, repr(v)) for k, v in row.items())): row for row in answer}
                answer = list(unique.values())
            return answer
        group_by = document.get("group_by", [])
        paths = group_by + [spec["field"] for spec in document["aggregates"].values() if spec.get("field")]
        groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
        for obj in rows:
            read = {path: self.column(model, obj, path) for path in paths}
            if all(readable for readable, _ in read.values()):
                values = {path: value for path, (_, value) in read.items()}
                groups[tuple(values[path] for path in group_by)].append(values)
        if not group_by:
            groups.setdefault((), [])
        answer = []
        for key, members in groups.items():
            row = dict(zip(group_by, key))
            for alias, spec in document["aggregates"].items():
                row[alias] = aggregate(spec, members)
            if "having" not in document or having(document["having"], row):
                answer.append(row)
        return answer


TRANSFORMS = {"year", "month", "day", "quarter", "week_day", "hour", "date"}


def transformed(value: Any, transform: str) -> Any:
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        value = timezone.localtime(value)
        if transform == "date":
            return value.date()
        if transform == "hour":
            return value.hour
    if transform == "year":
        return value.year
    if transform == "month":
        return value.month
    if transform == "day":
        return value.day
    if transform == "quarter":
        return (value.month - 1) // 3 + 1
    if transform == "week_day":
        return value.isoweekday() % 7 + 1  # Django: Sunday 1 … Saturday 7
    raise ValueError(transform)


def aggregate(spec: dict[str, Any], members: list[dict[str, Any]]) -> Any:
    function, field = spec["function"], spec.get("field")
    if function == "count" and field is None:
        return len(members)
    values = [member[field] for member in members if member[field] is not None]
    if function == "count":
        return len(set(values)) if spec.get("distinct") else len(values)
    if not values:
        return None
    if function == "sum":
        return sum(values)
    if function == "avg":
        return sum(float(v) for v in values) / len(values)
    return min(values) if function == "min" else max(values)


def having(node: dict[str, Any], row: dict[str, Any]) -> bool:
    if len(node) == 1:
        [(key, value)] = node.items()
        if key == "and":
            return all(having(part, row) for part in value)
        if key == "or":
            return any(having(part, row) for part in value)
        if key == "not":
            return not having(value, row)
    verdicts = []
    for key, value in node.items():
        alias, _, lookup = key.partition("__")
        current = row[alias]
        if lookup == "isnull":
            verdicts.append((current is None) == value)
        elif current is None:
            verdicts.append(False)
        else:
            current = float(current)
            verdicts.append({"": current == value, "exact": current == value, "gt": current > value,
                             "gte": current >= value, "lt": current < value, "lte": current <= value}[lookup])
    return all(verdicts)
