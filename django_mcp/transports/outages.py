"""
When a service the server depends on is away — the database, the channel layer's Redis — a
request gets a clear, retryable answer (503 with ``Retry-After`` and a JSON-RPC error) instead of
a 500 page or a connection left hanging, and the worker goes on serving once the service is back.
"""

import asyncio

from django.db import DatabaseError, InterfaceError


def is_outage(exc: BaseException) -> bool:
    """
    Whether ``exc`` says a backing service is unreachable or failing rather than that the request
    or our code is wrong: database errors, refused or dropped connections, timeouts, and Redis's
    errors (checked by module so that projects without channels_redis need not have redis).
    """
    if isinstance(exc, (DatabaseError, InterfaceError, ConnectionError, TimeoutError, asyncio.TimeoutError)):
        return True
    return any(cls.__module__.split(".", 1)[0] == "redis" for cls in type(exc).__mro__)


#: What a client is told while a service is away: it may retry the same request shortly.
RETRY_AFTER_SECONDS = 1
