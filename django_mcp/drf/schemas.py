"""
What an action of a DRF view takes and gives, read once from the view class for
:mod:`~django_mcp.drf.views`: the serializer, the lookup argument, the query parameters its
filter backends and pagination class declare (their ``get_schema_operation_parameters()``, the
API DRF's OpenAPI generator uses), the tool's schemas and annotations; and how a response
becomes a ``CallToolResult``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.core.exceptions import FieldDoesNotExist
from django.utils.text import capfirst
from rest_framework import pagination
from rest_framework.filters import OrderingFilter, SearchFilter
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from ..primitives import docstring_of
from ..tools.django_inputs import error_lines, writable_fields
from ..tools.field_schemas import NULL, as_json, key_schema, serializer_schema


logger = logging.getLogger("django_mcp.tools")

BODY_METHODS = frozenset({"post", "put", "patch"})
TITLES = {"list": "List {plural}", "retrieve": "Get a {name}", "create": "Create a {name}",
          "update": "Update a {name}", "partial_update": "Update some fields of a {name}",
          "destroy": "Delete a {name}"}
#: The JSON Schema keywords kept from an OpenAPI parameter schema (not ``example``, ``nullable``…).
PARAMETER_KEYWORDS = frozenset({"type", "format", "enum", "items", "minimum", "maximum", "pattern", "default"})
#: The paginators whose answers are ``{"results": [...], "next": …}`` (with ``count`` for the first two).
ENVELOPES = {pagination.PageNumberPagination.get_paginated_response: True,
             pagination.LimitOffsetPagination.get_paginated_response: True,
             pagination.CursorPagination.get_paginated_response: False}


@dataclass(frozen=True)
class ViewAction:
    """One action of a view to publish: its name, HTTP method, whether it addresses one object."""

    name: str
    method: str
    detail: bool
    #: The method of the view that does the work (its docstring describes the tool).
    handler: Callable[..., Any] | None = None
    #: For ``@action`` methods: the URL segment and the initkwargs routers give the view.
    url_path: str | None = None
    initkwargs: dict[str, Any] | None = None


class ViewShape:
    """The arguments and result of one action of a view, for its tool."""

    def __init__(self, view: type, action: ViewAction, initkwargs: dict[str, Any]) -> None:
        self.view_class = view
        self.action = action
        self.model = self.model_of(view)
        # A view object bound to no request: what get_serializer_class() and the backends look at.
        self.view = view(**initkwargs)
        self.view.action = action.name
        self.view.request, self.view.args, self.view.kwargs, self.view.format_kwarg = None, (), {}, None
        self.serializer = self._serializer()
        self.has_body = action.method in BODY_METHODS
        if self.has_body:
            self.body_fields: dict[str, Any] | None = writable_fields(self.serializer) if self.serializer else None
        else:
            self.body_fields = {}
        self.lookup_kwarg = self.lookup_argument = None
        if action.detail:
            self.lookup_kwarg = getattr(view, "lookup_url_kwarg", None) or getattr(view, "lookup_field", "pk")
            # A body field of the same name (a writable slug…) keeps its name; the lookup gives way.
            clash = self.body_fields is not None and self.lookup_kwarg in self.body_fields
            self.lookup_argument = f"current_{self.lookup_kwarg}" if clash else self.lookup_kwarg
        self.page_parameters: list[str] = []
        self.parameters = self._list_parameters() if action.name == "list" else []
        # None: free-form query parameters (a GET whose parameters nothing declares).
        free_query = action.method in ("get", "delete") and action.name not in ("list", "retrieve", "destroy")
        self.query_names: set[str] | None = None if free_query else {p["name"] for p in self.parameters}

    @staticmethod
    def model_of(view: type) -> Any:
        queryset = getattr(view, "queryset", None)
        if queryset is not None:
            return queryset.model
        meta = getattr(getattr(view, "serializer_class", None), "Meta", None)
        return getattr(meta, "model", None)

    def _serializer(self) -> Any:
        if self.action.url_path is not None:
            # An @action reads its body as it likes: it is described only when the action names its
            # own serializer_class, not by the viewset's (which would demand a whole object).
            serializer_class = (self.action.initkwargs or {}).get("serializer_class")
        else:
            try:
                serializer_class = self.view.get_serializer_class()
            except (AttributeError, AssertionError):
                serializer_class = getattr(self.view, "serializer_class", None)
        if serializer_class is None:
            return None
        return serializer_class(context={"request": None, "view": self.view, "format": None})

    def _list_parameters(self) -> list[dict[str, Any]]:
        view = self.view
        found: list[dict[str, Any]] = []
        for backend_class in getattr(view, "filter_backends", None) or ():
            backend = backend_class()
            if isinstance(backend, SearchFilter) and not getattr(view, "search_fields", None):
                continue  # SearchFilter does nothing without search_fields
            try:
                declared = backend.get_schema_operation_parameters(view)
            except Exception:
                logger.warning("%s: cannot read the query parameters of %s", self.view_class.__qualname__,
                               backend_class.__qualname__, exc_info=True)
                continue
            for parameter in declared:
                found.append(self._described(backend, dict(parameter)))
        paginator = self.paginator()
        if paginator is not None:
            declared = paginator.get_schema_operation_parameters(view)
            self.page_parameters = [parameter["name"] for parameter in declared]
            found.extend(declared)
        return [p for p in found if p.get("in", "query") == "query" and p.get("name")]

    def _described(self, backend: Any, parameter: dict[str, Any]) -> dict[str, Any]:
        view = self.view
        extra = ""
        if isinstance(backend, SearchFilter):
            extra = f" Looked for in: {', '.join(field.lstrip('^=@$') for field in view.search_fields)}."
        elif isinstance(backend, OrderingFilter):
            fields = getattr(view, "ordering_fields", None)
            if isinstance(fields, (list, tuple)):
                extra = (f" One or more of {', '.join(fields)}, separated by commas; a leading - sorts "
                         "in descending order.")
        if extra:
            parameter["description"] = str(parameter.get("description", "")) + extra
        return parameter

    def paginator(self) -> Any:
        """The pagination class's instance, or None when the view does not paginate."""
        paginator = getattr(self.view, "paginator", None)
        if paginator is None:
            return None
        if isinstance(paginator, (pagination.PageNumberPagination, pagination.CursorPagination)) and \
                paginator.page_size is None:
            return None  # no page size: DRF answers with every row
        return paginator

    # Schemas --------------------------------------------------------------------------------------

    def argument_names(self) -> list[str]:
        return list(self.input_schema()["properties"])

    def input_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        if self.lookup_argument is not None:
            properties[self.lookup_argument] = self.lookup_schema()
            required.append(self.lookup_argument)
        for parameter in self.parameters:
            schema = {k: v for k, v in (parameter.get("schema") or {}).items() if k in PARAMETER_KEYWORDS}
            if parameter.get("description"):
                schema["description"] = str(parameter["description"])
            properties[parameter["name"]] = schema
            if parameter.get("required"):
                required.append(parameter["name"])
        if self.has_body and self.serializer is not None:
            body = serializer_schema(self.serializer, partial=self.action.method == "patch")
            properties.update(body["properties"])
            required.extend(body.get("required", []))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if self.query_names is not None and (self.body_fields is not None or not self.has_body):
            schema["additionalProperties"] = False
        return schema

    def lookup_schema(self) -> dict[str, Any]:
        field = getattr(self.view_class, "lookup_field", "pk")
        schema: dict[str, Any] = {"type": "string"}
        if self.model is not None:
            try:
                schema = dict(key_schema(self.model, None if field == "pk" else field))
            except FieldDoesNotExist:
                pass
        what = self.model._meta.verbose_name if self.model is not None else "object"
        schema["description"] = f"The {field if field != 'pk' else 'id'} of the {what}."
        return schema

    def output_schema(self) -> dict[str, Any] | None:
        """The serializer's representation, for the standard actions whose answer is predictable."""
        if self.serializer is None or self.action.name not in ("list", "retrieve", "create", "update",
                                                               "partial_update"):
            return None
        item = serializer_schema(self.serializer, output=True)
        if self.action.name != "list":
            return item
        properties: dict[str, Any] = {"results": {"type": "array", "items": item}}
        paginator = self.paginator()
        if paginator is not None:
            counted = ENVELOPES.get(type(paginator).get_paginated_response)
            if counted is None:
                return None  # a custom envelope: its shape is the paginator's secret
            link = {"anyOf": [{"type": "string", "format": "uri"}, NULL]}
            properties.update(next=link, previous=link)
            if counted:
                properties["count"] = {"type": "integer", "minimum": 0}
        return {"type": "object", "properties": properties, "required": ["results"]}

    # Texts ----------------------------------------------------------------------------------------

    def title(self) -> str:
        template = TITLES.get(self.action.name)
        if template and self.model is not None:
            opts = self.model._meta
            return template.format(name=opts.verbose_name, plural=opts.verbose_name_plural)
        if self.action.initkwargs and self.action.initkwargs.get("name"):
            return str(self.action.initkwargs["name"])  # @action(name=...), or the method's name made pretty
        if self.action.name in ("get", "post", "put", "patch", "delete"):
            return f"{self.action.name.upper()} {self.view.get_view_name()}"
        return f"{capfirst(self.action.name.replace('_', ' '))} ({self.view.get_view_name()})"

    def description(self) -> str:
        """What the action does, then its docstring (or the view's) and how its pages go."""
        parts = [f"{self.title()}."]
        handler = self.action.handler
        doc = docstring_of(getattr(handler, "__doc__", None)) if _is_own(handler) else None
        doc = doc or (docstring_of(self.view_class.__doc__) if _is_own(self.view_class) else None)
        if doc:
            parts.append(doc)
        if self.page_parameters:
            parts.append(f"Results come a page at a time: pass {' or '.join(self.page_parameters)} for others.")
        return "\n\n".join(parts)

    def annotations(self) -> dict[str, Any]:
        """Hints from the HTTP method's semantics (RFC 9110 safe and idempotent methods)."""
        method, name = self.action.method, self.action.name
        if method == "get":
            return {"readOnlyHint": True}
        if name == "create":
            return {"readOnlyHint": False, "destructiveHint": False}
        if method in ("put", "delete") or name == "partial_update":
            return {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
        return {"readOnlyHint": False}

    def request_path(self, base: str, kwargs: dict[str, str]) -> str:
        path = base if base.endswith("/") else f"{base}/"
        if self.lookup_kwarg is not None and self.lookup_kwarg in kwargs:
            path += f"{quote(kwargs[self.lookup_kwarg], safe='')}/"
        if self.action.url_path:
            path += f"{self.action.url_path}/"
        return path


def _is_own(target: Any) -> bool:
    """Whether a class or method comes from the project, not from DRF (whose docstrings say nothing here)."""
    module = getattr(target, "__module__", "") or ""
    return target is not None and not module.startswith("rest_framework")


# Responses ------------------------------------------------------------------------------------------


def response_data(response: Any) -> Any:
    """A response's data as plain JSON: DRF's ``data``, a JSON body, or the body's text."""
    if isinstance(response, Response):
        return None if response.data is None else as_json(response.data, JSONEncoder)
    if getattr(response, "streaming", False):
        return None
    content = response.content
    if "json" in response.get("Content-Type", ""):
        try:
            return json.loads(content)
        except ValueError:
            pass
    return content.decode(response.charset or "utf-8", "replace") or None


def response_error(response: Any, data: Any) -> str:
    """``Not Found (404): No Volume matches the given query.``, and when to retry a throttled call."""
    if isinstance(data, dict) and set(data) == {"detail"}:
        detail = str(data["detail"])
    elif data is None:
        detail = ""
    else:
        detail = "; ".join(error_lines(data))
    text = f"{response.reason_phrase} ({response.status_code})" + (f": {detail}" if detail else ".")
    retry = response.headers.get("Retry-After")
    if retry:
        text += f" Retry after {retry} seconds." if retry.isdigit() else f" Retry after {retry}."
    return text


def structured_answer(data: Any, status: int, response: Any, has_schema: bool,
                      shape: ViewShape) -> dict[str, Any] | None:
    """
    The result of a 2xx answer. With an output schema it always carries ``structuredContent``
    (MCP spec 2025-06-18 and 2025-11-25, server/tools, "Output Schema"); None when the answer
    cannot be made to fit.
    """
    if isinstance(data, dict):
        structured = data
    elif isinstance(data, list) and (has_schema or shape.action.name == "list"):
        structured = {"results": data}  # structured content is an object before 2026-07-28
    else:
        structured = None
    if has_schema and structured is None:
        return None
    if data is None:
        text = f"Done: {status} {response.reason_phrase}."
    elif isinstance(data, str) and structured is None:
        text = data
    else:
        text = json.dumps(structured if structured is not None else data, ensure_ascii=False)
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        result["structuredContent"] = structured
    return result


__all__ = ["TITLES", "ViewShape", "response_data", "response_error", "structured_answer"]
