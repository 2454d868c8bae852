"""
Reading a channel patiently: a layer that is briefly away (Redis restarting) is waited for, with a
growing pause, and only one that stays away is given up on, so the streams that depend on it can
end and their clients reconnect.

A read that merely timed out is not a failure. channels_redis blocks on Redis for up to its
``brpop_timeout`` (5 s) waiting for a message, and redis-py 8 gives up on any reply after its own
default ``socket_timeout`` of 5 s: on an idle worker the two race, and every few reads end in
``redis.exceptions.TimeoutError`` although Redis is fine. Counting those ended every stream of a
quiet worker after a minute.
"""

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..fanout import layer_failed


logger = logging.getLogger("django_mcp.transports")

# Failed reads in a row (about 6 s with the back-off) before a reader gives up.
READER_ATTEMPTS = 5


def is_read_timeout(exc: BaseException) -> bool:
    """
    Whether a failed read only timed out waiting (redis-py's ``TimeoutError`` is not the built-in
    one, so it is recognised by name), as opposed to a connection refused, reset or lost.
    """
    return isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or type(exc).__name__ == "TimeoutError"


class PatientReader:
    """
    Reads one channel. ``on_trouble`` is called when a streak of failed reads begins: the layer
    may have lost what it held (a restarted Redis forgets group memberships), which a channel that
    nobody can send to any more would never hear about by reading.
    """

    def __init__(self, layer: Any, channel: str, *, on_trouble: Callable[[], None] | None = None) -> None:
        self.layer = layer
        self.channel = channel
        self.on_trouble = on_trouble

    async def next(self) -> dict[str, Any] | None:
        """The next event, or None once the layer stayed away for ``READER_ATTEMPTS`` reads."""
        failures = 0
        while True:
            try:
                return await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_read_timeout(exc):
                    # Nothing arrived in time; the layer answered as far as we know. (The pause
                    # only bounds a layer that would time out at once, again and again.)
                    await asyncio.sleep(0.01)
                    continue
                failures += 1
                if failures == 1 and self.on_trouble is not None:
                    self.on_trouble()
                if failures > READER_ATTEMPTS:
                    layer_failed("receive", exc)
                    logger.warning("Channel layer unreachable; ending the streams that depend on it so their "
                                   "clients reconnect", exc_info=True)
                    return None
                await asyncio.sleep(min(0.1 * 2 ** failures, 2.0))
