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

    ``site`` is the site to register on; None (the default) means ``django_mcp.site``.
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
    """
    Register a function as a tool on ``site`` (``django_mcp.site`` unless given). The keyword
    ``options`` are the tool's options, as a :class:`~django_mcp.Tool` subclass sets them (each
    is described there): ``name``, ``title``, ``description``, ``icons``, ``meta``,
    ``permission_classes``, ``permission``, ``required_scopes``, ``annotations``, ``input_schema``,
    ``output_schema``, ``structured_output``, ``input_serializer``, ``input_form`` and
    ``output_serializer``; feature apps add theirs (``django_mcp.tasks``: ``task_support``,
    ``ask_before_task``; ``django_mcp.ui``: ``view``, ``view_csp``, ``visibility``). An unknown
    option is a ``TypeError`` at import.

    ``first`` is there only to catch ``@tool`` written without parentheses, which would register
    nothing: given any value, it raises ``TypeError``.
    """
    return (site if site is not None else default_site).tool(first, **options)


def resource(uri: str, *, site: McpSite | None = None, **options: Any) -> Callable[[Any], Any]:
    """
    Register a function as the resource (or resource template) at ``uri``: a URI with
    ``{placeholders}`` makes a resource template. ``site`` is the site to register on; None (the
    default) means ``django_mcp.site``. The keyword ``options`` are those of
    :class:`~django_mcp.Resource` (``name``, ``title``, ``description``, ``icons``, ``meta``,
    ``permission_classes``, ``permission``, ``required_scopes``, ``mime_type``, ``size``,
    ``annotations``) or, for a template, of :class:`~django_mcp.ResourceTemplate` (the same
    without ``size``, with ``complete``).
    """
    return (site if site is not None else default_site).resource(uri, **options)


def prompt(first: Any = None, *, site: McpSite | None = None, **options: Any) -> Callable[[Any], Any]:
    """
    Register a function as a prompt on ``site`` (``django_mcp.site`` unless given). The keyword
    ``options`` are the prompt's options, as a :class:`~django_mcp.Prompt` subclass sets them:
    ``name``, ``title``, ``description``, ``icons``, ``meta``, ``permission_classes``,
    ``permission``, ``required_scopes``, ``arguments``, ``argument_descriptions`` and ``complete``.

    ``first`` is there only to catch ``@prompt`` written without parentheses, which would register
    nothing: given any value, it raises ``TypeError``.
    """
    return (site if site is not None else default_site).prompt(first, **options)


__all__ = ["prompt", "register", "resource", "tool"]
