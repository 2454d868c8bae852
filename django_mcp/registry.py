"""
The registry: :class:`McpSite` holds the tools, resources and prompts a server publishes, shaped
like ``admin.site``. The default :data:`site` is filled by each installed app's ``mcp.py``.

The site is also the protocol layer's :class:`~django_mcp.protocol.backend.Backend`: listings are
filtered by each primitive's permission, and capabilities are advertised only for what exists.
"""

import functools
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from .completions import Completer
from .conf import mcp_settings
from .primitives import Permission, is_permitted
from .prompts.base import Prompt
from .protocol.context import RequestContext
from .protocol.errors import InvalidParams, ResourceNotFound
from .resources.base import Resource, ResourceTemplate
from .tools.base import Tool


class AlreadyRegistered(ImproperlyConfigured):
    """A tool, resource or prompt of that name or URI is registered already."""


class NotRegistered(KeyError):
    """Nothing of that name or URI is registered."""


@functools.cache
def _package_version() -> str:
    # Cached: importlib.metadata reads the disk, and serverInfo goes out with every 2026 result.
    try:
        return version("django-mcpkit")
    except PackageNotFoundError:
        return "0.0.0"


def _reject_bare_decorator(first: Any, decorator: str) -> None:
    if callable(first):
        raise TypeError(f"Use @{decorator}() with parentheses; @{decorator} alone registers nothing.")


class McpSite:
    """A set of MCP primitives served together at one endpoint."""

    def __init__(self, name: str = "default") -> None:
        self.name = name
        self._tools: dict[str, Tool] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, ResourceTemplate] = {}
        self._prompts: dict[str, Prompt] = {}
        self._capabilities: dict[str, Any] | None = None

    # Registration -------------------------------------------------------------------------

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> Tool:
        """Register ``fn`` as a tool; see :class:`~django_mcp.tools.Tool` for the options."""
        tool = fn if isinstance(fn, Tool) else Tool(fn, **options)
        if tool.name in self._tools:
            raise AlreadyRegistered(f"A tool named {tool.name!r} is already registered.")
        self._tools[tool.name] = tool
        self._capabilities = None
        return tool

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource | ResourceTemplate:
        """Register ``fn`` as the resource at ``uri``; a URI with ``{…}`` expressions is a template."""
        if "{" in uri:
            template = ResourceTemplate(fn, uri, **options)
            if uri in self._templates:
                raise AlreadyRegistered(f"A resource template {uri!r} is already registered.")
            self._templates[uri] = template
            self._capabilities = None
            return template
        options.pop("complete", None)
        resource = Resource(fn, uri, **options)
        if uri in self._resources:
            raise AlreadyRegistered(f"A resource {uri!r} is already registered.")
        self._resources[uri] = resource
        self._capabilities = None
        return resource

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register ``fn`` as a prompt; see :class:`~django_mcp.prompts.Prompt` for the options."""
        prompt = Prompt(fn, **options)
        if prompt.name in self._prompts:
            raise AlreadyRegistered(f"A prompt named {prompt.name!r} is already registered.")
        self._prompts[prompt.name] = prompt
        self._capabilities = None
        return prompt

    def tool(self, first: Any = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of :meth:`add_tool`; returns the function unchanged."""
        _reject_bare_decorator(first, "tool")

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(fn, **options)
            return fn

        return decorator

    def resource(self, uri: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of :meth:`add_resource`."""
        if not isinstance(uri, str):
            raise TypeError("@resource needs the resource's URI or URI template as its first argument.")

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_resource(fn, uri, **options)
            return fn

        return decorator

    def prompt(self, first: Any = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of :meth:`add_prompt`."""
        _reject_bare_decorator(first, "prompt")

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_prompt(fn, **options)
            return fn

        return decorator

    def remove_tool(self, name: str) -> None:
        self._capabilities = None
        if self._tools.pop(name, None) is None:
            raise NotRegistered(name)

    def remove_resource(self, uri: str) -> None:
        self._capabilities = None
        if self._resources.pop(uri, None) is None and self._templates.pop(uri, None) is None:
            raise NotRegistered(uri)

    def remove_prompt(self, name: str) -> None:
        self._capabilities = None
        if self._prompts.pop(name, None) is None:
            raise NotRegistered(name)

    def get_tool(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def get_prompt_object(self, name: str) -> Prompt | None:
        return self._prompts.get(name)

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def resources(self) -> list[Resource]:
        return list(self._resources.values())

    @property
    def resource_templates(self) -> list[ResourceTemplate]:
        return list(self._templates.values())

    @property
    def prompts(self) -> list[Prompt]:
        return list(self._prompts.values())

    # Backend ------------------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        info = {"name": mcp_settings.SERVER_NAME, "version": mcp_settings.SERVER_VERSION or _package_version()}
        if mcp_settings.SERVER_TITLE:
            info["title"] = mcp_settings.SERVER_TITLE
        return info

    def instructions(self) -> str | None:
        return mcp_settings.INSTRUCTIONS

    def capabilities(self, ctx: RequestContext) -> dict[str, Any]:
        # Asked several times per request; depends only on what is registered.
        if self._capabilities is None:
            self._capabilities = self._compute_capabilities()
        return self._capabilities

    def _compute_capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"logging": {}}
        if self._tools:
            capabilities["tools"] = {"listChanged": True}
        if self._resources or self._templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if self._prompts:
            capabilities["prompts"] = {"listChanged": True}
        if self._prompts or self._templates:
            capabilities["completions"] = {}
        return capabilities

    async def _visible(self, items: list[Any], ctx: RequestContext) -> list[Any]:
        return [item for item in items if await is_permitted(item.permission, ctx)]

    async def list_tools(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [tool.definition() for tool in await self._visible(self.tools, ctx)]

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        tool = self._tools.get(name)
        # A tool the user may not use is reported exactly like one that does not exist.
        if tool is None or not await is_permitted(tool.permission, ctx):
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        return await tool.run(arguments, ctx)

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [resource.definition() for resource in await self._visible(self.resources, ctx)]

    async def list_resource_templates(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [template.definition() for template in await self._visible(self.resource_templates, ctx)]

    def _find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, str]] | None:
        resource = self._resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self._templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
        found = self._find_resource(uri)
        if found is None or not await is_permitted(found[0].permission, ctx):
            raise ResourceNotFound(uri)
        resource, variables = found
        return await resource.read(uri, variables, ctx)

    async def can_subscribe(self, uri: str, ctx: RequestContext) -> bool:
        found = self._find_resource(uri)
        return found is not None and await is_permitted(found[0].permission, ctx)

    async def list_prompts(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [prompt.definition() for prompt in await self._visible(self.prompts, ctx)]

    async def get_prompt(self, name: str, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        prompt = self._prompts.get(name)
        if prompt is None or not await is_permitted(prompt.permission, ctx):
            raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
        return await prompt.render(arguments, ctx)

    async def complete(self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str],
                       ctx: RequestContext) -> dict[str, Any]:
        name, value = argument.get("name", ""), argument.get("value", "")
        if ref.get("type") == "ref/prompt":
            prompt = self._prompts.get(ref.get("name", ""))
            if prompt is None or not await is_permitted(prompt.permission, ctx):
                raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
            values = await prompt.complete(name, value, context, ctx)
        elif ref.get("type") == "ref/resource":
            uri = ref.get("uri", "")
            template = self._templates.get(uri)
            if template is None:
                if uri in self._resources:
                    return {"values": []}
                raise InvalidParams(f"Unknown resource template: {uri}")
            if not await is_permitted(template.permission, ctx):
                raise InvalidParams(f"Unknown resource template: {uri}")
            values = await template.complete(name, value, context, ctx)
        else:
            raise InvalidParams(f"Unknown completion reference type: {ref.get('type')}")
        return {"values": values, "total": len(values), "hasMore": len(values) > 100}


default_site = McpSite()
site = default_site


def tool(first: Any = None, *, site: McpSite | None = None, **options: Any) -> Callable[..., Any]:
    """Register a function as a tool on ``site`` (the default site unless given)."""
    return (site or default_site).tool(first, **options)


def resource(uri: str, *, site: McpSite | None = None, **options: Any) -> Callable[..., Any]:
    """Register a function as the resource (or resource template) at ``uri``."""
    return (site or default_site).resource(uri, **options)


def prompt(first: Any = None, *, site: McpSite | None = None, **options: Any) -> Callable[..., Any]:
    """Register a function as a prompt."""
    return (site or default_site).prompt(first, **options)


__all__ = ["AlreadyRegistered", "Completer", "McpSite", "NotRegistered", "Permission", "prompt", "resource",
           "site", "tool"]
