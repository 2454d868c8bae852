"""
The slot a Django model plugs into: ``site.register(Book, BookResource)``, as a ``ModelAdmin``
plugs into ``admin.site``. An options class publishes a model through primitives (a resource
template per row, tools that search it…) and sources (the rows as a paged resource listing).
``ModelResource`` is the options class most projects use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar


if TYPE_CHECKING:
    from .primitives import Primitive
    from .sources import PrimitiveSource


class ModelOptions:
    """
    Base of the classes registered for a model. The site makes one instance per registered
    model (``options_class(model, site)``) and publishes what :meth:`get_primitives` and
    :meth:`get_sources` return; unregistering the model withdraws them again.

    ``model`` is the registered model class (its ``_meta`` is kept as ``opts``) and ``site`` the
    ``McpSite`` it is registered on; both are kept as attributes of the same names.
    """

    #: Option names ``site.register(Model, **options)`` accepts (each is a class attribute).
    options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, model: Any, site: Any) -> None:
        self.model = model
        self.opts = model._meta
        self.site = site

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """Refuse options this class does not have, naming them."""
        unknown = sorted(set(options) - cls.options)
        if unknown:
            known = ", ".join(sorted(cls.options)) or "none"
            raise TypeError(f"{cls.__name__} got unknown option{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(map(repr, unknown))}; known options: {known}")

    def get_primitives(self) -> list[Primitive]:
        """Tools, resources, templates and prompts this model contributes."""
        return []

    def get_sources(self) -> list[PrimitiveSource]:
        """Run-time sources (for example the rows of the model as resources)."""
        return []

    def registered(self) -> None:
        """Called once the site publishes the model: connect signal receivers here."""

    def unregistered(self) -> None:
        """Called once the site has withdrawn the model: undo :meth:`registered`."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self.opts.label}>"
