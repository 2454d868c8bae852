"""
Reading a channel patiently: a layer that is briefly away (Redis restarting) is waited for, with a
growing pause, and only one that stays away is given up on, so the streams that depend on it can
end and their clients reconnect.
"""

import asyncio
import logging
from typing import Any

from ..fanout import layer_failed


logger = logging.getLogger("django_mcp.transports")

# Failed reads in a row (about 6 s with the back-off) before a reader gives up.
READER_ATTEMPTS = 5


class PatientReader:
    """Reads one channel; :attr:`recovered` says the layer failed and came back before the last event."""

    def __init__(self, layer: Any, channel: str) -> None:
        self.layer = layer
        self.channel = channel
        self.recovered = False

    async def next(self) -> dict[str, Any] | None:
        """The next event, or None once the layer stayed away for ``READER_ATTEMPTS`` reads."""
        failures = 0
        while True:
            try:
                event = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                if failures > READER_ATTEMPTS:
                    layer_failed("receive", exc)
                    logger.warning("Channel layer unreachable; ending the streams that depend on it so their "
                                   "clients reconnect", exc_info=True)
                    return None
                await asyncio.sleep(min(0.1 * 2 ** failures, 2.0))
                continue
            self.recovered = failures > 0
            return event
