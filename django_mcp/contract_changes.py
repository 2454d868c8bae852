"""
What changed between two contract snapshots (:mod:`django_mcp.contracts`), each change classed as
**breaking** — a client written against the old contract may now fail: a tool, resource or prompt
removed or renamed, a required argument added, an argument's type narrowed, an output field
removed, a scope now needed — or **compatible**: an addition, a loosening, a new description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .contracts import KINDS

LABELS = {"tools": "tool", "resources": "resource", "resourceTemplates": "resource template", "prompts": "prompt"}
# Keywords that, raised (minimums) or lowered (maximums), accept fewer values than before.
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
# Fields compared one by one above the catch-all (which reports any other field's change as compatible).
COMPARED = {"title", "description", "icons", "annotations", "inputSchema", "outputSchema", "arguments",
            "requiredScopes", "name", "uri", "uriTemplate", "mimeType", "execution"}


@dataclass(frozen=True)
class Change:
    """One difference: where (site, kind, name), what, and whether it breaks clients."""

    site: str
    kind: str
    name: str
    message: str
    breaking: bool

    def __str__(self) -> str:
        severity = "BREAKING  " if self.breaking else "compatible"
        site = "" if self.site == "default" else f"[{self.site}] "
        return f"{severity} {site}{LABELS.get(self.kind, self.kind)} {self.name}: {self.message}"


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from the snapshot ``old`` to ``new``, breaking ones first."""
    changes: list[Change] = []
    old_sites, new_sites = old.get("sites") or {}, new.get("sites") or {}
    for site in sorted(set(old_sites) | set(new_sites)):
        for _, key in KINDS:
            before = (old_sites.get(site) or {}).get(key) or {}
            after = (new_sites.get(site) or {}).get(key) or {}
            for name in sorted(set(before) | set(after)):
                found = _compare_entry(before.get(name), after.get(name), key)
                changes += [Change(site, key, name, message, breaking) for message, breaking in found]
    return sorted(changes, key=lambda change: not change.breaking)


def _compare_entry(before: dict[str, Any] | None, after: dict[str, Any] | None, kind: str) -> list[tuple[str, bool]]:
    if before is None:
        return [("added", False)]
    if after is None:
        return [("removed (clients that call it by name will fail; renamed counts as removed)", True)]
    found: list[tuple[str, bool]] = []
    if kind == "tools":
        found += _schema_changes("argument", before.get("inputSchema") or {}, after.get("inputSchema") or {})
        found += _output_changes(before.get("outputSchema"), after.get("outputSchema"))
        found += _annotation_changes(before.get("annotations") or {}, after.get("annotations") or {})
        old_support = (before.get("execution") or {}).get("taskSupport", "forbidden")
        new_support = (after.get("execution") or {}).get("taskSupport", "forbidden")
        if old_support != new_support:
            # A client that cannot run tasks cannot call a tool that needs one.
            found.append((f"task support {old_support!r} became {new_support!r}", new_support == "required"))
    elif kind == "prompts":
        found += _argument_changes(before.get("arguments") or [], after.get("arguments") or [])
    elif before.get("mimeType") != after.get("mimeType"):
        found.append((f"MIME type {before.get('mimeType')!r} became {after.get('mimeType')!r}", True))
    added_scopes = sorted(set(after.get("requiredScopes") or ()) - set(before.get("requiredScopes") or ()))
    if added_scopes:
        found.append((f"now needs the scope(s) {', '.join(added_scopes)}", True))
    if set(before.get("requiredScopes") or ()) - set(after.get("requiredScopes") or ()):
        found.append(("needs fewer scopes", False))
    for field in ("title", "description", "icons"):
        if before.get(field) != after.get(field):
            found.append((f"{field} changed", False))
    for field in sorted((set(before) | set(after)) - COMPARED):
        if before.get(field) != after.get(field):
            found.append((f"{field} changed", False))
    return found


def _property_pairs(before: dict[str, Any], after: dict[str, Any]) -> Any:
    """Each property of two object schemas: ``(name, old or None, new or None, was required, is required)``."""
    old_props, new_props = before.get("properties") or {}, after.get("properties") or {}
    old_required, new_required = set(before.get("required") or ()), set(after.get("required") or ())
    for name in sorted(set(old_props) | set(new_props)):
        yield name, old_props.get(name), new_props.get(name), name in old_required, name in new_required


def _schema_changes(what: str, before: dict[str, Any], after: dict[str, Any], path: str = "",
                    old_root: dict[str, Any] | None = None,
                    new_root: dict[str, Any] | None = None) -> list[tuple[str, bool]]:
    """An input schema's changes: fewer accepted values is breaking, more is compatible."""
    old_root, new_root = old_root or before, new_root or after
    found: list[tuple[str, bool]] = []
    for name, old, new, was_required, is_required in _property_pairs(before, after):
        field = f"{path}.{name}" if path else name
        label = f"{what} {field}"
        if new is None:
            found.append((f"{label} removed", True))
        elif old is None:
            found.append((f"{label} added" + (", required" if is_required else ""), is_required))
        else:
            if is_required and not was_required:
                found.append((f"{label} became required", True))
            elif was_required and not is_required:
                found.append((f"{label} became optional", False))
            old_field, new_field = _resolved(old, old_root), _resolved(new, new_root)
            found += _narrowing(label, old_field, new_field)
            if isinstance(old_field, dict) and isinstance(new_field, dict) \
                    and ("properties" in old_field or "properties" in new_field) and field.count(".") < 8:
                found += _schema_changes(what, old_field, new_field, field, old_root, new_root)
    return found


def _narrowing(label: str, before: Any, after: Any) -> list[tuple[str, bool]]:
    """Whether one property's schema accepts fewer values now (type, enum, bounds, pattern)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [] if before == after else [(f"{label}: schema changed", True)]
    found: list[tuple[str, bool]] = []
    old_types, new_types = _types(before), _types(after)
    if old_types and new_types != old_types:
        lost = old_types - new_types if new_types else set()
        widened_integer = old_types == {"integer"} and "number" in new_types
        if lost and not widened_integer:
            found.append((f"{label}: type {_show(old_types)} became {_show(new_types)}", True))
        else:
            found.append((f"{label}: accepts {_show(new_types)} now", False))
    old_enum = None if before.get("enum") is None else set(map(repr, before["enum"]))
    new_enum = None if after.get("enum") is None else set(map(repr, after["enum"]))
    if new_enum is not None and (old_enum is None or not old_enum <= new_enum):
        found.append((f"{label}: fewer values allowed (enum)", True))
    elif old_enum is not None and old_enum != new_enum:
        found.append((f"{label}: more values allowed (enum)", False))
    for keyword in LOWER_BOUNDS + UPPER_BOUNDS:
        old, new = before.get(keyword), after.get(keyword)
        if old == new:
            continue
        if not isinstance(new, (int, float)):
            found.append((f"{label}: {keyword} {old} removed", False))
            continue
        tighter = old is None or (new > old if keyword in LOWER_BOUNDS else new < old)
        found.append((f"{label}: {keyword} {old} became {new}", tighter))
    if after.get("pattern") and after.get("pattern") != before.get("pattern"):
        found.append((f"{label}: pattern changed", True))
    return found


def _output_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[tuple[str, bool]]:
    """An output schema's changes: a field clients may read that is gone, or no longer sure, breaks them."""
    if before is None:
        return [] if after is None else [("publishes an output schema now", False)]
    if after is None:
        return [("no longer publishes an output schema (structured content may stop)", True)]
    return _output_fields(before, after, before, after, "")


def _output_fields(before: Any, after: Any, old_root: dict[str, Any], new_root: dict[str, Any],
                   path: str, depth: int = 0) -> list[tuple[str, bool]]:
    """The fields of one object (or the items of one array) of an output schema, $refs followed."""
    before, after = _resolved(before, old_root), _resolved(after, new_root)
    if depth > 8 or not isinstance(before, dict) or not isinstance(after, dict):
        return []
    if "items" in before or "items" in after:
        return _output_fields(before.get("items"), after.get("items"), old_root, new_root, f"{path}[]", depth + 1)
    found: list[tuple[str, bool]] = []
    for name, old, new, was_required, is_required in _property_pairs(before, after):
        field = f"{path}.{name}" if path else name
        label = f"output field {field}"
        if new is None:
            found.append((f"{label} removed", True))
        elif old is None:
            found.append((f"{label} added", False))
        else:
            if was_required and not is_required:
                found.append((f"{label} is no longer always present", True))
            old_field, new_field = _resolved(old, old_root), _resolved(new, new_root)
            if _types(old_field) and _types(new_field) != _types(old_field):
                found.append((f"{label}: type {_show(_types(old_field))} became {_show(_types(new_field))}", True))
            found += _output_fields(old_field, new_field, old_root, new_root, field, depth + 1)
    return found


def _resolved(schema: Any, root: dict[str, Any]) -> Any:
    """``schema``, or what its local ``$ref`` (``#/$defs/…``) points at."""
    for _ in range(8):
        reference = schema.get("$ref") if isinstance(schema, dict) else None
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return schema
        target: Any = root
        for part in reference[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
    return schema


def _annotation_changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, bool]]:
    """A tool that now may change or destroy data breaks clients that call it without asking."""
    found: list[tuple[str, bool]] = []
    if before.get("readOnlyHint") and not after.get("readOnlyHint"):
        found.append(("no longer read-only (readOnlyHint)", True))
    if not before.get("destructiveHint", not before.get("readOnlyHint")) and after.get("destructiveHint"):
        found.append(("destructive now (destructiveHint)", True))
    if not found and before != after:
        found.append(("annotations changed", False))
    return found


def _argument_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    old = {argument["name"]: argument for argument in before}
    new = {argument["name"]: argument for argument in after}
    found: list[tuple[str, bool]] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            found.append((f"argument {name} removed", True))
        elif name not in old:
            required = bool(new[name].get("required"))
            found.append((f"argument {name} added" + (", required" if required else ""), required))
        elif new[name].get("required") and not old[name].get("required"):
            found.append((f"argument {name} became required", True))
        elif old[name].get("required") and not new[name].get("required"):
            found.append((f"argument {name} became optional", False))
    return found


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    return {kind for option in schema.get("anyOf") or () for kind in _types(option)}


def _show(types: set[str]) -> str:
    return "/".join(sorted(types)) or "any"


__all__ = ["Change", "compare"]
