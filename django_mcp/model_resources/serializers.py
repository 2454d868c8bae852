"""
Model rows as JSON, with Django REST framework serializers.

:class:`ModelResourceSerializer` is a ``ModelSerializer`` for reading only, with two changes: a
related object becomes the URI of its own resource when its model is published on the site (a
link the client can read, instead of the object dumped inline), or its primary key when it is not;
and a file or image becomes the URI of the blob resource that serves its bytes. Everything else is
DRF's own representation, which keeps values lossless: dates and times in ISO 8601, decimals as
strings, UUIDs as strings, JSON fields as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from rest_framework import serializers


#: Serializer context key: ``fn(model, obj) -> uri | None`` for related objects.
LINK = "django_mcp.link"
#: Serializer context key: ``fn(obj, field_name) -> uri`` for files.
FILE_URI = "django_mcp.file_uri"
#: Serializer context key: ``fn(model) -> bool``, whether a related model's links need only its pk.
PK_LINKS = "django_mcp.pk_links"


class ResourceLinkField(serializers.RelatedField):
    """A related object as its resource's URI if its model is published, else as its primary key."""

    def __init__(self, related_model: Any = None, **kwargs: Any) -> None:
        # Output only: model resources never write through their serializer.
        kwargs.pop("queryset", None)
        kwargs["read_only"] = True
        self.related_model = related_model
        super().__init__(**kwargs)

    def use_pk_only_optimization(self) -> bool:
        # Without it every row would load each related object just to name it.
        pk_links = self.context.get(PK_LINKS)
        return pk_links is None or pk_links(self.related_model)

    def to_representation(self, value: Any) -> Any:
        link = self.context.get(LINK)
        uri = link(self.related_model, value) if link is not None else None
        if uri is not None:
            return uri
        pk = value.pk
        return pk if isinstance(pk, (int, str)) or pk is None else str(pk)


class ResourceFileField(serializers.Field):
    """A file or image as the URI of the blob resource that serves it; None when there is none."""

    def __init__(self, **kwargs: Any) -> None:
        for name in ("max_length", "allow_empty_file", "use_url", "allow_null", "required"):
            kwargs.pop(name, None)
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        if not value:
            return None
        file_uri: Callable[[Any, str], str] | None = self.context.get(FILE_URI)
        return file_uri(value.instance, value.field.name) if file_uri else value.name


class ModelResourceSerializer(serializers.ModelSerializer):
    """The default base of the serializers model resources build from ``fields``/``exclude``."""

    serializer_related_field = ResourceLinkField
    serializer_related_to_field = ResourceLinkField
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.FileField: ResourceFileField,
        models.ImageField: ResourceFileField,
    }

    def build_relational_field(self, field_name: str, relation_info: Any) -> tuple[type, dict[str, Any]]:
        field_class, kwargs = super().build_relational_field(field_name, relation_info)
        if issubclass(field_class, ResourceLinkField):
            kwargs.pop("slug_field", None)
            kwargs["related_model"] = relation_info.related_model
        return field_class, kwargs


def build_serializer_class(model: Any, fields: Any, exclude: Any,
                           base: type[serializers.ModelSerializer] = ModelResourceSerializer) -> type:
    """
    A serializer class for ``model``: ``fields`` (a list or ``"__all__"``) or ``exclude``, as DRF
    requires one of them. The primary key is always included, and a user model's password hash
    only when listed by name.
    """
    opts = model._meta
    if fields is None and exclude is None:
        raise ImproperlyConfigured(f"The model resource of {opts.label} needs `fields` (a list of names, or "
                                   "\"__all__\") or `exclude`, as a DRF ModelSerializer does.")
    if fields is not None and exclude is not None:
        raise ImproperlyConfigured(f"The model resource of {opts.label} sets both `fields` and `exclude`.")
    pk_name = opts.pk.name
    meta: dict[str, Any] = {"model": model}
    if fields is not None and fields != serializers.ALL_FIELDS:
        names = list(fields)
        meta["fields"] = names if pk_name in names or "pk" in names else [pk_name, *names]
    else:
        excluded = [name for name in (exclude or ()) if name not in (pk_name, "pk")]
        if issubclass(model, AbstractBaseUser) and "password" not in excluded:
            # "__all__" on a user model must not publish password hashes.
            excluded.append("password")
        if excluded:
            meta["exclude"] = excluded
        else:
            meta["fields"] = serializers.ALL_FIELDS
    Meta = type("Meta", (), meta)
    return type(f"{model.__name__}ResourceSerializer", (base,), {"Meta": Meta, "__module__": __name__})


__all__ = ["ModelResourceSerializer", "ResourceFileField", "ResourceLinkField", "build_serializer_class"]
