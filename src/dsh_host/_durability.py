"""The durability gate of an Agent's driver: wait until a prefix of its Session is on disk.

A turn caused by a follow-up may not start (and its model call may not run) before what caused
it is durable (see :mod:`dsh_host._agent`). :meth:`DurabilityGate.until` flushes when the prefix
is not known to be durable; while storage does not acknowledge, it waits a back-off (1 s doubling
to 60 s, on the host clock) or until any later flush of the Session succeeds, and tries again.
The stall is logged once, and its end once.
"""

from __future__ import annotations

import asyncio

import structlog

from ._session import LiveSession, SessionStore

log = structlog.get_logger(__name__)

#: Back-off of a turn waiting for its follow-up to become durable: first wait, longest wait.
DURABILITY_RETRY_FIRST = 1.0
DURABILITY_RETRY_MAX = 60.0


class DurabilityGate:
    """Proves prefixes of one live Session durable for the Agent ``agent_id``."""

    def __init__(self, store: SessionStore, session: LiveSession, agent_id: str) -> None:
        self._store = store
        self._session = session
        self._agent_id = agent_id
        #: True while a back-off for storage is being waited out.
        self.waiting = False

    async def until(self, required: int) -> bool:
        """Return once the first ``required`` events of the Session are proven durable;
        ``False`` when the Session is no longer live (it can never be proven then)."""
        session = self._session
        store = self._store
        delay = 0.0
        while store.durable_length(session) < required:
            if not store.is_live(session):
                return False
            error = "unacknowledged"
            try:
                flushed = await store.flush(session) is True
                if flushed and store.durable_length(session) >= required:
                    break
            except Exception as exc:
                error = repr(exc)
            if not delay:
                log.warning(
                    "agent.turn_waits_for_storage",
                    agent_id=self._agent_id,
                    session_id=session.id,
                    error=error,
                )
            delay = min(delay * 2, DURABILITY_RETRY_MAX) if delay else DURABILITY_RETRY_FIRST
            await self._retry_wait(delay)
        if delay:
            log.info("agent.turn_storage_recovered", agent_id=self._agent_id, session_id=session.id)
        return True

    async def _retry_wait(self, delay: float) -> None:
        """``delay`` seconds on the host clock, cut short by a successful flush of the Session."""
        store = self._store
        session = self._session
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done(*_: object) -> None:
            if not wake.done():
                wake.set_result(None)

        def flushed(flushed_session: object, _through_seq: int) -> None:
            if flushed_session is session:
                done()

        timer = store.clock.call_later(delay, done)
        unsubscribe = store.add_flushed_observer(flushed)
        self.waiting = True
        try:
            await wake
        finally:
            self.waiting = False
            timer.cancel()
            unsubscribe()
