"""
The interface the dispatcher calls to reach tools, resources and prompts.

The Django layer's site (``django_mcp.sites.McpSite``) implements it; the protocol layer depends
only on this shape, so it stays free of Django (docs/architecture.md, "Three layers").
"""

from dataclasses import dataclass
from typing import Any, Protocol

from .context import RequestContext


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing: wire-shaped items and the cursor of the next page, if any."""

    items: list[dict[str, Any]]
    next_cursor: str | None = None


class Backend(Protocol):
    """
    What a server offers, as wire-shaped dicts (camelCase keys). Listings take the client's
    cursor and return one :class:`Page`; a cursor the backend did not mint raises
    ``InvalidParams``. Everything a request may not use is absent from listings and unknown to
    lookups, calls and reads.
    """

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object: name, version, title…"""

    def instructions(self) -> str | None:
        """Optional guidance for the client's model."""

    def capabilities(self, ctx: RequestContext) -> dict[str, Any]:
        """Server capabilities, advertising only what is really published."""

    async def list_tools(self, cursor: str | None, ctx: RequestContext) -> Page: ...

    async def tool_input_schema(self, name: str, ctx: RequestContext) -> dict[str, Any] | None:
        """The ``inputSchema`` of a tool this request may call, else None."""

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]: ...

    async def list_resources(self, cursor: str | None, ctx: RequestContext) -> Page: ...

    async def list_resource_templates(self, cursor: str | None, ctx: RequestContext) -> Page: ...

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def list_prompts(self, cursor: str | None, ctx: RequestContext) -> Page: ...

    async def get_prompt(self, name: str, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]: ...

    async def complete(self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str],
                       ctx: RequestContext) -> dict[str, Any]: ...

    async def can_subscribe(self, uri: str, ctx: RequestContext) -> bool:
        """Whether ``uri`` names a resource this request may subscribe to."""

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        """Subscribe ``ctx``'s legacy session to ``uri``; ``InvalidParams`` when it may not read it."""

    async def listen_filter(self, requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        The part of a ``subscriptions/listen`` filter this request is served (see
        ``handlers.subscriptions.honoured_listen_filter``, which a backend may start from).
        """


class StateCodec(Protocol):
    """Signs and verifies the opaque ``requestState`` of multi-round-trip requests (MCP spec 2026-07-28,
    basic/patterns/mrtr, SEP-2322)."""

    def encode(self, payload: dict[str, Any], ctx: RequestContext) -> str: ...

    def decode(self, token: str, ctx: RequestContext) -> dict[str, Any]:
        """The payload; raises ``InvalidParams`` when the token was altered, expired or is another user's."""
