"""
The interface the dispatcher calls to reach tools, resources and prompts.

The Django layer's registry (``django_mcp.registry.McpSite``) implements it; the protocol layer
depends only on this shape, so it stays free of Django (ARCHITECTURE.md, three layers).
"""

from typing import Any, Protocol

from .context import RequestContext


class Backend(Protocol):
    """What a server offers, as wire-shaped dicts (camelCase keys)."""

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object: name, version, title…"""

    def instructions(self) -> str | None:
        """Optional guidance for the client's model."""

    def capabilities(self, ctx: RequestContext) -> dict[str, Any]:
        """Server capabilities, advertising only what is really published."""

    async def list_tools(self, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]: ...

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def list_resource_templates(self, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def list_prompts(self, ctx: RequestContext) -> list[dict[str, Any]]: ...

    async def get_prompt(self, name: str, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]: ...

    async def complete(self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str],
                       ctx: RequestContext) -> dict[str, Any]: ...

    async def can_subscribe(self, uri: str, ctx: RequestContext) -> bool:
        """Whether ``uri`` names a resource a client may subscribe to."""


class StateCodec(Protocol):
    """Signs and verifies the opaque ``requestState`` of multi-round-trip requests (digest §4.12)."""

    def encode(self, payload: dict[str, Any], ctx: RequestContext) -> str: ...

    def decode(self, token: str, ctx: RequestContext) -> dict[str, Any]:
        """The payload; raises ``InvalidParams`` when the token was altered, expired or is another user's."""
