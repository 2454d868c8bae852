"""
The MCP protocol core: JSON-RPC framing, lifecycle for both protocol eras, dispatch.

Nothing in this package imports Django or knows about HTTP. A transport turns bytes into a parsed
message plus a :class:`~django_mcp.protocol.context.RequestContext`, hands both to the
:class:`~django_mcp.protocol.dispatcher.Dispatcher`, and turns the answer back into bytes.
"""
