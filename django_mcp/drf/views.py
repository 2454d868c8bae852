"""
DRF views as tools: publish the actions of an existing ``APIView``, generic view or ``ViewSet``
without changing it for its REST clients::

    from django_mcp.drf import register_view

    register_view(VolumeViewSet, actions=["list", "retrieve", "create"])
    # or: for tool in view_tools(VolumeViewSet, prefix="book"): site.add(tool)

Each action becomes a tool named ``<prefix>_<action>`` (``volume_list``…; the prefix defaults to
the queryset's model name). Its ``inputSchema`` is the view's serializer (``django_mcp.tools.django_inputs``), the
lookup argument of detail actions, and for ``list`` the query parameters the filter backends and
the pagination class declare (``search``, ``ordering``, ``page``, ``cursor``, ``limit``/``offset``…).

A call runs through the view's own ``as_view()`` with a Django request made for it (method, path,
query string, JSON body): the view's authentication, permission, throttle, filter and pagination
classes all apply, as the MCP caller. A 2xx answer is the tool's result; a 4xx one (validation,
permission, not found, throttled) an ``isError`` result that says why; a 5xx one the generic
internal error (MCP spec 2025-11-25, server/tools, "Error Handling").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework.authentication import BaseAuthentication
from rest_framework.viewsets import ViewSetMixin

from ..context import Context
from ..primitives import as_class_attributes, snake_case
from ..protocol.context import RequestContext
from ..threads import in_thread
from ..tools.base import Tool
from ..tools.django_inputs import unknown_keys, writable_fields
from ..tools.http_requests import MCP_CONTEXT, build_request
from ..tools.results import InvalidArguments, error_result
from .schemas import ViewAction, ViewShape, response_data, response_error, structured_answer


logger = logging.getLogger("django_mcp.tools")

#: The standard actions: their HTTP method and whether they address one object.
ACTIONS: dict[str, tuple[str, bool]] = {
    "list": ("get", False), "retrieve": ("get", True), "create": ("post", False),
    "update": ("put", True), "partial_update": ("patch", True), "destroy": ("delete", True),
}
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
#: Tool options ``view_tools`` passes on to every tool it makes.
TOOL_OPTIONS = frozenset({"permission_classes", "permission", "meta", "icons"})


class McpUserAuthentication(BaseAuthentication):
    """
    DRF authentication for views called as tools: the user is the MCP caller, whom the MCP
    transport authenticated already (``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``); ``auth``
    is that request's credential (an OAuth token…), so scope-checking permissions keep working.

    Why a class of its own: the request made for the call has no cookie or header the view's own
    classes could read, and forging one, or using the test helper ``force_authenticate``, would
    misstate where the user came from. This class is put first in the view's classes for the
    tool's calls only, and authenticates nobody else: it reads the Django request's
    ``mcp_context``, a Python attribute only :class:`ViewTool` sets, never anything a REST client
    could send. For an anonymous caller it passes, and the view's classes decide as usual.
    """

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        context = getattr(request._request, MCP_CONTEXT, None)
        user = getattr(context, "user", None)
        if user is None or not getattr(user, "is_authenticated", False):
            return None
        return user, context.auth


def resolve_actions(view: type, actions: Iterable[str] | None) -> list[ViewAction]:
    """
    The actions to publish: names of a viewset's actions (the standard ones and ``@action``
    methods) or of a generic view's mixin actions (``list``, ``create``…), or HTTP method names
    (``get``, ``post``…) of a plain ``APIView``. None: every standard action the view has.
    """
    is_viewset = issubclass(view, ViewSetMixin)
    extra = {fn.__name__: fn for fn in view.get_extra_actions()} if is_viewset else {}
    if actions is None:
        names = [name for name, (method, _) in ACTIONS.items()
                 if hasattr(view, name) and (is_viewset or hasattr(view, method))]
        if not names and not is_viewset:
            names = [method for method in HTTP_METHODS if hasattr(view, method)]
    else:
        names = [actions] if isinstance(actions, str) else list(actions)
    found = []
    for name in names:
        if name in ACTIONS and hasattr(view, name) and (is_viewset or hasattr(view, ACTIONS[name][0])):
            method, detail = ACTIONS[name]
            found.append(ViewAction(name, method, detail, getattr(view, name)))
        elif name in extra:
            fn = extra[name]
            # One tool per action: a multi-method @action is published with its first method.
            method = next(iter(fn.mapping))
            found.append(ViewAction(name, method, bool(fn.detail), fn, fn.url_path, dict(fn.kwargs)))
        elif not is_viewset and name in HTTP_METHODS and hasattr(view, name):
            found.append(ViewAction(name, name, False, getattr(view, name)))
        else:
            raise ImproperlyConfigured(f"{view.__qualname__} has no action {name!r} to publish as a tool.")
    if not found:
        raise ImproperlyConfigured(f"{view.__qualname__} has no action to publish as a tool.")
    return found


class ViewTool(Tool):
    """
    One action of a DRF view as a tool (made by :func:`view_tools`). Arguments are split into
    the lookup (a URL keyword argument), query parameters and the JSON body, the view is called
    with them, and its response becomes the ``CallToolResult``.

    ``view`` is the DRF view or viewset class, ``action`` the :class:`ViewAction` this tool runs
    (as :func:`resolve_actions` finds it) and ``prefix`` the start of the tool's name,
    ``<prefix>_<action>``.
    """

    #: Where the view is mounted (``/volumes/``): the path of the requests, so links it makes are right.
    path: str = "/"
    #: The host of the requests (its absolute links); None: the first usable name of ``ALLOWED_HOSTS``.
    host: str | None = None
    # The output schema is the view's serializer's (ViewShape), never call()'s return annotation.
    structured_output = False

    def __init__(self, view: type, action: ViewAction, prefix: str) -> None:
        self.view_class = view
        self.action = action
        initkwargs = dict(action.initkwargs or {})
        if issubclass(view, ViewSetMixin):
            initkwargs.setdefault("detail", action.detail)
        self.shape = ViewShape(view, action, initkwargs)
        self.name = f"{prefix}_{action.name}"
        self.title = self.title or self.shape.title()
        self.description = self.description or self.shape.description()
        self.annotations = self.annotations or self.shape.annotations()
        self.input_schema = self.shape.input_schema()
        self.output_schema = self.shape.output_schema()
        super().__init__()
        # The view's own classes stay, after the one that knows the MCP caller (for these calls only).
        authentication = initkwargs.get("authentication_classes", view.authentication_classes)
        initkwargs["authentication_classes"] = [McpUserAuthentication, *authentication]
        if issubclass(view, ViewSetMixin):
            self.view_function = view.as_view({action.method: action.name}, **initkwargs)
        else:
            self.view_function = view.as_view(**initkwargs)

    def origin(self) -> str:
        return f"{self.view_class.__module__}.{self.view_class.__qualname__} action {self.action.name!r}"

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Split the arguments into the lookup, the query and the body; unknown ones are refused."""
        shape = self.shape
        lookup, query, body = None, {}, {}
        problems = []
        for key, value in arguments.items():
            if key == shape.lookup_argument:
                lookup = value
            elif shape.query_names is None or key in shape.query_names:
                query[key] = value
            elif shape.body_fields is None or key in shape.body_fields:
                body[key] = value
            else:
                problems.append(key)
        if problems:
            expected = {name: None for name in shape.argument_names()}
            raise InvalidArguments("; ".join(unknown_keys(expected, {key: None for key in problems})))
        if shape.serializer is not None and shape.body_fields is not None:
            nested = unknown_keys(writable_fields(shape.serializer), body)
            if nested:
                raise InvalidArguments("; ".join(nested))
        if shape.lookup_argument is not None and lookup in (None, ""):
            raise InvalidArguments(f"{shape.lookup_argument}: This field is required.")
        kwargs = {shape.lookup_kwarg: str(lookup)} if shape.lookup_argument is not None else {}
        return {"kwargs": kwargs, "query": query, "body": body if shape.has_body else None}

    async def call(self, kwargs: dict[str, Any], query: dict[str, Any], body: Any, ctx: Context) -> dict[str, Any]:
        """Dispatch the request through the view and turn its response into the tool's result."""
        path = self.shape.request_path(self.path, kwargs)
        request = build_request(ctx, self.action.method, path, query, body, host=self.host)
        response = await in_thread(self.view_function)(request, **kwargs)
        return self.answer(response)

    def answer(self, response: Any) -> dict[str, Any]:
        status = response.status_code
        data = response_data(response)
        if 200 <= status < 300:
            result = structured_answer(data, status, response, self.output_schema is not None, self.shape)
            if result is None:
                logger.error("Tool %s: %s answered %s with %r, which its output schema does not describe",
                             self.name, self.origin(), status, type(data))
                return error_result(f"Tool {self.name} failed with an internal error.")
            return result
        if status >= 500:
            logger.error("Tool %s: %s answered %s: %r", self.name, self.origin(), status, data)
            if settings.DEBUG:
                return error_result(response_error(response, data))
            return error_result(f"Tool {self.name} failed with an internal error.")
        return error_result(response_error(response, data))


def default_prefix(view: type) -> str:
    """The queryset's (or the serializer's) model name, else the view's name without its suffix."""
    model = ViewShape.model_of(view)
    if model is not None:
        return model._meta.model_name
    name = view.__name__
    for suffix in ("ViewSet", "APIView", "View"):
        if name.endswith(suffix) and name != suffix:
            name = name[: -len(suffix)]
            break
    return snake_case(name)


def view_tools(view: type, actions: Iterable[str] | None = None, *, prefix: str | None = None,
               path: str | None = None, host: str | None = None, **options: Any) -> list[ViewTool]:
    """
    The tools that publish ``actions`` of the DRF view class ``view`` (see :func:`resolve_actions`),
    named ``<prefix>_<action>``; ``prefix`` defaults to :func:`default_prefix` (the model's name, else
    the view's). ``path`` is where the view is mounted (default ``/<prefix>/``), for the links it
    makes; ``host`` is the host of the requests the tools make (what the view's absolute links
    name), None (the default) the first usable name of ``ALLOWED_HOSTS``. ``options``
    (``permission_classes``, ``permission``, ``meta``, ``icons``) apply to each tool: they decide
    who may see and call it, before the view's own checks.
    """
    from rest_framework.views import APIView

    if not (isinstance(view, type) and issubclass(view, APIView)):
        raise TypeError(f"view_tools() needs a DRF APIView or ViewSet class, not {view!r}")
    unknown = sorted(set(options) - TOOL_OPTIONS)
    if unknown:
        raise TypeError(f"view_tools() got unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))}; known options: prefix, path, host, "
                        f"{', '.join(sorted(TOOL_OPTIONS))}")
    prefix = prefix or default_prefix(view)
    attrs = {**as_class_attributes(options), "path": path or f"/{prefix}/", "host": host,
             "__module__": view.__module__, "__qualname__": f"{view.__qualname__}Tool"}
    tool_class = type(f"{view.__name__}Tool", (ViewTool,), attrs)
    return [tool_class(view, action, prefix) for action in resolve_actions(view, actions)]


def register_view(view: Any, actions: Any = None, *, site: Any = None, **options: Any) -> list[ViewTool]:
    """
    Publish actions of a DRF view or viewset as tools of ``site`` (default ``django_mcp.site``)
    named ``<prefix>_<action>`` (``register_view(BookViewSet, actions=["list", "retrieve"])``);
    ``options`` are those of :func:`view_tools`. All are registered, or none.

    ``view`` is the view or viewset class and ``actions`` the names of the actions to publish, as
    :func:`resolve_actions` reads them; None (the default) publishes every standard action the
    view has.
    """
    if site is None:
        from ..sites import get_default_site

        site = get_default_site()
    return site.add_all(view_tools(view, actions, **options))


__all__ = ["McpUserAuthentication", "ViewAction", "ViewTool", "default_prefix", "register_view", "resolve_actions",
           "view_tools"]

