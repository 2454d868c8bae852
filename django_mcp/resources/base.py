"""
Resources as options classes: a fixed URI (:class:`Resource`) or an RFC 6570 template
(:class:`ResourceTemplate`) whose variables become the keyword arguments of ``read``.
"""

import base64
import inspect
import json
from typing import Any

import mcp_types
from django.core.exceptions import ImproperlyConfigured, ObjectDoesNotExist
from pydantic import BaseModel

from ..completions import Completer, run_completer
from ..context import Context
from ..primitives import Primitive, definition_without_none, parameters_of, takes_any_keyword
from ..protocol.context import RequestContext
from ..protocol.errors import ResourceNotFound
from .uri_templates import UriTemplate


_CONTENTS_MODELS = (mcp_types.TextResourceContents, mcp_types.BlobResourceContents)


def _is_contents(item: Any) -> bool:
    """A ready-made contents entry: a contents model, or a dict with a uri and text or blob."""
    if isinstance(item, _CONTENTS_MODELS):
        return True
    return isinstance(item, dict) and "uri" in item and ("text" in item or "blob" in item)


class Resource(Primitive):
    """
    A resource at one fixed URI (MCP spec 2025-11-25, server/resources). ``read`` returns
    ``str`` (text), ``bytes`` (a blob), JSON-able data, or ready-made contents; raising
    ``LookupError`` or Django's ``ObjectDoesNotExist`` (``Book.objects.get()`` does) means "not
    found"::

        class Catalogue(Resource):
            uri = "library://authors"
            mime_type = "application/json"

            def read(self) -> list[dict]:
                return list(Author.objects.values("id", "name"))
    """

    kind = "resource"
    work_method = "read"
    options = Primitive.options | {"uri", "mime_type", "size", "annotations"}

    uri: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None

    def __init__(self) -> None:
        super().__init__()
        self.check_address()

    def check_address(self) -> None:
        if not self.uri or "{" in self.uri:
            raise ImproperlyConfigured(f"{self.origin()}: a Resource needs a fixed `uri`; a URI with {{…}} "
                                       "expressions is a ResourceTemplate.")
        extra = [p.name for p in parameters_of(self.callable.fn, self.callable.context_param)
                 if p.default is inspect.Parameter.empty]
        if extra:
            raise ImproperlyConfigured(f"{self.origin()}: the resource {self.uri!r} has no URI variables to fill "
                                       f"the parameters {', '.join(extra)}.")

    @property
    def key(self) -> str:
        return self.uri or ""

    def get_mime_type(self, ctx: Context) -> str | None:
        return self.mime_type

    def get_annotations(self, ctx: Context) -> dict[str, Any] | None:
        return self.annotations

    def get_cache_hints(self, ctx: Context) -> dict[str, Any] | None:
        """
        ``{"ttlMs": …, "cacheScope": "public" | "private"}`` for 2026-07-28 reads of this resource
        (MCP spec 2026-07-28, server/utilities/caching); None keeps the server's defaults.
        """
        return None

    async def exists(self, uri: str, variables: dict[str, str], ctx: Context) -> bool:
        """Whether ``uri`` names something this request may read, for subscriptions; templates over rows override."""
        return True

    def get_definition_fields(self, ctx: Context) -> dict[str, Any]:
        """The ``Resource`` object of ``resources/list``."""
        return definition_without_none(uri=self.uri, name=self.name, mimeType=self.get_mime_type(ctx),
                                       annotations=self.get_annotations(ctx), size=self.size)

    async def read_contents(self, uri: str, variables: dict[str, str], ctx: RequestContext) -> list[dict[str, Any]]:
        """Run ``read`` and return the ``contents`` of ``uri``; a missing object is ``ResourceNotFound``."""
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


class ResourceTemplate(Resource):
    """
    Resources addressed by an RFC 6570 URI template: the template's variables are the keyword
    arguments of ``read``, and ``complete`` maps a variable to its completer (a list, or
    ``fn(value, context)``) for ``completion/complete``::

        class BookById(ResourceTemplate):
            uri_template = "library://books/{book_id}"
            complete = {"book_id": lambda value, context: Book.objects.values_list("pk", flat=True)}

            def read(self, book_id: str) -> dict: ...
    """

    kind = "resource_template"
    options = (Resource.options - {"uri", "size"}) | {"uri_template", "complete"}

    uri_template: str | None = None
    complete: dict[str, Completer] | None = None
    #: Variables that are identifiers the server looks up (a database key, a slug), never part of
    #: a path: their decoded values may hold ``/`` and dots (see :mod:`~django_mcp.resources.uri_templates`).
    opaque_variables: frozenset[str] = frozenset()

    def check_address(self) -> None:
        if not self.uri_template or "{" not in self.uri_template:
            raise ImproperlyConfigured(f"{self.origin()}: a ResourceTemplate needs a `uri_template` with {{…}} "
                                       "expressions; a fixed URI is a Resource.")
        self.matcher = UriTemplate(self.uri_template, opaque=self.opaque_variables)
        variables = set(self.matcher.variables) | set(self.matcher.query_variables)
        work = self.callable.fn
        parameters = parameters_of(work, self.callable.context_param)
        names = {p.name for p in parameters}
        missing = sorted(variables - names) if not takes_any_keyword(work) else []
        if missing:
            raise ImproperlyConfigured(f"{self.origin()}: the URI template {self.uri_template!r} has "
                                       f"{', '.join('{' + m + '}' for m in missing)}, which read() does not take.")
        unfilled = [p.name for p in parameters if p.name not in variables and p.default is inspect.Parameter.empty]
        if unfilled:
            raise ImproperlyConfigured(f"{self.origin()}: read() needs {', '.join(unfilled)}, which the URI "
                                       f"template {self.uri_template!r} does not provide.")
        strangers = sorted(set(self.complete or {}) - variables)
        if strangers:
            raise ImproperlyConfigured(f"{self.origin()}: complete= names {', '.join(strangers)}, which are not "
                                       f"variables of {self.uri_template!r}.")

    @property
    def key(self) -> str:
        return self.uri_template or ""

    def get_definition_fields(self, ctx: Context) -> dict[str, Any]:
        """The ``ResourceTemplate`` object of ``resources/templates/list``."""
        return definition_without_none(uriTemplate=self.uri_template, name=self.name,
                                       mimeType=self.get_mime_type(ctx), annotations=self.get_annotations(ctx))

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables of ``uri``, or None when it does not fit."""
        return self.matcher.match(uri)

    async def get_completions(self, ctx: Context, variable: str, value: str, context: dict[str, str]) -> list[str]:
        """Suggestions for one template variable (``completion/complete``); override for your own."""
        completer = (self.complete or {}).get(variable)
        return await run_completer(completer, value, context) if completer else []
