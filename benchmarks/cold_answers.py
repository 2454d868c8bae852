"""
The fixed answers of the cold-session baselines (``baseline_cold_asgi.py``, ``plain_cold_asgi.py``):
what django_mcp answers for the same steps, so every row writes about the same bytes.
"""

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":'
    b'{"listChanged":true}},"serverInfo":{"name":"django-mcp-bench-cold","version":"0.1.0"},'
    b'"instructions":null,"_meta":{}}}'
)
TOOLS = (
    b'{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Return the text '
    b'unchanged.","inputSchema":{"type":"object","properties":{"text":{"type":"string","title":'
    b'"Text"}},"required":["text"],"additionalProperties":false},"annotations":{}}]}}'
)
CALL = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}'


def json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """Content-Type and Content-Length of a JSON answer."""
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
