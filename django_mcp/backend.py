"""
How a site serves the protocol layer (:class:`~django_mcp.protocol.backend.Backend`): listings
one page at a time through the site's sources, single lookups, calls, reads and completions, all
behind the same permission question, so what a request may not use is neither listed nor
callable, and is reported exactly like something that does not exist.
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from . import hooks
from .calls import run_call
from .completions import completion_result
from .conf import mcp_settings
from .context import Context
from .cursors import decode_cursor, encode_cursor
from .icons import valid_icons
from .hooks import CompletionRequest, Hook, HookChains, ListenFilter, Listing, PromptGet, ResourceRead, Subscription
from .protocol.backend import Page
from .protocol.context import RequestContext
from .protocol.errors import InvalidParams, ResourceNotFound, echo, echo_text
from .protocol.handlers.subscriptions import honoured_listen_filter
from .signals import tool_called


if TYPE_CHECKING:
    from .primitives import Primitive
    from .sources import PrimitiveSource

def handle(ctx: RequestContext) -> Context:
    """The request's :class:`Context` for permission checks and definitions, made once per request."""
    if ctx.handle is None:
        ctx.handle = Context(ctx)
    return ctx.handle


@functools.cache
def package_version() -> str:
    # Cached: importlib.metadata reads the disk, and serverInfo goes out with every 2026 result.
    try:
        return version("django-mcpkit")
    except PackageNotFoundError:
        return "0.0.0"


class SiteBackend:
    """The :class:`~django_mcp.sites.McpSite` half that answers the dispatcher."""

    #: Items per page of the ``*/list`` methods; None means ``DJANGO_MCP["PAGE_SIZE"]``.
    page_size: int | None = None
    _capabilities: dict[str, Any] | None = None
    _answer_only_capabilities: dict[str, Any] | None = None
    #: Hooks of this site only (:meth:`add_hook`), asked after those installed for every site.
    _own_hooks: tuple[Hook, ...] = ()
    _chains: HookChains | None = None
    _chains_generation = -1

    def sources(self, kind: str) -> list[PrimitiveSource]:
        raise NotImplementedError(".sources() must be overridden.")

    # Server identity --------------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        """
        The server's ``Implementation`` (MCP spec 2025-11-25, schema): name and version, and the
        title, description, icons and website the settings give. Older revisions name fewer
        members (2025-06-18 adds ``title``, 2025-11-25 the rest) but their schemas allow others,
        which their clients ignore, so every revision gets the same object, as with results.
        """
        info = {"name": mcp_settings.SERVER_NAME, "version": mcp_settings.SERVER_VERSION or package_version()}
        if mcp_settings.SERVER_TITLE:
            info["title"] = mcp_settings.SERVER_TITLE
        if mcp_settings.SERVER_DESCRIPTION:
            info["description"] = mcp_settings.SERVER_DESCRIPTION
        icons = valid_icons(mcp_settings.SERVER_ICONS)  # an invalid one: manage.py check says why (E009)
        if icons:
            info["icons"] = icons
        if mcp_settings.SERVER_WEBSITE_URL:
            info["websiteUrl"] = mcp_settings.SERVER_WEBSITE_URL
        return info

    def instructions(self) -> str | None:
        return mcp_settings.INSTRUCTIONS

    def capabilities(self, ctx: RequestContext) -> dict[str, Any]:
        """
        What the server offers: a kind is announced when any of its sources may publish, so
        primitives that appear at run time (database rows) are covered by ``listChanged``.
        """
        # Asked several times per request; depends only on the sources, and is reset with them.
        if self._capabilities is None:
            self._capabilities = self.compute_capabilities()
        if not ctx.pushes:
            if self._answer_only_capabilities is None:
                self._answer_only_capabilities = answers_only(self._capabilities)
            return self._answer_only_capabilities
        return self._capabilities

    def compute_capabilities(self) -> dict[str, Any]:
        def publishes(kind: str) -> bool:
            return any(source.may_publish() for source in self.sources(kind))

        capabilities: dict[str, Any] = {"logging": {}}
        if publishes("tool"):
            capabilities["tools"] = {"listChanged": True}
        templates = publishes("resource_template")
        if publishes("resource") or templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        prompts = publishes("prompt")
        if prompts:
            capabilities["prompts"] = {"listChanged": True}
        if prompts or templates:
            capabilities["completions"] = {}
        return capabilities

    def forget_capabilities(self) -> None:
        self._capabilities = self._answer_only_capabilities = None

    # Hooks (django_mcp.hooks) --------------------------------------------------------------------

    def add_hook(self, hook: Hook) -> Hook:
        """Install ``hook`` for this site only, after the hooks installed for every site."""
        if not isinstance(hook, Hook):
            raise TypeError(f"{hook!r} is not a django_mcp.hooks.Hook")
        self._own_hooks = (*self._own_hooks, hook)
        self._chains = None
        return hook

    def hook_chains(self) -> HookChains:
        """The hooks this site asks, per question and kind; made again when hooks are installed."""
        chains = self._chains
        if chains is None or self._chains_generation != hooks.generation or (chains.dormant and chains.stale()):
            self._chains_generation = hooks.generation
            chains = self._chains = HookChains((*hooks.installed_hooks(), *self._own_hooks))
        return chains

    # The one permission question ---------------------------------------------------------------

    async def permits(self, primitive: Primitive, context: Context) -> bool:
        """
        Whether the request may see and use ``primitive``: every hook's :meth:`~Hook.allows`, then
        the primitive's permission classes. Asked once per request and primitive.
        """
        decisions = context.request.decisions
        slot = (primitive.kind, primitive.key)
        decision = decisions.get(slot)
        if decision is None:
            decision = True
            for hook in self.hook_chains().allows(primitive.kind):
                if not await hook.allows(self, primitive, context):
                    decision = False
                    break
            if decision:
                decision = await primitive.has_permission(context)
            decisions[slot] = decision
        return decision

    async def definition_of(self, primitive: Primitive, context: Context) -> dict[str, Any]:
        """A listing's entry: the primitive's definition, as the hooks change it."""
        definition = await primitive.get_definition(context)
        for hook in self.hook_chains().definitions(primitive.kind):
            definition = await hook.definition(self, primitive, definition, context)
        return definition

    async def find(self, kind: str, key: str, ctx: RequestContext) -> Primitive | None:
        """The primitive of ``kind`` named ``key`` that this request may use, else None."""
        slot = (kind, key)
        if slot in ctx.found:
            return ctx.found[slot]
        context = handle(ctx)
        found = None
        for source in self.sources(kind):
            primitive = await source.lookup(key, context)
            if primitive is not None:
                found = primitive if await self.permits(primitive, context) else None
                break
        ctx.found[slot] = found
        return found

    # Listings ------------------------------------------------------------------------------------

    async def page(self, kind: str, cursor: str | None, ctx: RequestContext) -> Page:
        """
        One page of the definitions of ``kind`` this request may see. Candidates are asked for
        only as many as the page still needs, so the work per page is bounded by the page size
        plus the hidden primitives skipped on the way.
        """
        sources = self.sources(kind)
        size = self.page_size or mcp_settings.PAGE_SIZE
        index, position = self.cursor_position(cursor, kind, len(sources))
        context = handle(ctx)
        items: list[dict[str, Any]] = []
        while index < len(sources):
            asked = size - len(items)
            batch, more = await sources[index].candidates(context, position, asked)
            for offset, (primitive, after) in enumerate(batch):
                position = after
                if await self.permits(primitive, context):
                    items.append(await self.definition_of(primitive, context))
                if len(items) == size:
                    rest = more or offset + 1 < len(batch)
                    if rest or any(s.may_publish() for s in sources[index + 1:]):
                        return Page(items, encode_cursor([kind, index if rest else index + 1,
                                                          position if rest else None]))
                    return Page(items)
            if more and batch:
                if len(batch) < asked and items:
                    # A source with a smaller page of its own (a model resource's page_size) ends the page.
                    return Page(items, encode_cursor([kind, index, position]))
                continue
            index, position = index + 1, None
        return Page(items)

    @staticmethod
    def cursor_position(cursor: str | None, kind: str, count: int) -> tuple[int, Any]:
        if not cursor:
            return 0, None
        payload = decode_cursor(cursor)
        # A cursor of another listing is as wrong as a forged one.
        if (not isinstance(payload, list) or len(payload) != 3 or payload[0] != kind or not isinstance(payload[1], int)
                or not 0 <= payload[1] <= count):
            raise InvalidParams("Invalid cursor", {"cursor": echo(cursor)})
        return payload[1], payload[2]

    def lists_through_hooks(self, kind: str) -> bool:
        """Whether a hook around listings (tool search, say) decides what ``*/list`` of ``kind`` gives."""
        return bool(self.hook_chains().around("list", kind))

    async def listing(self, kind: str, cursor: str | None, ctx: RequestContext) -> Page:
        """One page of ``kind``, through the hooks around listings (:meth:`~django_mcp.hooks.Hook.list`)."""
        chains = self.hook_chains()
        if not chains.around("list", kind):
            return await self.page(kind, cursor, ctx)
        return await chains.run(Listing(self, kind, cursor, ctx))  # type: ignore[no-any-return]

    async def list_tools(self, cursor: str | None, ctx: RequestContext) -> Page:
        return await self.listing("tool", cursor, ctx)

    async def list_resources(self, cursor: str | None, ctx: RequestContext) -> Page:
        return await self.listing("resource", cursor, ctx)

    async def list_resource_templates(self, cursor: str | None, ctx: RequestContext) -> Page:
        return await self.listing("resource_template", cursor, ctx)

    async def list_prompts(self, cursor: str | None, ctx: RequestContext) -> Page:
        return await self.listing("prompt", cursor, ctx)

    # Single primitives ----------------------------------------------------------------------------

    async def tool_input_schema(self, name: str, ctx: RequestContext) -> dict[str, Any] | None:
        """The ``inputSchema`` of a tool this request may call, else None (for mirrored headers)."""
        tool = await self.find("tool", name, ctx)
        return None if tool is None else tool.get_input_schema(handle(ctx))  # type: ignore[attr-defined]

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        tool = await self.find("tool", name, ctx)
        # A tool the user may not use is reported exactly like one that does not exist.
        if tool is None:
            raise InvalidParams(f"Unknown tool: {echo_text(name)}", {"name": echo(name)})
        chains = self.hook_chains()
        if not chains.calls and not tool_called.receivers:
            return await tool.run(arguments, ctx)  # type: ignore[attr-defined]
        return await run_call(self, chains, tool, arguments, ctx)

    async def resolve_resource(self, uri: str, ctx: RequestContext) -> tuple[Primitive, dict[str, str]] | None:
        """The resource or template that serves ``uri`` for this request, with its variables."""
        context = handle(ctx)
        for kind in ("resource", "resource_template"):
            for source in self.sources(kind):
                found = await source.match(uri, context)
                if found is not None:
                    return found if await self.permits(found[0], context) else None
        return None

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
        found = await self.resolve_resource(uri, ctx)
        if found is None:
            raise ResourceNotFound(uri)
        resource, variables = found
        chains = self.hook_chains()
        if chains.around("read", resource.kind):
            contents = await chains.run(ResourceRead(self, resource, uri, variables, ctx))
        else:
            contents = await resource.read_contents(uri, variables, ctx)  # type: ignore[attr-defined]
        # The resource may know better than the server-wide default how long its answer stays
        # good, and whether it depends on the user (MCP spec 2026-07-28, server/utilities/caching).
        hints = getattr(resource, "get_cache_hints", None)
        ctx.cache_hints = hints(handle(ctx)) if hints is not None else None
        return contents

    async def can_subscribe(self, uri: str, ctx: RequestContext) -> bool:
        """Whether ``uri`` is a resource this request may read: a template's row must exist and be visible."""
        return await self.subscribable(uri, ctx) is not None

    async def subscribable(self, uri: str, ctx: RequestContext) -> Primitive | None:
        """The resource or template serving ``uri`` when this request may read it (a template's row must exist)."""
        found = await self.resolve_resource(uri, ctx)
        if found is None:
            return None
        resource, variables = found
        exists = getattr(resource, "exists", None)
        return resource if exists is None or await exists(uri, variables, handle(ctx)) else None

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        """
        A legacy ``resources/subscribe`` of ``ctx``'s session to ``uri``, through the hooks around
        subscriptions; a URI this request may not read is unknown (``InvalidParams``).
        """
        resource = await self.subscribable(uri, ctx)
        if resource is None:
            raise InvalidParams(f"Unknown resource: {echo_text(uri)}", {"uri": echo(uri)})
        chains = self.hook_chains()
        subscription = Subscription(self, resource, uri, ctx)
        if chains.around("subscribe", subscription.kind):
            await chains.run(subscription)
        else:
            await subscription.perform()

    async def listen_filter(self, requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """What of a ``subscriptions/listen`` filter this request is served, through the hooks around it."""
        chains = self.hook_chains()
        listen = ListenFilter(self, requested, ctx, _honour)
        if not chains.around("listen"):
            return await _honour(listen)
        return await chains.run(listen)  # type: ignore[no-any-return]

    async def may_notify(self, visibility: dict[str, Any], ctx: RequestContext) -> bool:
        """
        Whether a change notification may reach the stream of ``ctx``'s user: ``visibility`` names
        the URIs that changed (one visible is enough) and/or the model, whose own permission is
        asked when its rows can no longer be checked (they were deleted).
        """
        label = visibility.get("model")
        if label:
            permits = getattr(self.model_options_by_label(label), "permits", None)
            if permits is not None and not await permits(handle(ctx)):
                return False
        for uri in visibility.get("uris") or ():
            if await self.can_subscribe(uri, ctx):
                return True
        return not visibility.get("uris")

    def model_options_by_label(self, label: str) -> Any:
        return None

    async def get_prompt(self, name: str, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        prompt = await self.find("prompt", name, ctx)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {echo_text(name)}", {"name": echo(name)})
        chains = self.hook_chains()
        if chains.around("get_prompt", "prompt"):
            return await chains.run(PromptGet(self, prompt, arguments, ctx))  # type: ignore[no-any-return]
        return await prompt.get(arguments, ctx)  # type: ignore[attr-defined]

    async def complete(self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str],
                       ctx: RequestContext) -> dict[str, Any]:
        """``completion/complete`` for a prompt argument or a template variable (server/utilities/completion)."""
        kind, key = {"ref/prompt": ("prompt", ref.get("name", "")),
                     "ref/resource": ("resource_template", ref.get("uri", ""))}.get(ref.get("type", ""), ("", ""))
        if not kind:
            raise InvalidParams(f"Unknown completion reference type: {echo_text(ref.get('type'))}")
        target = await self.find(kind, key, ctx)
        if target is None:
            if kind == "resource_template" and await self.find("resource", key, ctx) is not None:
                return {"values": [], "total": 0, "hasMore": False}  # a fixed URI has nothing to complete
            what = "prompt" if kind == "prompt" else "resource template"
            raise InvalidParams(f"Unknown {what}: {echo_text(key)}")
        completion = CompletionRequest(self, target, argument, context, ctx, _complete)
        chains = self.hook_chains()
        if chains.around("complete", kind):
            return await chains.run(completion)  # type: ignore[no-any-return]
        return await _complete(completion)


async def _complete(completion: CompletionRequest) -> dict[str, Any]:
    name, value = completion.argument.get("name", ""), completion.argument.get("value", "")
    return completion_result(await completion.target.get_completions(handle(completion.request), name, value,
                                                                     completion.context))


async def _honour(listen: ListenFilter) -> dict[str, Any]:
    return await honoured_listen_filter(listen.site, listen.requested, listen.request)


def answers_only(capabilities: dict[str, Any]) -> dict[str, Any]:
    """
    ``capabilities`` as a transport that can send nothing but answers may announce them
    (:attr:`~django_mcp.protocol.context.RequestContext.pushes`): no ``listChanged`` or
    ``subscribe``, which promise notifications, and no ``logging``, whose messages travel beside
    the answer. The primitives themselves are served all the same.
    """
    kept: dict[str, Any] = {}
    for name, value in capabilities.items():
        if name == "logging":
            continue
        if name in ("tools", "prompts", "resources") and isinstance(value, dict):
            value = {key: flag for key, flag in value.items() if key not in ("listChanged", "subscribe")}
        kept[name] = value
    return kept
