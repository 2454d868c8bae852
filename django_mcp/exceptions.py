"""Exceptions application code raises for django_mcp to turn into answers."""


class ToolError(Exception):
    """
    An error meant for the model: raise it in a tool and its message becomes the ``isError``
    result, which the model reads and may act on (MCP spec 2025-11-25, server/tools, "Error
    Handling")::

        raise ToolError(f"No book with id {book_id}")

    Other unexpected exceptions reach the client only as a generic message (their text can hold
    paths, SQL or values), unless ``DEBUG`` is on; they are logged in full either way.
    """
