"""
The sync methods of :class:`~django_mcp.test.McpClient`, for ``django.test.TestCase`` and other sync
tests: each runs its ``a``-prefixed coroutine through asgiref's ``async_to_sync``, so the request's
thread-sensitive sync work comes back to the calling thread, and its database connection.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync

from .results import Completion, Listing, PromptResult, ResourceResult, ToolResult


class SyncTwins:
    """``call_tool`` for ``acall_tool``, and so on for every request method of the client (which has the coroutines)."""

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return async_to_sync(self.arequest)(method, params)

    def initialize(self) -> dict[str, Any]:
        return async_to_sync(self.ainitialize)()

    def discover(self) -> dict[str, Any]:
        return async_to_sync(self.adiscover)()

    def ping(self) -> dict[str, Any]:
        return async_to_sync(self.aping)()

    def list_tools(self) -> Listing:
        return async_to_sync(self.alist_tools)()

    def list_resources(self) -> Listing:
        return async_to_sync(self.alist_resources)()

    def list_resource_templates(self) -> Listing:
        return async_to_sync(self.alist_resource_templates)()

    def list_prompts(self) -> Listing:
        return async_to_sync(self.alist_prompts)()

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, /, **more_arguments: Any) -> ToolResult:
        return async_to_sync(self.acall_tool)(name, arguments, **more_arguments)

    def read_resource(self, uri: str) -> ResourceResult:
        return async_to_sync(self.aread_resource)(uri)

    def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, /, **more_arguments: Any) -> PromptResult:
        return async_to_sync(self.aget_prompt)(name, arguments, **more_arguments)

    def complete(self, ref: dict[str, Any] | str, argument: str, value: str = "",
                 context: dict[str, str] | None = None) -> Completion:
        return async_to_sync(self.acomplete)(ref, argument, value, context)

    def subscribe(self, uri: str) -> None:
        return async_to_sync(self.asubscribe)(uri)

    def unsubscribe(self, uri: str) -> None:
        return async_to_sync(self.aunsubscribe)(uri)

    def close(self) -> None:
        return async_to_sync(self.aclose)()
