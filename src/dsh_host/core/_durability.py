"""The durability gate of an Agent's driver: wait until a prefix of its Session is on disk.

A turn caused by a follow-up may not start (and its model call may not run) before what caused
it is durable (see :mod:`dsh_host.core._agent`). :meth:`DurabilityGate.until` flushes when the
prefix is not known to be durable; while storage does not acknowledge, it waits a back-off
(:class:`~dsh_hookspecs.BackOff`: 1 s doubling to 60 s, on the host clock) or until any later
flush of the Session succeeds, and tries again. The stall is logged once, and its end once.
"""

from __future__ import annotations

import structlog

from dsh_hookspecs import BackOff

from .._observations import Flushed
from ._session import LiveSession, LiveSessionStore

log = structlog.get_logger(__name__)

#: The longest wait (seconds) of a turn waiting for its follow-up to become durable.
DURABILITY_RETRY_MAX = 60.0


class DurabilityGate:
    """Proves prefixes of one live Session durable for the Agent ``agent_id``."""

    def __init__(self, store: LiveSessionStore, session: LiveSession, agent_id: str) -> None:
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
        backoff: BackOff | None = None  # made on the first failure: the usual path makes none
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
            if backoff is None:
                log.warning(
                    "agent.turn_waits_for_storage",
                    agent_id=self._agent_id,
                    session_id=session.id,
                    error=error,
                )
                backoff = BackOff(DURABILITY_RETRY_MAX)
            await self._retry_wait(backoff)
        if backoff is not None:
            log.info("agent.turn_storage_recovered", agent_id=self._agent_id, session_id=session.id)
        return True

    async def _retry_wait(self, backoff: BackOff) -> None:
        """The next delay of ``backoff`` on the host clock, cut short by a successful flush of the
        Session."""
        store = self._store
        session = self._session

        def flushed(observation: Flushed) -> None:
            if observation.session is session:
                backoff.cut_short()

        unsubscribe = store.subscribe(flushed, Flushed)
        self.waiting = True
        try:
            await backoff.wait(store.clock)
        finally:
            self.waiting = False
            unsubscribe()
