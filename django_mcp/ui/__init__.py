"""
Interactive views from Django templates: the MCP Apps extension (``io.modelcontextprotocol/ui``,
SEP-1865; the specification in the ``modelcontextprotocol/ext-apps`` repository, "Stable
(2026-01-26)"), as the feature app ``django_mcp.ui``.

A tool names the view a host should show beside its result — ``@tool(view="library/book_card.html")``
— and the view is a ``ui://`` resource of MIME type ``text/html;profile=mcp-app`` rendered from that
Django template for the requesting user. The host loads it in a sandboxed iframe and hands it the
tool's input and result over ``postMessage``; the page may call the server's tools through the host.
Clients that cannot show views get the same tools with complete text results: views only enhance.
"""
