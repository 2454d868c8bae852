"""The ``nextCursor`` member (MCP spec 2025-11-25, server/utilities/pagination)."""

from django_mcp.protocol.pagination import page_fields


def test_page_fields():
    assert page_fields(None) == {}
    assert page_fields("abc") == {"nextCursor": "abc"}
