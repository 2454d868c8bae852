"""Served only by the live OAuth test servers (``MCP_TEST_OAUTH=1``): a tool behind an extra scope."""

from django_mcp import tool


@tool(required_scopes=["tests:secrets"], annotations={"readOnlyHint": True})
def read_secret() -> str:
    """The secret, for tokens granted the ``tests:secrets`` scope on top of the MCP ones."""
    return "s3cret"
