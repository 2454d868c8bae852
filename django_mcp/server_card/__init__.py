"""
The MCP Server Card: a public JSON document that says what this server is and how to reach it, for
clients to read before they connect (SEP-2127, "MCP Server Cards", an experimental extension;
https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127).

The card follows the extension's draft as of ``modelcontextprotocol/experimental-ext-server-card``
commit ``8924e086`` (2026-07-24): ``schema.ts`` for its members, ``docs/discovery.md`` for where and
how it is served. :mod:`~django_mcp.server_card.card` builds it from a site,
:mod:`~django_mcp.server_card.views` serves it at ``<streamable-http-url>/server-card`` (with the
URLconf in :mod:`~django_mcp.server_card.urls`), and :mod:`~django_mcp.server_card.registry` turns
it into the MCP Registry's ``server.json`` for ``manage.py mcp_server_json``.

Nothing here is a Django app: no model, no migration, nothing to add to ``INSTALLED_APPS``; a
project includes the URLs, or runs the command.
"""
