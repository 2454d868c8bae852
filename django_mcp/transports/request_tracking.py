"""
The requests of a legacy session that run on this worker: each is a task of its own, counted so
the consumer keeps what they need until the last has ended, findable by ``(session, request id)``
so that ``notifications/cancelled`` from any worker reaches it (MCP spec 2025-11-25,
basic/utilities/cancellation), and its id refused to a second request while it runs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..fanout import in_flight, key, session_group
from ..protocol.errors import InvalidRequest


if TYPE_CHECKING:
    from .live_sessions import LiveSession


logger = logging.getLogger("django_mcp.transports")

_cleanups: set[asyncio.Task[None]] = set()


class RequestTrackingMixin:
    """The running requests of :class:`~django_mcp.transports.http_sessions.LegacySessionMixin`."""

    requests_running = 0
    # The consumer's (base.HttpStreamConsumer, http_sessions.LegacySessionMixin).
    new_task: Any
    spawn: Any
    join: Any
    cleanup: Any
    connection_gone: bool

    def run_request(self, session: LiveSession, message: dict[str, Any], coroutine: Any) -> asyncio.Task[Any]:
        """Start a request task: cancellable from any worker, counted so cleanup waits for it."""
        task = self.new_task(coroutine)
        self.track(session, message["id"], task)
        return task

    def _request_done(self, task: asyncio.Task[Any]) -> None:
        """Called by :meth:`track`'s done callback once the request task has ended."""
        self.requests_running -= 1
        if not task.cancelled() and task.exception() is not None:
            logger.error("Request task failed", exc_info=task.exception())
        if self.requests_running == 0 and self.connection_gone:
            cleanup = asyncio.ensure_future(self.cleanup())
            # Held until done: the loop keeps only weak references to tasks.
            _cleanups.add(cleanup)
            cleanup.add_done_callback(_cleanups.discard)

    def track(self, session: LiveSession, request_id: Any, task: asyncio.Task[Any]) -> None:
        """
        Make a running request cancellable by ``notifications/cancelled`` from any worker, and
        count it until it ends (:meth:`_request_done`).
        """
        slot = (session.id, key(request_id))
        in_flight[slot] = task
        self.requests_running += 1
        loop = task.get_loop()
        timer: asyncio.TimerHandle | None = None

        def join_if_still_running() -> None:
            # The cancellation may reach another worker, which relays it to the session's group.
            # Only requests that run a while need that, so quick ones never pay for a join.
            if not task.done():
                self.spawn(self._join_for_cancellation(session.id))

        def time_if_still_running() -> None:
            # Runs after the task's first step (scheduled after it): most requests are answered
            # in that step and never pay for a timer.
            nonlocal timer
            if not task.done():
                timer = loop.call_later(0.05, join_if_still_running)

        loop.call_soon(time_if_still_running)

        def release(_: Any) -> None:
            if in_flight.get(slot) is task:
                del in_flight[slot]
            # The timer holds this consumer: cancelled, it lets go at once instead of 50 ms on,
            # so a quick request's objects die young rather than crowd the collector's older
            # generations under load.
            if timer is not None:
                timer.cancel()
            self._request_done(task)

        task.add_done_callback(release)

    async def _join_for_cancellation(self, session_id: str) -> None:
        try:
            await self.join(session_group(session_id))
        except Exception:
            # The channel layer is away: a cancellation sent to another worker cannot reach this
            # request until it is back. The request itself goes on.
            logger.warning("Request of session %s cannot hear cancellations from other workers", session_id,
                           exc_info=True)


def refuse_duplicate_id(session_id: str, request_id: Any) -> None:
    """
    Request ids must be unique among a session's requests in flight (MCP spec 2025-11-25, basic#requests):
    a second request with the id of one still running would take over its cancellation slot.
    Checked on this worker, where the id's requests run when the session's POSTs come here.
    """
    running = in_flight.get((session_id, key(request_id)))
    if running is not None and not running.done():
        raise InvalidRequest(f"Invalid Request: request id {request_id!r} is already in use by a request in flight")
