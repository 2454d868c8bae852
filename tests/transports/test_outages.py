"""
A backing service away (``django_mcp.transports.outages``): the request gets a 503 with
``Retry-After`` and a JSON-RPC error, never a 500 page or a hang. The live versions, with the
database and Redis cut off behind a TCP relay, are in tests/faults.
"""

import json

import pytest
from django.db import OperationalError

from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.transports.outages import is_outage
from tests.transports.test_http_communicator import INITIALIZE, app, header_map, post  # noqa: F401


pytestmark = pytest.mark.django_db(transaction=True)


class UnreachableSessionStore(DatabaseSessionStore):
    """A session store whose database has gone away (what psycopg raises when the server is down)."""

    async def get(self, session_id):
        raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")

    async def create(self, **fields):
        raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")


def test_what_counts_as_an_outage():
    assert is_outage(OperationalError("gone")) and is_outage(ConnectionRefusedError()) and is_outage(TimeoutError())
    assert not is_outage(ValueError("a bug")) and not is_outage(KeyError("x"))


@pytest.mark.parametrize("body, headers", [
    (INITIALIZE, []),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, [(b"mcp-session-id", b"0" * 32)]),
])
async def test_a_database_outage_is_503_with_retry_after(app, settings, body, headers):  # noqa: F811
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "SESSION_STORE": f"{__name__}.UnreachableSessionStore",
                           "SESSION_CACHE_SECONDS": 0}
    response = await post(app, body, headers)
    assert response["status"] == 503
    assert header_map(response)[b"retry-after"] == b"1"
    error = json.loads(response["body"])["error"]
    assert error["code"] == -32603 and "retry" in error["message"]
    assert "5432" not in response["body"].decode()  # the details stay in the log
