"""
What the test client's calls return: the server's result as sent (``raw``), the parts a test
asserts on, and the notifications the server sent while the request ran.
"""

from __future__ import annotations

import base64
from typing import Any


class Answer:
    """
    A result and what came with it. ``raw`` is the JSON-RPC result as the server sent it;
    ``notifications`` the messages the server sent on the request's own stream before it
    (progress, log messages; in a legacy session also list changes and resource updates), each a
    JSON-RPC notification ``{"method": ..., "params": ...}``.
    """

    def __init__(self, raw: dict[str, Any], notifications: list[dict[str, Any]] | None = None) -> None:
        self.raw = raw
        self.notifications = notifications or []

    @property
    def meta(self) -> dict[str, Any]:
        """The result's ``_meta``."""
        return self.raw.get("_meta") or {}

    @property
    def progress(self) -> list[dict[str, Any]]:
        """The ``params`` of each ``notifications/progress`` received, in order."""
        return self.notifications_of("notifications/progress")

    @property
    def log(self) -> list[dict[str, Any]]:
        """The ``params`` of each ``notifications/message`` (a log message) received, in order."""
        return self.notifications_of("notifications/message")

    def notifications_of(self, method: str) -> list[dict[str, Any]]:
        """The ``params`` of the notifications named ``method``, in order."""
        return [message.get("params") or {} for message in self.notifications if message.get("method") == method]


def _text_of(content: list[dict[str, Any]]) -> str:
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


class ToolResult(Answer):
    """A ``tools/call`` result."""

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks, as sent (``{"type": "text", "text": ...}``…)."""
        return self.raw.get("content") or []

    @property
    def text(self) -> str:
        """The text of the text blocks, joined by newlines."""
        return _text_of(self.content)

    @property
    def structured(self) -> Any:
        """``structuredContent``, or None when the tool returned none."""
        return self.raw.get("structuredContent")

    @property
    def is_error(self) -> bool:
        """Whether the tool reported an error (``isError``): the call reached it and it failed."""
        return bool(self.raw.get("isError"))

    def __repr__(self) -> str:
        state = "error" if self.is_error else "ok"
        return f"<ToolResult {state} {self.text[:60]!r}>"


class ResourceResult(Answer):
    """A ``resources/read`` result."""

    @property
    def contents(self) -> list[dict[str, Any]]:
        """The contents, as sent (each with ``uri`` and ``text`` or ``blob``)."""
        return self.raw.get("contents") or []

    @property
    def text(self) -> str:
        """The text of the text contents, joined by newlines."""
        return "\n".join(item["text"] for item in self.contents if "text" in item)

    @property
    def blob(self) -> bytes:
        """The bytes of the first binary content (``blob``, base64 on the wire); empty when there is none."""
        for item in self.contents:
            if "blob" in item:
                return base64.b64decode(item["blob"])
        return b""

    @property
    def mime_type(self) -> str | None:
        """The first content's ``mimeType``."""
        return self.contents[0].get("mimeType") if self.contents else None

    def __repr__(self) -> str:
        return f"<ResourceResult {len(self.contents)} content(s) {self.mime_type}>"


class PromptResult(Answer):
    """A ``prompts/get`` result."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages, as sent (``{"role": ..., "content": {...}}``)."""
        return self.raw.get("messages") or []

    @property
    def description(self) -> str | None:
        return self.raw.get("description")

    @property
    def text(self) -> str:
        """The text of every text message, joined by newlines."""
        return _text_of([message.get("content") or {} for message in self.messages])

    def __repr__(self) -> str:
        return f"<PromptResult {len(self.messages)} message(s)>"


class Completion(Answer):
    """A ``completion/complete`` result."""

    @property
    def values(self) -> list[str]:
        return (self.raw.get("completion") or {}).get("values") or []

    @property
    def total(self) -> int | None:
        return (self.raw.get("completion") or {}).get("total")

    @property
    def has_more(self) -> bool:
        return bool((self.raw.get("completion") or {}).get("hasMore"))


class Listing(list):
    """
    The items of a listing (``tools/list``, ``resources/list``…), every page followed; each item
    as sent. ``names`` are their names (resources: their ``uri`` is in ``uris``).

    ``items`` are the items of every page, in order; ``notifications`` the messages the server
    sent on the requests' own streams while the pages were read, as an :class:`Answer`'s are.
    """

    def __init__(self, items: list[dict[str, Any]], notifications: list[dict[str, Any]] | None = None) -> None:
        super().__init__(items)
        self.notifications = notifications or []

    @property
    def names(self) -> list[str]:
        return [item.get("name", "") for item in self]

    @property
    def uris(self) -> list[str]:
        return [item.get("uri") or item.get("uriTemplate", "") for item in self]

    def get(self, name: str) -> dict[str, Any] | None:
        """The item named ``name`` (or with the URI ``name``), or None."""
        for item in self:
            if name in (item.get("name"), item.get("uri"), item.get("uriTemplate")):
                return item
        return None
