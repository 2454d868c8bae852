"""
The MCP scope set: three scopes, one per kind of primitive, described in plain words for the
consent page. A primitive may ask for more with ``required_scopes``; a project adds those scopes
to ``OAUTH2_PROVIDER["SCOPES"]`` with their own descriptions.
"""

#: Scope name → what the user grants, as the consent page says it.
MCP_SCOPES = {
    "mcp:tools": "Use the tools this site offers you, such as searches and changes made in your name",
    "mcp:resources": "Read the data this site shares with you",
    "mcp:prompts": "Use this site's prompt templates",
}

#: What each kind of primitive needs of a scoped credential (``DJANGO_MCP["REQUIRED_SCOPES"]``).
KIND_SCOPES = {
    "tool": ["mcp:tools"],
    "resource": ["mcp:resources"],
    "resource_template": ["mcp:resources"],
    "prompt": ["mcp:prompts"],
}
