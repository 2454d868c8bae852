"""
Recognising a ``tools/call`` result that the schema round trip would give back unchanged.

:meth:`~django_mcp.protocol.dispatcher.Dispatcher.shape_result` validates every result against
the revision's schema and dumps it again (``mcp_types.methods.serialize_server_result``). For the
most common answer of all — text blocks and ``isError``, which is what a tool returning a string
produces — that round trip costs more than the rest of the call's protocol work together and can
change nothing: every field is required or absent, of the one type the schema allows, and holds no
``None`` to drop. Such a result is sent as it is; anything else (other block types, annotations,
structured content, a ``_meta`` of the tool's own) still takes the full round trip.

The question is asked of the tool's own result. The members 2026-07-28 adds (``resultType``, the
server info in ``_meta``, MCP spec 2026-07-28, basic#messages) are the dispatcher's: of those only
the server info needs looking at (:func:`is_plain_server_info`), once per dispatcher.
"""

from typing import Any


# The CallToolResult members a plain result may have (MCP spec 2025-11-25, server/tools#tool-result).
_RESULT_KEYS = frozenset({"content", "isError"})
_TEXT_BLOCK_KEYS = frozenset({"type", "text"})
# Implementation (MCP spec 2025-11-25, schema): the members server_info() may fill, all strings.
_SERVER_INFO_KEYS = frozenset({"name", "version", "title", "description", "websiteUrl"})


def is_plain_text_call_result(result: Any) -> bool:
    """
    Whether ``result`` is a ``CallToolResult`` of text blocks only, in exactly the shape every
    revision's schema dumps (so validating and dumping it would return an equal dict).
    """
    if type(result) is not dict or not result.keys() <= _RESULT_KEYS:
        return False
    if type(result.get("isError")) is not bool:
        return False
    content = result.get("content")
    if type(content) is not list:
        return False
    for block in content:
        if (type(block) is not dict or block.keys() != _TEXT_BLOCK_KEYS or block["type"] != "text"
                or type(block["text"]) is not str):
            return False
    return True


def is_plain_server_info(info: Any) -> bool:
    """Whether ``info`` is an ``Implementation`` the schema would dump unchanged: ``name``,
    ``version`` and maybe ``title``, all strings."""
    return (type(info) is dict and info.keys() <= _SERVER_INFO_KEYS and "name" in info and "version" in info
            and all(type(value) is str for value in info.values()))
