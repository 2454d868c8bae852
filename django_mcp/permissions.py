"""
Permission classes: who may see and use a tool, resource or prompt.

Shaped like DRF's ``rest_framework.permissions``: a primitive lists ``permission_classes``; each
answers ``has_permission(ctx, primitive)`` (may this request use the primitive at all) and
``has_object_permission(ctx, primitive, obj)`` (may it touch this object, e.g. one model row).
Both may be ``async def`` or plain ``def``; plain ones run in a thread with Django's connection
handling, so they may query the database. Classes and instances compose with ``&``, ``|`` and
``~``::

    from django_mcp.permissions import HasPermission, IsAuthenticated, IsAdminUser

    @tool(permission_classes=[IsAuthenticated & (IsAdminUser | HasPermission("library.change_book"))])
    def lend_book(book_id: int) -> str: ...

The same question decides listings and calls: a primitive a request may not use is left out of
``tools/list`` (and the other lists) and reported as unknown when called, so nothing reveals that
it exists. Shorthands in ``permission_classes`` (or ``permission=``): a string is a Django
permission (:class:`HasPermission`), a callable is ``fn(ctx) -> bool`` (:class:`CallablePermission`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

from .threads import in_thread


if TYPE_CHECKING:
    from .context import Context


async def _ask(method: Callable[..., Any], *args: Any) -> bool:
    """
    Call a permission method, sync (in a thread, it may use the ORM) or async. A result that is
    awaitable (a lambda returning a coroutine, an object with ``async def __call__``) is awaited:
    a coroutine object is truthy, and taking it for a yes would let everyone in.
    """
    if inspect.iscoroutinefunction(method) or inspect.iscoroutinefunction(getattr(method, "__call__", None)):
        result = await method(*args)
    else:
        result = await in_thread(method)(*args)
    if inspect.isawaitable(result):
        result = await result
    return bool(result)


def _is_type_hint(value: Any) -> bool:
    """None or a class that is no permission: ``|`` then builds a type union, not an OR."""
    return value is None or (isinstance(value, type) and not issubclass(value, BasePermission))


class _Composable(type):
    """Lets permission *classes* compose: ``IsAuthenticated & IsAdminUser`` builds an :class:`AND`."""

    def __and__(cls, other: Any) -> BasePermission:
        return AND(as_permission(cls), as_permission(other))

    def __rand__(cls, other: Any) -> BasePermission:
        return AND(as_permission(other), as_permission(cls))

    def __or__(cls, other: Any) -> Any:
        if _is_type_hint(other):
            return super().__or__(other)  # IsAuthenticated | None in an annotation is a Union
        return OR(as_permission(cls), as_permission(other))

    def __ror__(cls, other: Any) -> Any:
        if _is_type_hint(other):
            return super().__ror__(other)
        return OR(as_permission(other), as_permission(cls))

    def __invert__(cls) -> BasePermission:
        return NOT(as_permission(cls))


class BasePermission(metaclass=_Composable):
    """
    Override ``has_permission`` and, for primitives that hand out objects, ``has_object_permission``.
    Both allow by default, so a class may implement only the one it cares about.
    """

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        """Whether the request may see and use ``primitive``."""
        return True

    async def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        """Whether the request may reach ``obj`` through ``primitive``."""
        return True

    def __and__(self, other: Any) -> BasePermission:
        return AND(self, as_permission(other))

    def __rand__(self, other: Any) -> BasePermission:
        return AND(as_permission(other), self)

    def __or__(self, other: Any) -> BasePermission:
        return OR(self, as_permission(other))

    def __ror__(self, other: Any) -> BasePermission:
        return OR(as_permission(other), self)

    def __invert__(self) -> BasePermission:
        return NOT(self)


class AND(BasePermission):
    """Both operands must allow; the second is not asked when the first refuses."""

    def __init__(self, first: BasePermission, second: BasePermission) -> None:
        self.first, self.second = first, second

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        return (await _ask(self.first.has_permission, ctx, primitive)
                and await _ask(self.second.has_permission, ctx, primitive))

    async def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        return (await _ask(self.first.has_object_permission, ctx, primitive, obj)
                and await _ask(self.second.has_object_permission, ctx, primitive, obj))

    def __repr__(self) -> str:
        return f"({self.first!r} & {self.second!r})"


class OR(BasePermission):
    """
    Either operand may allow. For objects, an operand counts only if it allowed both the
    primitive and the object, as DRF does: ``A | B`` never mixes A's view check with B's object check.
    """

    def __init__(self, first: BasePermission, second: BasePermission) -> None:
        self.first, self.second = first, second

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        return (await _ask(self.first.has_permission, ctx, primitive)
                or await _ask(self.second.has_permission, ctx, primitive))

    async def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        for operand in (self.first, self.second):
            if (await _ask(operand.has_permission, ctx, primitive)
                    and await _ask(operand.has_object_permission, ctx, primitive, obj)):
                return True
        return False

    def __repr__(self) -> str:
        return f"({self.first!r} | {self.second!r})"


class NOT(BasePermission):
    """Allows what the operand refuses."""

    def __init__(self, operand: BasePermission) -> None:
        self.operand = operand

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        return not await _ask(self.operand.has_permission, ctx, primitive)

    async def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        return not await _ask(self.operand.has_object_permission, ctx, primitive, obj)

    def __repr__(self) -> str:
        return f"~{self.operand!r}"


class AllowAny(BasePermission):
    """Everyone, authenticated or not (the default of ``DEFAULT_PERMISSION_CLASSES``)."""

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        return True


class IsAuthenticated(BasePermission):
    """Only authenticated users."""

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        user = ctx.user
        return bool(user is not None and user.is_authenticated)


class IsAdminUser(BasePermission):
    """Only staff users (``user.is_staff``), as DRF's class of the same name."""

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        user = ctx.user
        return bool(user is not None and user.is_authenticated and user.is_staff)


class HasPermission(BasePermission):
    """The user has every one of these Django permissions (``"app_label.codename"``)."""

    def __init__(self, *perms: str) -> None:
        if not perms or not all(isinstance(perm, str) and "." in perm for perm in perms):
            raise ImproperlyConfigured(f"HasPermission takes permission names like 'app_label.codename', "
                                       f"not {perms!r}")
        self.perms = perms

    def has_permission(self, ctx: Context, primitive: Any) -> bool:
        # Sync on purpose: has_perms() may query the database, so it runs in a thread.
        user = ctx.user
        return bool(user is not None and user.has_perms(self.perms))

    def __repr__(self) -> str:
        return f"HasPermission({', '.join(map(repr, self.perms))})"


class DjangoModelPermissions(BasePermission):
    """
    Django's model permissions, mapped per MCP action as DRF maps HTTP methods. The primitive
    names its model in a ``model`` attribute (model resources do). Actions: ``read``
    (``resources/read``), ``get`` (``prompts/get``) and ``complete`` need ``view``; ``call``
    (``tools/call``) needs ``change``, or ``view`` for a tool annotated ``readOnlyHint``. Listing
    a primitive asks what using it asks, so a tool is listed only to those who may call it;
    ``list`` is for listings of the model's own rows. Override :attr:`perms_map` to change this.
    """

    view = ["%(app_label)s.view_%(model_name)s"]
    perms_map: dict[str, list[str]] = {
        "list": view,
        "read": view,
        "get": view,
        "complete": view,
        "call": ["%(app_label)s.change_%(model_name)s"],
        "call_read_only": view,
    }

    def get_required_permissions(self, action: str, model: Any) -> list[str]:
        """The permission names an action on ``model`` needs."""
        if action not in self.perms_map:
            raise ImproperlyConfigured(f"{type(self).__name__}.perms_map has no entry for MCP action {action!r}")
        names = {"app_label": model._meta.app_label, "model_name": model._meta.model_name}
        return [perm % names for perm in self.perms_map[action]]

    def model_of(self, primitive: Any) -> Any:
        model = getattr(primitive, "model", None)
        if model is None:
            raise ImproperlyConfigured(f"{type(self).__name__} guards {primitive!r}, which names no model: "
                                       "set a `model` attribute on it, or use HasPermission.")
        return model

    #: What using each kind of primitive is, for listings and completions of it.
    use_actions = {"tool": "call", "resource": "read", "resource_template": "read", "prompt": "get"}

    def action_of(self, ctx: Context, primitive: Any) -> str:
        action = ctx.action or "list"
        if action in ("list", "complete") and getattr(primitive, "kind", None) in self.use_actions:
            # Hidden and refused must agree: what may not be used is not listed either.
            action = self.use_actions[primitive.kind]
        if action == "call" and (getattr(primitive, "annotations", None) or {}).get("readOnlyHint"):
            return "call_read_only"
        return action

    def has_permission(self, ctx: Context, primitive: Any) -> bool:
        # The model first: a misconfigured primitive fails for every user, not only the authenticated.
        perms = self.get_required_permissions(self.action_of(ctx, primitive), self.model_of(primitive))
        user = ctx.user
        if user is None or not user.is_authenticated:
            return False
        return bool(user.has_perms(perms))


class DjangoObjectPermissions(DjangoModelPermissions):
    """Model permissions checked per object too, through the auth backends (django-guardian…)."""

    def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        user = ctx.user
        perms = self.get_required_permissions(self.action_of(ctx, primitive), self.model_of(primitive))
        return bool(user is not None and user.has_perms(perms, obj))


class HasScopes(BasePermission):
    """
    The request's credential (``ctx.auth``, set by an authentication class) grants every one of
    these scopes. A request without a scoped credential is refused, as django-oauth-toolkit's
    ``TokenHasScope`` does.
    """

    def __init__(self, *scopes: str) -> None:
        if not scopes:
            raise ImproperlyConfigured("HasScopes needs at least one scope")
        self.required_scopes = frozenset(scopes)

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        granted = ctx.scopes
        return granted is not None and self.required_scopes <= granted

    def __repr__(self) -> str:
        return f"HasScopes({', '.join(map(repr, sorted(self.required_scopes)))})"


class CallablePermission(BasePermission):
    """A function ``fn(ctx) -> bool``, sync or async, as a permission (the callable shorthand)."""

    def __init__(self, fn: Callable[[Context], Any]) -> None:
        self.fn = fn

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        return await _ask(self.fn, ctx)

    def __repr__(self) -> str:
        return f"CallablePermission({getattr(self.fn, '__qualname__', self.fn)!r})"


#: What a primitive's ``permission_classes`` (or ``permission``) may list: a permission class, an
#: instance (operators make one: ``IsAuthenticated & DjangoModelPermissions``), a Django permission
#: string (``"library.change_book"``) or a callable ``fn(ctx) -> bool``.
PermissionSpec = type[BasePermission] | BasePermission | str | Callable[..., Any]


def as_permission(value: Any) -> BasePermission:
    """
    A permission instance from what a primitive may list: a permission class or instance, a
    Django permission string, or a callable ``fn(ctx) -> bool``.
    """
    if isinstance(value, BasePermission):
        return value
    if isinstance(value, type) and issubclass(value, BasePermission):
        return value()
    if isinstance(value, str):
        return HasPermission(value)
    if callable(value):
        return CallablePermission(value)
    raise ImproperlyConfigured(f"Not a permission: {value!r}. Use a permission class, a Django permission "
                               "string or a callable taking the request context.")


def as_permissions(values: Iterable[Any] | None) -> list[BasePermission]:
    """:func:`as_permission` for each entry of a ``permission_classes`` list."""
    if values is None:
        return []
    if isinstance(values, (str, BasePermission)) or (callable(values) and not isinstance(values, (list, tuple))):
        values = [values]
    return [as_permission(value) for value in values]


async def allows(permissions: Iterable[BasePermission], ctx: Context, primitive: Any) -> bool:
    """Whether every permission allows ``primitive`` (stops at the first refusal)."""
    for permission in permissions:
        # AllowAny is the default on every primitive: answer it without a coroutine.
        if type(permission) is not AllowAny and not await _ask(permission.has_permission, ctx, primitive):
            return False
    return True


async def allows_object(permissions: Iterable[BasePermission], ctx: Context, primitive: Any, obj: Any) -> bool:
    """Whether every permission allows ``obj`` through ``primitive``."""
    for permission in permissions:
        if not await _ask(permission.has_object_permission, ctx, primitive, obj):
            return False
    return True


__all__ = ["AND", "NOT", "OR", "AllowAny", "BasePermission", "CallablePermission", "DjangoModelPermissions",
           "DjangoObjectPermissions", "HasPermission", "HasScopes", "IsAdminUser", "IsAuthenticated", "allows",
           "allows_object", "as_permission", "as_permissions"]
