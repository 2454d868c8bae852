"""
What tools, resources, resource templates and prompts have in common.

Each is an *options class*, the way a ``ModelAdmin`` is: options are class attributes (``name``,
``title``, ``description``, ``icons``, ``meta``, ``permission_classes`` …), ``get_*`` hooks vary
what a request sees, and one method does the work (``call`` for a tool, ``read`` for a resource,
``render`` for a prompt). The site keeps one instance per registered class and shares it across
requests, so per-request state lives in the :class:`~django_mcp.Context`, never on ``self``.

The decorators are the short form: ``@tool(title="…")`` on a function builds a subclass whose work
method is that function (:meth:`Primitive.from_function`), as ``AdminSite.register(model,
**options)`` builds a ``ModelAdmin`` subclass. An option that does not exist is a ``TypeError`` at
import time.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, get_type_hints

from django.core.exceptions import ImproperlyConfigured

from .conf import mcp_settings
from .context import Context
from .permissions import BasePermission, PermissionSpec, allows, allows_object, as_permissions
from .protocol.context import RequestContext
from .threads import in_thread


def find_context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of the parameter annotated with :class:`Context`, if any."""
    try:
        hints = get_type_hints(fn)
    except Exception:
        hints = getattr(fn, "__annotations__", {})
    for name, hint in hints.items():
        if hint is Context or hint == "Context":
            return name
    return None


def docstring_of(doc: str | None) -> str | None:
    """The docstring, dedented; None when there is none."""
    return inspect.cleandoc(doc) if doc else None


def snake_case(name: str) -> str:
    """``SearchBooks`` → ``search_books``: the default name of a class-based primitive."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def parameters_of(fn: Callable[..., Any], skip: str | None) -> list[inspect.Parameter]:
    """The parameters a client fills in: all but ``self``, the Context one, ``*args`` and ``**kwargs``."""
    return [parameter for name, parameter in inspect.signature(fn).parameters.items()
            if name != skip and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]


def takes_any_keyword(fn: Callable[..., Any]) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())


class RegisteredCallable:
    """A work method, inspected once: async or not, and where the Context goes."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = find_context_parameter(fn)
        # Decided once at registration: sync code runs on a pool thread with Django's connection
        # handling (threads.py), never on the event loop.
        self._sync_runner = None if self.is_async else in_thread(fn)

    async def __call__(self, kwargs: dict[str, Any], ctx: RequestContext) -> Any:
        if self.context_param is not None:
            kwargs = {**kwargs, self.context_param: Context(ctx)}
        if self.is_async:
            return await self.fn(**kwargs)
        return await self._sync_runner(**kwargs)


class Primitive:
    """
    The options every primitive has. Subclasses name their work method in :attr:`work_method`
    and list the options their short form accepts in :attr:`options`.
    """

    #: ``"tool"``, ``"resource"``, ``"resource_template"`` or ``"prompt"``.
    kind: ClassVar[str] = ""
    #: The method that does the work.
    work_method: ClassVar[str] = ""
    #: Option names the decorators and ``from_function`` accept (each is a class attribute).
    options: ClassVar[frozenset[str]] = frozenset({"name", "title", "description", "icons", "meta",
                                                   "permission_classes", "permission", "required_scopes"})
    #: Set by :meth:`from_function`: the decorated function.
    function: ClassVar[Callable[..., Any] | None] = None

    #: The name clients call it by (a tool's or prompt's ``name``, a resource's ``name``); None: the
    #: function's name for the short forms, else the class's name in snake_case.
    name: str | None = None
    #: A human-readable title clients show instead of the name (MCP's ``title``); None: none sent.
    title: str | None = None
    #: What it does, for the model and the user; None: the function's docstring (for a class, its
    #: work method's, else the class's own).
    description: str | None = None
    #: Icons clients may show: a list of ``{"src": url, "mimeType": …, "sizes": [...]}``
    #: (MCP's ``icons``, 2025-11-25 and later); None: none.
    icons: list[dict[str, Any]] | None = None
    #: Extra metadata sent as the listing entry's ``_meta`` (keys namespaced as MCP asks); None: none.
    meta: dict[str, Any] | None = None
    #: Permission classes, instances, Django permission strings or ``fn(ctx)`` callables
    #: (:data:`~django_mcp.permissions.PermissionSpec`); None means
    #: ``DJANGO_MCP["DEFAULT_PERMISSION_CLASSES"]``.
    permission_classes: Sequence[PermissionSpec] | None = None
    #: Shorthand for a single entry of ``permission_classes``.
    permission: PermissionSpec | None = None
    #: OAuth scopes a scoped credential must grant to see and use this primitive, on top of
    #: those its kind needs (``DJANGO_MCP["REQUIRED_SCOPES"]``). Requests without a scoped
    #: credential (a login session, stdio) are not asked for scopes.
    required_scopes: Any = None

    def __init__(self) -> None:
        work = getattr(self, self.work_method, None)
        if not callable(work):
            raise ImproperlyConfigured(f"{type(self).__qualname__} must define {self.work_method}().")
        self.callable = RegisteredCallable(work)
        self.name = self.name or self.default_name()
        self.description = self.description or self.default_description()
        explicit = self.permission_classes
        # getattr_static: a function set as a class attribute must not come back as a bound method.
        shorthand = inspect.getattr_static(self, "permission")
        shorthand = shorthand.__func__ if isinstance(shorthand, staticmethod) else shorthand
        if shorthand is not None:
            explicit = [*(as_permissions(explicit) if explicit is not None else []), shorthand]
        # Resolved now so a bad entry fails at import; None keeps following the setting.
        self._permissions = None if explicit is None else as_permissions(explicit)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], **options: Any) -> Primitive:
        """The short form: a subclass whose work method is ``fn``, with ``options`` as attributes."""
        cls.check_options(options, f"@{cls.kind}()" if cls.kind != "resource_template" else "@resource()")
        attrs = {**as_class_attributes(options), cls.work_method: staticmethod(fn), "function": staticmethod(fn),
                 "__module__": getattr(fn, "__module__", cls.__module__), "__qualname__": fn.__qualname__}
        subclass = type(fn.__name__, (cls,), attrs)
        return subclass()

    @classmethod
    def check_options(cls, options: dict[str, Any], where: str) -> None:
        """Refuse options this kind of primitive does not have, naming them."""
        known = cls.options | options_added_by_apps(cls.kind)
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"{where} got unknown option{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(map(repr, unknown))}; known options: {', '.join(sorted(known))}")

    # Identity ---------------------------------------------------------------------------------

    @property
    def key(self) -> str:
        """What the site files it under: a name, a URI or a URI template."""
        return self.name or ""

    def default_name(self) -> str:
        return self.function.__name__ if self.function is not None else snake_case(type(self).__name__)

    def default_description(self) -> str | None:
        work = getattr(self, self.work_method)
        return docstring_of(getattr(work, "__doc__", None)) or (
            None if self.function is not None else docstring_of(type(self).__doc__))

    def origin(self) -> str:
        """Where it is defined, for error messages: ``path.py:12 (qualname)``."""
        target = self.function or type(self)
        try:
            path = inspect.getsourcefile(target)
            line = inspect.getsourcelines(target)[1]
        except (OSError, TypeError):
            return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
        return f"{path}:{line} ({target.__qualname__})"

    # Per-request hooks ------------------------------------------------------------------------

    def get_title(self, ctx: Context) -> str | None:
        return self.title

    def get_description(self, ctx: Context) -> str | None:
        return self.description

    def get_icons(self, ctx: Context) -> list[dict[str, Any]] | None:
        return self.icons

    def get_meta(self, ctx: Context) -> dict[str, Any] | None:
        return self.meta

    def get_definition_fields(self, ctx: Context) -> dict[str, Any]:
        """The kind-specific fields of the wire definition; subclasses override."""
        return {}

    async def get_definition(self, ctx: Context) -> dict[str, Any]:
        """
        The wire object of the ``*/list`` results, for one request. By default :meth:`definition`;
        override this coroutine when the definition needs the database.
        """
        return self.definition(ctx)

    def definition(self, ctx: Context | None = None) -> dict[str, Any]:
        """
        The wire object built from the ``get_*`` hooks. They run on the event loop, so they must
        not touch the database; without a request (``ctx=None``) they give the class's options.
        """
        definition = self.get_definition_fields(ctx)
        display = {"title": self.get_title(ctx), "description": self.get_description(ctx),
                   "icons": self.get_icons(ctx), "_meta": self.get_meta(ctx)}
        definition.update((key, value) for key, value in display.items() if value is not None)
        return definition

    # Permissions ------------------------------------------------------------------------------

    def get_permissions(self) -> list[BasePermission]:
        """The permission instances that guard this primitive (DRF's ``get_permissions``)."""
        if self._permissions is not None:
            return self._permissions
        return default_permissions()

    def get_required_scopes(self, ctx: Context) -> frozenset[str]:
        """The scopes a scoped credential needs here: the kind's and :attr:`required_scopes`."""
        return kind_scopes(self.kind) | frozenset(self.required_scopes or ())

    async def has_permission(self, ctx: Context) -> bool:
        """
        Whether the request may see and use this primitive: listings and calls ask this. The
        permission classes are asked first, so a scope challenge never reveals a primitive the
        user could not use anyway.
        """
        if not await allows(self.get_permissions(), ctx, self):
            return False
        granted = ctx.scopes
        if granted is None:
            return True
        needed = self.get_required_scopes(ctx)
        if needed <= granted:
            return True
        if ctx.action not in (None, "list"):
            ctx.request.scope_challenge = needed | granted
        return False

    async def has_object_permission(self, ctx: Context, obj: Any) -> bool:
        """Whether the request may reach ``obj`` (a model row…) through this primitive."""
        return await allows_object(self.get_permissions(), ctx, self, obj)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind} {self.key!r}>"


_defaults: tuple[Any, list[BasePermission]] = (None, [])
_kind_scopes: tuple[Any, dict[str, frozenset[str]]] = (object(), {})
#: What scoped credentials need per kind when ``REQUIRED_SCOPES`` is None, as the installed apps
#: declare it (:func:`declare_kind_scopes`; ``django_mcp.oauth`` declares its MCP scopes).
_declared_kind_scopes: dict[str, Any] = {}


def declare_kind_scopes(table: dict[str, Any]) -> None:
    """
    Scopes a scoped credential needs for each kind of primitive (``{"tool": ["mcp:tools"], …}``)
    unless ``DJANGO_MCP["REQUIRED_SCOPES"]`` says otherwise: an app that issues scoped
    credentials declares its scope set in ``AppConfig.ready()``, as ``django_mcp.oauth`` does.
    """
    global _kind_scopes
    _declared_kind_scopes.update(table)
    _kind_scopes = (object(), {})  # made again on the next question


def kind_scopes(kind: str) -> frozenset[str]:
    """What ``DJANGO_MCP["REQUIRED_SCOPES"]`` (or, when None, the installed apps) ask of a scoped credential."""
    global _kind_scopes
    configured = mcp_settings.REQUIRED_SCOPES
    if _kind_scopes[0] is not configured:
        table = configured if configured is not None else _declared_kind_scopes
        _kind_scopes = (configured, {name: frozenset([scopes] if isinstance(scopes, str) else scopes)
                                     for name, scopes in table.items()})
    return _kind_scopes[1].get(kind, frozenset())


def default_permissions() -> list[BasePermission]:
    """``DEFAULT_PERMISSION_CLASSES`` as instances, made again only when the setting changes."""
    global _defaults
    classes = mcp_settings.DEFAULT_PERMISSION_CLASSES  # a new list object after a settings reload
    if _defaults[0] is not classes:
        _defaults = (classes, as_permissions(classes))
    return _defaults[1]


def options_added_by_apps(kind: str) -> frozenset[str]:
    """
    Options of ``kind`` (``"tool"``…) that installed apps add: an app's ``AppConfig`` names them in
    ``mcp_primitive_options = {"tool": {"task_support"}}`` and reads them itself
    (``getattr(primitive, name, default)``), as the tasks app does. Declared on the config rather
    than registered in ``ready()``, so the short forms accept them whatever the order of
    ``INSTALLED_APPS`` (django_mcp discovers ``mcp.py`` modules in its own ``ready()``). The options
    class form needs nothing: any class attribute is an option.
    """
    from django.apps import apps

    if not apps.apps_ready:
        return frozenset()
    added: set[str] = set()
    for config in apps.get_app_configs():
        added |= set((getattr(config, "mcp_primitive_options", None) or {}).get(kind, ()))
    return frozenset(added)


def as_class_attributes(options: dict[str, Any]) -> dict[str, Any]:
    """Options as class attributes: functions are wrapped so they do not become methods."""
    return {name: staticmethod(value) if inspect.isfunction(value) else value for name, value in options.items()}


def definition_without_none(**fields: Any) -> dict[str, Any]:
    """Wire fields that are set."""
    return {key: value for key, value in fields.items() if value is not None}
