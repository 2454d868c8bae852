"""Models published as MCP resources, for the tests of ``django_mcp.model_resources``."""
