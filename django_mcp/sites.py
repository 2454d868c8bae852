"""
:class:`McpSite`, shaped like ``admin.site``: the set of tools, resources, resource templates,
prompts and models one endpoint serves.

``django_mcp.site`` is the site the transports serve and the decorators fill. It is the instance
named by ``DJANGO_MCP["SITE"]`` (an import string to an :class:`McpSite` instance, or to a
subclass, which is instantiated once), so a custom site set in settings is the one that gets the
registrations. Every installed app's ``mcp`` module is imported at start-up (:func:`autodiscover`),
as ``admin.py`` is.
"""

from __future__ import annotations

import weakref
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db.models.base import ModelBase
from django.utils.functional import LazyObject, empty
from django.utils.module_loading import autodiscover_modules

from .backend import SiteBackend
from .conf import mcp_settings
from .model_options import ModelOptions
from .primitives import Primitive
from .prompts.base import Prompt
from .resources.base import Resource, ResourceTemplate
from .short_forms import ShortForms
from .site_registry import SiteRegistry, is_primitive
from .sources import KINDS, PrimitiveSource
from .tools.base import Tool


LABELS = {"tool": "tool", "resource": "resource", "resource_template": "resource template", "prompt": "prompt"}


class AlreadyRegistered(ImproperlyConfigured):
    """A model, or a primitive of that name or URI, is registered already."""


class NotRegistered(KeyError):
    """Nothing of that kind is registered."""


class McpSite(ShortForms, SiteBackend):
    """
    A set of MCP primitives served together at one endpoint.

    ``name`` identifies the site: system checks and contracts report under it, and work that
    outlives its request (a task, a query tool row) names the site and finds it again by it, so
    two sites of a process need different names. It defaults to ``"default"``, which is the name
    of the site ``DJANGO_MCP["SITE"]`` makes when it names a class.
    """

    #: The options class ``register(Model)`` uses when given none; None: ``DJANGO_MCP["MODEL_OPTIONS_CLASS"]``
    #: (``django_mcp.model_resources.ModelResource``).
    default_model_options_class: type[ModelOptions] | None = None

    def __init__(self, name: str = "default") -> None:
        self.name = name
        self._registry = SiteRegistry()
        _sites_by_name[name] = self

    @property
    def _registry(self) -> SiteRegistry:
        return self.__registry

    @_registry.setter
    def _registry(self, value: SiteRegistry) -> None:
        # Also reached when autodiscovery restores the registry after a failed import.
        self.__registry = value
        self.forget_capabilities()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # Admin-shaped registration ----------------------------------------------------------------

    def register(self, model_or_iterable: Any, options_class: type[ModelOptions] | None = None,
                 **options: Any) -> None:
        """
        Register models with an options class (``site.register(Book, BookResource)``; extra
        ``options`` build a subclass, as ``admin.site.register`` does), or primitive classes and
        instances (``site.register(SearchBooks)``).
        """
        items = [model_or_iterable] if isinstance(model_or_iterable, ModelBase) or is_primitive(
            model_or_iterable) else list(model_or_iterable)
        for item in items:
            if is_primitive(item):
                if options_class is not None or options:
                    raise TypeError("register() takes options only for models; set a primitive's options as "
                                    "class attributes.")
                self.add(item)
            elif isinstance(item, ModelBase):
                self._register_model(item, options_class, options)
            else:
                raise TypeError(f"Cannot register {item!r}: register() takes models, and tool, resource or prompt "
                                "classes.")

    def _register_model(self, model: Any, options_class: type[ModelOptions] | None, options: dict[str, Any]) -> None:
        if model._meta.abstract:
            raise ImproperlyConfigured(f"The model {model.__name__} is abstract, so it cannot be registered.")
        if model in self._registry.models:
            raise AlreadyRegistered(f"The model {model.__name__} is already registered with "
                                    f"{type(self._registry.models[model]).__qualname__}.")
        if options_class is None:
            # Resolved only once a model is registered: ModelResource imports DRF.
            options_class = self.default_model_options_class or mcp_settings.MODEL_OPTIONS_CLASS
        if not (isinstance(options_class, type) and issubclass(options_class, ModelOptions)):
            raise TypeError(f"{options_class!r} is not a ModelOptions subclass.")
        if options:
            options_class.check_options(options)
            options_class = type(f"{model.__name__}{options_class.__name__}", (options_class,),
                                 {**options, "__module__": __name__})
        instance = options_class(model, self)
        primitives, sources = list(instance.get_primitives()), list(instance.get_sources())
        added: list[Primitive] = []
        try:
            for primitive in primitives:
                added.append(self.add(primitive))
        except Exception:
            for primitive in added:
                self._registry.primitives[primitive.kind].remove(primitive.key)
            raise
        for source in sources:
            self.add_source(source)
        self._registry.models[model] = instance
        self._registry.contributions[model] = (added, sources)
        instance.registered()

    def unregister(self, model_or_iterable: Any) -> None:
        """Withdraw models (and what they contributed) or primitives; ``NotRegistered`` otherwise."""
        items = [model_or_iterable] if isinstance(model_or_iterable, ModelBase) or is_primitive(
            model_or_iterable) else list(model_or_iterable)
        for item in items:
            if isinstance(item, ModelBase):
                if item not in self._registry.models:
                    raise NotRegistered(f"The model {item.__name__} is not registered.")
                options = self._registry.models.pop(item)
                primitives, sources = self._registry.contributions.pop(item)
                for primitive in primitives:
                    self._registry.primitives[primitive.kind].remove(primitive.key)
                for source in sources:
                    self._registry.sources[source.kind].remove(source)
                options.unregistered()
            else:
                primitive = self._registered_instance(item)
                if primitive is None:
                    raise NotRegistered(f"{item!r} is not registered.")
                self._registry.primitives[primitive.kind].remove(primitive.key)
        self.forget_capabilities()

    def is_registered(self, model_or_primitive: Any) -> bool:
        """Whether a model, a primitive class or a primitive instance is registered here."""
        if isinstance(model_or_primitive, ModelBase):
            return model_or_primitive in self._registry.models
        return self._registered_instance(model_or_primitive) is not None

    def get_model_options(self, model: Any) -> ModelOptions:
        """The options instance a model is registered with (``admin.site.get_model_admin``)."""
        try:
            return self._registry.models[model]
        except KeyError:
            raise NotRegistered(f"The model {model.__name__} is not registered.") from None

    def model_options(self) -> list[ModelOptions]:
        """The options instances of every registered model, in registration order."""
        return list(self._registry.models.values())

    def model_options_or_none(self, model: Any) -> ModelOptions | None:
        """The options instance of ``model``, or None when it is not registered here."""
        return self._registry.models.get(model)

    def model_options_by_label(self, label: str) -> ModelOptions | None:
        """The options instance of the registered model ``app_label.ModelName``, or None."""
        try:
            model = apps.get_model(label)
        except (LookupError, ValueError):
            return None
        return self._registry.models.get(model)

    def _registered_instance(self, item: Any) -> Primitive | None:
        if isinstance(item, Primitive):
            registered = self._registry.primitives[item.kind].by_key.get(item.key)
            return registered if registered is item else None
        if isinstance(item, type) and issubclass(item, Primitive):
            for registered in self._registry.primitives[item.kind]:
                if type(registered) is item:
                    return registered
        return None

    # Primitives -----------------------------------------------------------------------------------

    def add(self, primitive: Primitive | type[Primitive]) -> Primitive:
        """Register a primitive class (instantiated once) or instance; duplicates name both places."""
        if isinstance(primitive, type):
            primitive = primitive()
        registered = self._registry.primitives[primitive.kind]
        existing = registered.by_key.get(primitive.key)
        if existing is not None:
            raise AlreadyRegistered(f"A {LABELS[primitive.kind]} {primitive.key!r} is already registered by "
                                    f"{existing.origin()}; {primitive.origin()} registers it again.")
        registered.add(primitive)
        self.forget_capabilities()
        return primitive

    def add_all(self, primitives: Any) -> list[Primitive]:
        """
        Register every primitive of ``primitives`` (made as they are iterated), or none: the
        first failure undoes the ones before it.
        """
        added: list[Primitive] = []
        try:
            for primitive in primitives:
                added.append(self.add(primitive))
        except Exception:
            for primitive in added:
                self._registry.primitives[primitive.kind].remove(primitive.key)
            self.forget_capabilities()
            raise
        return added

    def add_source(self, source: PrimitiveSource) -> None:
        """
        Serve primitives that appear at run time (database rows…) after the registered ones, in
        the order of their :attr:`~django_mcp.sources.PrimitiveSource.order`.
        """
        if source.kind not in KINDS:
            raise ImproperlyConfigured(f"{source!r} has an unknown kind {source.kind!r}")
        sources = self._registry.sources[source.kind]
        sources.append(source)
        sources.sort(key=lambda each: each.order)  # stable: the same order keeps the order of adding
        self.forget_capabilities()

    def add_source_once(self, source: PrimitiveSource) -> PrimitiveSource:
        """
        :meth:`add_source`, unless the site serves a source of the same class already: for an
        ``AppConfig.ready()``, which Django runs again whenever a test changes ``INSTALLED_APPS``
        (``override_settings``), while the site it adds to lives on. The source served: ``source``,
        or the one of its class that was there.
        """
        for each in self._registry.sources[source.kind]:
            if type(each) is type(source):
                return each
        self.add_source(source)
        return source

    def sources(self, kind: str) -> list[PrimitiveSource]:
        # Asked by every lookup; the chain changes only with registrations, which forget it.
        chain = self._sources_cache.get(kind)
        if chain is None:
            chain = self._sources_cache[kind] = [self._registry.primitives[kind], *self._registry.sources[kind]]
        return chain

    def forget_capabilities(self) -> None:
        super().forget_capabilities()
        self._sources_cache: dict[str, list[PrimitiveSource]] = {}

    def remove_tool(self, name: str) -> None:
        self._remove("tool", name)

    def remove_resource(self, uri: str) -> None:
        if self._registry.primitives["resource"].remove(uri) is None:
            self._remove("resource_template", uri)
        self.forget_capabilities()

    def remove_prompt(self, name: str) -> None:
        self._remove("prompt", name)

    def _remove(self, kind: str, key: str) -> None:
        self.forget_capabilities()
        if self._registry.primitives[kind].remove(key) is None:
            raise NotRegistered(key)

    def get_registered(self, kind: str, key: str) -> Primitive | None:
        """A primitive registered in code, by kind and name (or URI); no permission check."""
        return self._registry.primitives[kind].by_key.get(key)

    def get_tool(self, name: str) -> Tool | None:
        """The tool registered in code under ``name``; no permission check."""
        return self.get_registered("tool", name)  # type: ignore[return-value]

    @property
    def tools(self) -> list[Tool]:
        return list(self._registry.primitives["tool"])  # type: ignore[arg-type]

    @property
    def resources(self) -> list[Resource]:
        return list(self._registry.primitives["resource"])  # type: ignore[arg-type]

    @property
    def resource_templates(self) -> list[ResourceTemplate]:
        return list(self._registry.primitives["resource_template"])  # type: ignore[arg-type]

    @property
    def prompts(self) -> list[Prompt]:
        return list(self._registry.primitives["prompt"])  # type: ignore[arg-type]


# The default site ---------------------------------------------------------------------------------

_instances: dict[type, McpSite] = {}


# Every site made in this process, by name: work that outlives its request (a task, on another
# process) names its site and finds it here.
_sites_by_name: weakref.WeakValueDictionary[str, McpSite] = weakref.WeakValueDictionary()


def site_named(name: str) -> McpSite | None:
    """The site called ``name``: the default site when that is its name, else one made in this process, or None."""
    default = get_default_site()
    if default.name == name:
        return default
    return _sites_by_name.get(name)


def all_sites() -> list[McpSite]:
    """
    The default site and every other site made in this process (for system checks and contracts),
    one per name: a site made later under the default's name (``McpSite()`` in a test, say) does
    not stand in for the default, whose name is the one clients and tasks resolve.
    """
    default = get_default_site()
    others = [found for found in list(_sites_by_name.values()) if found is not default and found.name != default.name]
    return [default, *others]


def get_default_site() -> McpSite:
    """The site ``DJANGO_MCP["SITE"]`` names: an instance, or a class instantiated once."""
    # Asked on every request: skip the settings once resolved, and LazyObject's Python-level
    # __getattribute__ too.
    resolved = object.__getattribute__(site, "_wrapped")
    if resolved is not empty:
        return resolved
    value = mcp_settings.SITE
    return resolve_default_site(value)


def resolve_default_site(value: Any = None) -> McpSite:
    """Resolve ``DJANGO_MCP["SITE"]`` itself, without the lazy object."""
    value = mcp_settings.SITE if value is None else value
    if isinstance(value, type) and issubclass(value, McpSite):
        if value not in _instances:
            _instances[value] = value()
        return _instances[value]
    if isinstance(value, McpSite):
        return value
    raise ImproperlyConfigured(f'DJANGO_MCP["SITE"] must name an McpSite instance or subclass, not {value!r}')


class DefaultMcpSite(LazyObject):
    """``django_mcp.site``: resolves ``DJANGO_MCP["SITE"]`` on first use, like ``admin.site``."""

    def _setup(self) -> None:
        self._wrapped = resolve_default_site()

    def __repr__(self) -> str:
        return repr(self._wrapped) if self._wrapped is not empty else "<DefaultMcpSite (not resolved yet)>"


site = DefaultMcpSite()


def _forget_default_site(*, setting: str, **kwargs: Any) -> None:
    if setting == "DJANGO_MCP":
        site._wrapped = empty


setting_changed.connect(_forget_default_site)


def autodiscover(register_to: Any = None) -> None:
    """
    Import every installed app's ``mcp`` module, restoring the site if one fails (as the admin does).

    ``register_to`` is the site whose registry is restored when an import fails; None (the
    default) means ``django_mcp.site``.
    """
    autodiscover_modules("mcp", register_to=register_to if register_to is not None else site)


__all__ = ["AlreadyRegistered", "DefaultMcpSite", "McpSite", "NotRegistered", "autodiscover", "get_default_site",
           "site"]
