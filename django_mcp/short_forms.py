"""
The short forms of registration, shared by :class:`~django_mcp.sites.McpSite`: a function becomes
a tool, resource or prompt class (``site.add_tool(fn)``, ``@site.tool()``…), as
``admin.site.register(Model, **options)`` builds a ``ModelAdmin`` subclass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .primitives import Primitive, as_class_attributes
from .prompts.base import Prompt
from .resources.base import Resource, ResourceTemplate
from .tools.base import Tool


class ShortForms:
    """Decorators and ``add_*`` methods that build primitives from functions and register them."""

    def add(self, primitive: Primitive | type[Primitive]) -> Primitive:
        raise NotImplementedError(".add() must be overridden.")

    @staticmethod
    def _build(base: type[Primitive], target: Any, options: dict[str, Any], where: str) -> Primitive:
        """A primitive from a function (the short form), or from a class with extra options."""
        if isinstance(target, base):
            if options:
                raise TypeError(f"{where}: options go on the class, not on an instance.")
            return target
        if isinstance(target, type) and issubclass(target, base):
            if not options:
                return target()
            target.check_options(options, where)
            # The docstring is not inherited by the subclass, and it is the default description;
            # Python >= 3.13 finds a class's source by its __firstlineno__, which type() does not set.
            attrs = {**as_class_attributes(options), "__doc__": target.__doc__, "__module__": target.__module__,
                     "__qualname__": target.__qualname__}
            if hasattr(target, "__firstlineno__"):
                attrs["__firstlineno__"] = target.__firstlineno__
            return type(target.__name__, (target,), attrs)()
        if not callable(target):
            raise TypeError(f"{where} needs a function or a {base.__name__} subclass, not {target!r}")
        return base.from_function(target, **options)

    def add_tool(self, fn: Any, **options: Any) -> Tool:
        """Register a function (or a :class:`Tool` subclass) as a tool."""
        return self.add(self._build(Tool, fn, options, "@tool()"))  # type: ignore[return-value]

    def add_resource(self, fn: Any, uri: str | None = None, **options: Any) -> Resource:
        """Register a function as the resource at ``uri``; a URI with ``{…}`` expressions is a template."""
        if uri is None:
            # A Resource or ResourceTemplate class (or instance) that names its own address.
            is_template = isinstance(fn, ResourceTemplate) or (isinstance(fn, type) and issubclass(fn, ResourceTemplate))
            return self.add(self._build(ResourceTemplate if is_template else Resource, fn, options,
                                        "@resource()"))  # type: ignore[return-value]
        check_resource_options(uri, options)
        if "{" in uri:
            return self.add(self._build(ResourceTemplate, fn, {"uri_template": uri, **options},
                                        "@resource()"))  # type: ignore[return-value]
        return self.add(self._build(Resource, fn, {"uri": uri, **options}, "@resource()"))  # type: ignore

    def add_prompt(self, fn: Any, **options: Any) -> Prompt:
        """Register a function (or a :class:`Prompt` subclass) as a prompt."""
        return self.add(self._build(Prompt, fn, options, "@prompt()"))  # type: ignore[return-value]

    def tool(self, first: Any = None, **options: Any) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add_tool`; returns the function unchanged."""
        _reject_bare_decorator(first, "tool")
        Tool.check_options(options, "@tool()")
        return _decorator(lambda fn: self.add_tool(fn, **options))

    def resource(self, uri: str, **options: Any) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add_resource`; returns the function unchanged."""
        if not isinstance(uri, str):
            raise TypeError("@resource needs the resource's URI or URI template as its first argument.")
        check_resource_options(uri, options)
        return _decorator(lambda fn: self.add_resource(fn, uri, **options))

    def prompt(self, first: Any = None, **options: Any) -> Callable[[Any], Any]:
        """Decorator form of :meth:`add_prompt`; returns the function unchanged."""
        _reject_bare_decorator(first, "prompt")
        Prompt.check_options(options, "@prompt()")
        return _decorator(lambda fn: self.add_prompt(fn, **options))


def check_resource_options(uri: str, options: dict[str, Any]) -> None:
    """The options of ``@resource(uri, ...)``: a template's or a fixed resource's, by the URI."""
    if "{" not in uri and "complete" in options:
        raise TypeError(f"@resource({uri!r}): complete= is for resource templates (URIs with {{…}}); "
                        f"{uri!r} is a fixed URI.")
    (ResourceTemplate if "{" in uri else Resource).check_options(
        {**options, "uri_template" if "{" in uri else "uri": uri}, "@resource()")


def _reject_bare_decorator(first: Any, decorator: str) -> None:
    if first is not None:
        raise TypeError(f"Use @{decorator}() with parentheses; @{decorator} alone registers nothing.")


def _decorator(register: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def decorator(fn: Any) -> Any:
        register(fn)
        return fn

    return decorator
