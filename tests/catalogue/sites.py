"""The site the catalogue's model resources are registered on (``MCP_TEST_SITE`` may serve it)."""

from django_mcp.sites import McpSite


site = McpSite("catalogue")
