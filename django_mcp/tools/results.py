"""What a tool call answers when it goes wrong: the ``isError`` result, and the exception for refused arguments."""

from typing import Any


class InvalidArguments(Exception):
    """Arguments a serializer, a form or a view refused; the message names each field and its errors."""


def error_result(message: str) -> dict[str, Any]:
    """A tool-execution error the model can see and correct (MCP spec 2025-11-25, server/tools, "Error Handling")."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
