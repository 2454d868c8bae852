"""
Models as resources: the feature app ``django_mcp.model_resources``. Register a model as you
would with the admin, and each row becomes a resource (docs/models.md)::

    from django_mcp import register
    from django_mcp.model_resources import ModelResource

    @register(Book)
    class BookResource(ModelResource):
        fields = ["title", "author", "published"]

``site.register(Model)`` without an options class uses :class:`ModelResource` (the core's
``DJANGO_MCP["MODEL_OPTIONS_CLASS"]`` names it).
"""

from typing import Any


__all__ = ["ModelQueryTool", "ModelResource"]


def __getattr__(name: str) -> Any:
    # ModelResource imports Django REST framework and the models' machinery: loaded when first
    # named, not when Django imports this app while it populates the registry.
    if name == "ModelResource":
        from .options import ModelResource

        return ModelResource
    if name == "ModelQueryTool":
        from .query.tool import ModelQueryTool

        return ModelQueryTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
