"""
Function-backed resources: a fixed URI (:class:`Resource`) or an RFC 6570 template
(:class:`ResourceTemplate`) whose variables become the function's keyword arguments.
"""

import base64
import json
from collections.abc import Callable
from typing import Any

import mcp_types
from django.core.exceptions import ObjectDoesNotExist
from pydantic import BaseModel

from ..completions import Completer, run_completer
from ..primitives import Permission, Primitive
from ..protocol.context import RequestContext
from ..protocol.errors import ResourceNotFound
from .uri_templates import UriTemplate


_CONTENTS_MODELS = (mcp_types.TextResourceContents, mcp_types.BlobResourceContents)


def _is_contents(item: Any) -> bool:
    """A ready-made contents entry: a contents model, or a dict with a uri and text or blob."""
    if isinstance(item, _CONTENTS_MODELS):
        return True
    return isinstance(item, dict) and "uri" in item and ("text" in item or "blob" in item)


class _FunctionResource(Primitive):
    """What both kinds share: metadata, and turning a return value into ``contents``."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None, title: str | None, description: str | None,
                 mime_type: str | None, annotations: dict[str, Any] | None, icons: list[dict[str, Any]] | None,
                 meta: dict[str, Any] | None, permission: Permission) -> None:
        super().__init__(fn, name=name, title=title, description=description, icons=icons, meta=meta,
                         permission=permission)
        self.mime_type = mime_type
        self.annotations = annotations

    def _described(self, required: dict[str, Any], **optional: Any) -> dict[str, Any]:
        return self.described({**required, "name": self.name}, mimeType=self.mime_type, annotations=self.annotations,
                              **optional)

    async def read(self, uri: str, variables: dict[str, str], ctx: RequestContext) -> list[dict[str, Any]]:
        """
        Run the function and return ``contents`` for ``uri``. A function that cannot find what the
        URI names raises ``LookupError`` or Django's ``ObjectDoesNotExist`` (``Book.objects.get()``
        does): the client gets the protocol's resource-not-found error.
        """
        try:
            value = await self.callable(variables, ctx)
        except (LookupError, ObjectDoesNotExist):
            raise ResourceNotFound(uri) from None
        return self.contents(uri, value)

    def contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        """str → text, bytes → base64 blob, JSON-able data → JSON text, contents models as they are."""
        if _is_contents(value):
            value = [value]
        if isinstance(value, list) and value and all(_is_contents(item) for item in value):
            return [item if isinstance(item, dict) else item.model_dump(by_alias=True, mode="json", exclude_none=True)
                    for item in value]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return [{"uri": uri, "mimeType": self.mime_type or "application/octet-stream",
                     "blob": base64.b64encode(bytes(value)).decode("ascii")}]
        if isinstance(value, str):
            return [{"uri": uri, "mimeType": self.mime_type or "text/plain", "text": value}]
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        return [{"uri": uri, "mimeType": self.mime_type or "application/json",
                 "text": json.dumps(value, ensure_ascii=False, default=str)}]


class Resource(_FunctionResource):
    """A resource at one fixed URI."""

    def __init__(self, fn: Callable[..., Any], uri: str, *, name: str | None = None, title: str | None = None,
                 description: str | None = None, mime_type: str | None = None, size: int | None = None,
                 annotations: dict[str, Any] | None = None, icons: list[dict[str, Any]] | None = None,
                 meta: dict[str, Any] | None = None, permission: Permission = None) -> None:
        super().__init__(fn, name=name, title=title, description=description, mime_type=mime_type,
                         annotations=annotations, icons=icons, meta=meta, permission=permission)
        self.uri = uri
        self.size = size

    def definition(self) -> dict[str, Any]:
        """The ``Resource`` object of ``resources/list``."""
        return self._described({"uri": self.uri}, size=self.size)


class ResourceTemplate(_FunctionResource):
    """Resources addressed by an RFC 6570 URI template, e.g. ``books://{id}``."""

    def __init__(self, fn: Callable[..., Any], uri_template: str, *, name: str | None = None,
                 title: str | None = None, description: str | None = None, mime_type: str | None = None,
                 annotations: dict[str, Any] | None = None, icons: list[dict[str, Any]] | None = None,
                 meta: dict[str, Any] | None = None, permission: Permission = None,
                 complete: dict[str, Completer] | None = None) -> None:
        super().__init__(fn, name=name, title=title, description=description, mime_type=mime_type,
                         annotations=annotations, icons=icons, meta=meta, permission=permission)
        self.uri_template = uri_template
        self.matcher = UriTemplate(uri_template)
        self.completers = dict(complete or {})

    def definition(self) -> dict[str, Any]:
        """The ``ResourceTemplate`` object of ``resources/templates/list``."""
        return self._described({"uriTemplate": self.uri_template})

    def match(self, uri: str) -> dict[str, str] | None:
        return self.matcher.match(uri)

    async def complete(self, variable: str, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        """Suggestions for one template variable."""
        completer = self.completers.get(variable)
        return await run_completer(completer, value, context) if completer else []
