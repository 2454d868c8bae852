"""
The decorators that register on a site — ``django_mcp.site`` unless ``site=`` names another, as
``django.contrib.admin.register`` does::

    @register(Book)                  # an options class for models
    class BookResource(ModelResource): ...

    @register()                      # a tool, resource or prompt class
    class LendBook(Tool): ...

    @tool()                          # a function: the short form
    def search_books(query: str) -> list[BookOut]: ...
"""

from collections.abc import Callable
from typing import Any

from .model_options import ModelOptions
from .primitives import Primitive
from .sites import McpSite, site as default_site


def register(*models: Any, site: McpSite | None = None) -> Callable[[type], type]:
    """
    Class decorator: ``@register(Book)`` registers an options class for models,
    ``@register()`` registers a tool, resource or prompt class.
    """
    def wrapper(cls: type) -> type:
        target = site if site is not None else default_site
        if models:
            if not issubclass(cls, ModelOptions):
                raise ValueError("Wrapped class must subclass ModelOptions (for example ModelResource).")
            target.register(models, options_class=cls)
        else:
            if not issubclass(cls, Primitive):
                raise ValueError("@register() without models wraps a Tool, Resource, ResourceTemplate or Prompt "
                                 "class.")
            target.register(cls)
        return cls

    return wrapper


def tool(first: Any = None, *, site: McpSite | None = None, **options: Any) -> Callable[[Any], Any]:
    """Register a function as a tool on ``site`` (``django_mcp.site`` unless given)."""
    return (site if site is not None else default_site).tool(first, **options)


def resource(uri: str, *, site: McpSite | None = None, **options: Any) -> Callable[[Any], Any]:
    """Register a function as the resource (or resource template) at ``uri``."""
    return (site if site is not None else default_site).resource(uri, **options)


def prompt(first: Any = None, *, site: McpSite | None = None, **options: Any) -> Callable[[Any], Any]:
    """Register a function as a prompt."""
    return (site if site is not None else default_site).prompt(first, **options)


__all__ = ["prompt", "register", "resource", "tool"]
