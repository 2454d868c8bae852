"""
Protocol extensions: methods, capabilities and result shapes that something outside the core adds
to the protocol — an extension a client negotiates by identifier (MCP spec 2026-07-28,
basic/lifecycle and server/discover, ``capabilities.extensions``; SEP-2133), or an experimental
utility of an older revision (the 2025-11-25 tasks, MCP spec 2025-11-25, basic/utilities/tasks).

The core serves no extension itself; a feature app subclasses :class:`ProtocolExtension` and
installs it with :func:`register_extension` (in ``AppConfig.ready()``). The dispatcher then:

- routes the extension's methods (:meth:`ProtocolExtension.methods`, per request: an extension
  may serve a method in one revision and not another) to its handlers, which validate their own
  params — the core schemas do not know them;
- adds what the extension offers to the server's capabilities, in ``initialize`` and
  ``server/discover`` (:meth:`ProtocolExtension.contribute_capabilities`);
- passes an :class:`ExtensionResult` through unchanged (a ``tools/call`` answered with a task
  handle, say), where any other result is checked against the revision's schema;
- the HTTP transport checks the ``Mcp-Name`` header of an extension method against the param
  the extension names (:meth:`ProtocolExtension.name_param`, MCP spec 2026-07-28,
  basic/transports/streamable-http);
- and ``subscriptions/listen`` serves the filter keys an extension adds (MCP spec 2026-07-28,
  basic/patterns/subscriptions): the extension says what it honours, which groups the stream
  joins for it, and which events it wants (:meth:`ProtocolExtension.listen_filter`).

No Django here: this module is part of the protocol layer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from .context import RequestContext

#: A method's handler: ``handler(dispatcher, params, ctx)`` with the request's raw ``params``
#: (a dict or None); returns the result's dict, or raises ``McpError``.
ExtensionHandler = Callable[[Any, "dict[str, Any] | None", "RequestContext"], Awaitable[dict[str, Any]]]


class ExtensionResult(dict):  # type: ignore[type-arg]
    """
    A result whose shape an extension defines, such as a ``CreateTaskResult``: the dispatcher
    does not check it against the core schema of the method that returned it. For 2026-07-28 it
    still gets ``resultType`` (``"complete"`` unless set) and the server's info in ``_meta``.
    """


class ProtocolExtension:
    """The base class of protocol extensions (see the module docstring). Override what applies."""

    #: The identifier clients declare under ``clientCapabilities.extensions`` (2026-07-28), e.g.
    #: ``"io.modelcontextprotocol/tasks"``; empty for an extension without one.
    identifier: str = ""

    def methods(self, ctx: RequestContext) -> Mapping[str, ExtensionHandler]:
        """The methods this extension serves for this request's revision: name → handler."""
        return {}

    def contribute_capabilities(self, capabilities: dict[str, Any], ctx: RequestContext) -> None:
        """
        Add what the extension offers to ``capabilities`` (a copy, for this request): for
        2026-07-28, the default puts ``{}`` under ``extensions[identifier]``.
        """
        if ctx.is_modern and self.identifier:
            capabilities.setdefault("extensions", {})[self.identifier] = {}

    def name_param(self, method: str) -> str | None:
        """The param the ``Mcp-Name`` header must mirror for ``method`` of this extension, if any."""
        return None

    async def listen_filter(self, requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        The part of a ``subscriptions/listen`` filter (``params.notifications`` as the client sent
        it) this extension serves, to acknowledge: ``{}`` when it serves none. May refuse the
        request (an ``McpError``), e.g. for a key the client may not use without the extension.
        """
        return {}

    def listen_groups(self, honoured: dict[str, Any]) -> list[str]:
        """The channel-layer groups a listen stream joins for what this extension honoured."""
        return []

    def listen_wants(self, event: dict[str, Any], honoured: dict[str, Any]) -> bool:
        """Whether a listen stream with filter ``honoured`` forwards ``event`` (a kind of this extension's)."""
        return False

    def declared_by(self, ctx: RequestContext) -> bool:
        """Whether the request's client declared this extension (2026-07-28: per request)."""
        extensions = (ctx.client_capabilities or {}).get("extensions")
        return bool(self.identifier) and isinstance(extensions, dict) and self.identifier in extensions


_installed: list[ProtocolExtension] = []


def register_extension(extension: ProtocolExtension) -> ProtocolExtension:
    """Install ``extension`` for every site (once; installing the same object again does nothing)."""
    if not isinstance(extension, ProtocolExtension):
        raise TypeError(f"{extension!r} is not a django_mcp.protocol.extensions.ProtocolExtension")
    if extension not in _installed:
        _installed.append(extension)
    return extension


def unregister_extension(extension: ProtocolExtension) -> None:
    """Remove an installed extension (tests, and apps that switch a feature off)."""
    if extension in _installed:
        _installed.remove(extension)


def installed_extensions() -> tuple[ProtocolExtension, ...]:
    """The extensions installed, in the order they were."""
    return tuple(_installed)


def extension_method(method: str, ctx: RequestContext) -> ExtensionHandler | None:
    """The handler an installed extension has for ``method`` in this request's revision, if any."""
    for extension in _installed:
        handler = extension.methods(ctx).get(method)
        if handler is not None:
            return handler
    return None


def extension_name_param(method: str) -> str | None:
    """The param ``Mcp-Name`` mirrors for an extension's ``method``, if an installed extension says."""
    for extension in _installed:
        name = extension.name_param(method)
        if name is not None:
            return name
    return None


def with_extension_capabilities(capabilities: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``capabilities`` with what every installed extension offers this request (the same dict without any)."""
    if not _installed:
        return capabilities
    combined = {key: dict(value) if isinstance(value, dict) else value for key, value in capabilities.items()}
    for extension in _installed:
        extension.contribute_capabilities(combined, ctx)
    return combined


async def extension_listen_filter(requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """What the installed extensions honour of a ``subscriptions/listen`` filter, merged."""
    honoured: dict[str, Any] = {}
    for extension in _installed:
        honoured.update(await extension.listen_filter(requested, ctx))
    return honoured


def extension_listen_groups(honoured: dict[str, Any]) -> list[str]:
    """The groups a listen stream joins for the extensions' part of its filter."""
    return [group for extension in _installed for group in extension.listen_groups(honoured)]


def extension_listen_wants(event: dict[str, Any], honoured: dict[str, Any]) -> bool:
    """Whether an installed extension wants ``event`` on a listen stream with filter ``honoured``."""
    return any(extension.listen_wants(event, honoured) for extension in _installed)
