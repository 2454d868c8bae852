"""
What tools, resources and prompts have in common: how a Python callable is inspected once at
registration (sync or async, which parameter receives the :class:`Context`), how it is run (sync
code crosses into a thread with Django's connection handling), and who may see it.
"""

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from channels.db import database_sync_to_async

from .context import Context
from .protocol.context import RequestContext


Permission = Callable[[Any], bool] | str | None


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


class RegisteredCallable:
    """A registered callable, inspected once: async or not, and where the Context goes."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = find_context_parameter(fn)
        # Decided once at registration: sync code runs in a thread, with old DB connections closed
        # before and after (Channels' database_sync_to_async), never on the event loop.
        self._sync_runner = None if self.is_async else database_sync_to_async(fn)

    async def __call__(self, kwargs: dict[str, Any], ctx: RequestContext) -> Any:
        if self.context_param is not None:
            kwargs = {**kwargs, self.context_param: Context(ctx)}
        if self.is_async:
            return await self.fn(**kwargs)
        return await self._sync_runner(**kwargs)


async def is_permitted(permission: Permission, ctx: RequestContext) -> bool:
    """
    Check a primitive's permission for the request's user: None allows everyone, a string is a
    Django permission (``"library.view_book"``), a callable gets the user and returns a bool.
    """
    if permission is None:
        return True
    user = ctx.user
    if isinstance(permission, str):
        if user is None:
            return False
        return await database_sync_to_async(user.has_perm)(permission)
    if inspect.iscoroutinefunction(permission):
        return bool(await permission(user))
    return bool(await database_sync_to_async(permission)(user))


class Primitive:
    """
    What every registered tool, resource and prompt carries: the callable (inspected once),
    display metadata and a permission. Subclasses add their own fields and wire shape.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None, title: str | None, description: str | None,
                 icons: list[dict[str, Any]] | None, meta: dict[str, Any] | None, permission: Permission) -> None:
        self.fn = fn
        self.callable = RegisteredCallable(fn)
        self.name = name or fn.__name__
        self.title = title
        self.description = description or docstring_of(fn.__doc__)
        self.icons = icons
        self.meta = meta
        self.permission = permission

    def described(self, required: dict[str, Any], **optional: Any) -> dict[str, Any]:
        """A wire definition: ``required`` fields, then the display fields and ``optional`` ones that are set."""
        definition = dict(required)
        fields = {"title": self.title, "description": self.description, **optional, "icons": self.icons,
                  "_meta": self.meta}
        definition.update((key, value) for key, value in fields.items() if value is not None)
        return definition
