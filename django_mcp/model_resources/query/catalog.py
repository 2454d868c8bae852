"""
What a query may name: the queryable model resources of a site (:class:`Catalog`), the fields
each exposes, and the relations between them (:class:`Relation`).

A field is exposed when the resource's serializer writes it (the primary key always is: it names
the row's resource). A relation is followed only between two queryable resources: forward when
this resource exposes the foreign key or many-to-many field, backward when the other resource
exposes the field that points here. So a query reaches exactly what reading the resources would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models
from django.db.models import OuterRef

from .errors import QueryError


def exposed_fields(resource: Any) -> dict[str, Any]:
    """Model field name → model field, for the fields the resource's serializer writes."""
    cached = resource.__dict__.get("_query_exposed")
    if cached is not None:
        return cached
    opts = resource.opts
    by_name = {field.name: field for field in [*opts.concrete_fields, *opts.many_to_many]}
    exposed: dict[str, Any] = {opts.pk.name: opts.pk}
    for name, written in resource.get_serializer_class()().fields.items():
        if getattr(written, "write_only", False):
            continue
        source = written.source if written.source not in (None, "*") else name
        field = by_name.get(source)
        if field is not None:
            exposed[field.name] = field
    if issubclass(resource.model, AbstractBaseUser):
        exposed.pop("password", None)  # never, whatever a serializer writes
    resource.__dict__["_query_exposed"] = exposed
    return exposed


@dataclass(frozen=True)
class Relation:
    """A relation a query may follow from one queryable resource to another."""

    name: str
    target: Any  # the ModelResource at the other end
    to_one: bool
    field: Any  # the model field that holds the link (on either side)
    forward: bool

    def correlate(self) -> dict[str, Any]:
        """Filter keywords on the target's rows that tie each of them to the outer query's row."""
        field = self.field
        if field.many_to_many:
            if self.forward:  # Volume.tags → Tag: the tags whose volumes include the outer row
                return {field.related_query_name(): OuterRef("pk")}
            return {field.name: OuterRef("pk")}  # Tag ← Volume.tags: the volumes that carry the tag
        if self.forward:  # Book.author → Author: the author the outer row points at
            return {field.target_field.attname: OuterRef(field.attname)}
        # Author ← Book.author: the books that point at the outer row
        return {field.attname: OuterRef(field.target_field.attname)}

    def correlation_column(self) -> str:
        """The column of the target's rows that the correlation compares (for counting per outer row)."""
        field = self.field
        if field.many_to_many:
            return field.related_query_name() if self.forward else field.name
        return field.target_field.attname if self.forward else field.attname


class Catalog:
    """The queryable model resources of one site, and how to find them by name."""

    def __init__(self, site: Any) -> None:
        from ..options import ModelResource

        self.site = site
        self.resources: dict[str, Any] = {}
        self._by_model: dict[Any, Any] = {}
        self._relations: dict[Any, dict[str, Relation]] = {}  # asked for every key of a query
        for resource in site.model_options():
            if isinstance(resource, ModelResource) and resource.queryable:
                self.resources[resource.get_name()] = resource
                self._by_model[resource.model] = resource

    def __bool__(self) -> bool:
        return bool(self.resources)

    def named(self, name: Any) -> Any:
        """The resource a query's ``model`` names: its resource name or its ``app_label.model`` label."""
        if isinstance(name, str):
            found = self.resources.get(name)
            if found is not None:
                return found
            for resource in self.resources.values():
                if resource.opts.label_lower == name.lower():
                    return resource
        raise QueryError(f"Unknown model {name!r}; models you may query: {', '.join(sorted(self.resources))}.")

    def of_model(self, model: Any) -> Any:
        """The queryable resource publishing ``model``, or None."""
        return self._by_model.get(model)

    def relations(self, resource: Any) -> dict[str, Relation]:
        """Name → relation, for the relations from ``resource`` a query may follow."""
        known = self._relations.get(resource)
        if known is None:
            known = self._relations[resource] = self._find_relations(resource)
        return known

    def _find_relations(self, resource: Any) -> dict[str, Relation]:
        relations: dict[str, Relation] = {}
        exposed = exposed_fields(resource)
        for field in resource.opts.get_fields(include_hidden=False):
            if not field.is_relation or field.related_model is None:
                continue
            target = self.of_model(field.related_model)
            if target is None:
                continue
            if field.concrete or isinstance(field, models.ManyToManyField):
                if field.name in exposed:
                    relations[field.name] = Relation(field.name, target, field.many_to_one or field.one_to_one,
                                                     field, True)
                continue
            link = field.field  # a reverse relation: the field on the other model that points here
            name = link.related_query_name()
            if link.name in exposed_fields(target) and not name.endswith("+"):
                relations[name] = Relation(name, target, False, link, False)
        return relations

    def describe(self, resource: Any) -> str:
        """One line naming the resource, its exposed fields and its relations, for the tool's description."""
        exposed = exposed_fields(resource)
        relations = self.relations(resource)
        columns = [f"{name} ({kind_of(field)})" for name, field in exposed.items() if name not in relations]
        links = [f"{name} → {relation.target.get_name()}{'' if relation.to_one else ' (many)'}"
                 for name, relation in relations.items()]
        line = f"- {resource.get_name()}: {', '.join(columns)}"
        return line + (f"; relations: {', '.join(links)}" if links else "")


#: A word for the values of each kind of field, first match wins (a DateTimeField is a DateField too).
KINDS = ((models.BooleanField, "boolean"), ((models.IntegerField, models.AutoField), "integer"),
         ((models.FloatField, models.DecimalField), "number"), (models.DateTimeField, "datetime"),
         (models.DateField, "date"), (models.TimeField, "time"), (models.DurationField, "duration"),
         (models.JSONField, "json"), (models.FileField, "file"))


def kind_of(field: Any) -> str:
    """A word for a field's values, for descriptions and error messages."""
    if field.is_relation:
        return "key"
    return next((word for classes, word in KINDS if isinstance(field, classes)), "text")
