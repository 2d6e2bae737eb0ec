"""The cold delivery plan: a due wake of a cold Session stored without making it live.

When a wake entry that a plugin filed falls due while its Session is cold, the wake service
(:mod:`._wakeups`) first asks that plugin what it means (:func:`~dsh_hookspecs.hookspecs.
dsh_wake_due`) from what storage holds. A :class:`~dsh_hookspecs.DeliveryPlan` is stored as one
:class:`~dsh_host.persistence.Write`: its follow-ups laid out from the stored length (each an
``agent/followup`` and then its events, all at the plan's instant), its board rows, its notices
(on the channels configured now), the plugin's next wake entry and, when it owes a follow-up, the
host's own ``dsh.turns`` entry due at once, so the follow-up's turn runs through the ordinary
resume, after the write is durable.

Why a plan is safe to apply: the write is fenced on the stored length it was read at (a log that
grew meanwhile refuses it, :class:`~dsh_host.persistence.StorageConflictError`, and nothing is
written); the Session is held while it is written (:meth:`~._session.LiveSessionStore.
writing_cold`: a Session live, being loaded or deleted is not planned, and a resume that starts
meanwhile waits, then loads what was stored); on a backend several hosts share, the plan is read
and stored under the Session's lease, taken as a resume takes it (``SKIP LOCKED``: a Session
another host holds or is claiming is left to it), so no other host opens or plans it meanwhile
and the write is fenced on that lease too; the lease is given back once the plan is stored,
unless a resume on this host waits for the plan (the Session is opened here then, and keeps
it). Whenever there is no plan (no implementation, ``None``, a raise, a malformed plan, a
conflict, another host holding the Session), the Session is resumed as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import structlog

from dsh_hookspecs import BoardEntry, DeliveryPlan, Event, JSONValue, Notice, StoredWake

from .. import _json
from ..persistence import (
    Backend,
    DueWake,
    OutboxChange,
    StorageConflictError,
    Write,
    leases_of,
)
from ._session import TURNS_WAKE, LiveSessionStore

__all__ = ["ColdPlans"]

log = structlog.get_logger(__name__)

#: What a plan's notices become in storage (the coordinator's channels, as a flush files them).
OutboxChanges = Callable[[Mapping[tuple[str, str], Notice | None]], list[OutboxChange]]


class ColdPlans:
    """Stores the plans of due wakes of cold Sessions (see the module docstring)."""

    def __init__(
        self,
        *,
        backend: Backend,
        sessions: LiveSessionStore,
        answers: Callable[[str], bool],
        ask: Callable[[str, StoredWake], DeliveryPlan | None],
        outbox: OutboxChanges,
        filed: Callable[[], None],
        new_id: Callable[[], str],
        now_ms: Callable[[], int],
    ) -> None:
        self.backend = backend
        #: Several hosts share this backend: a plan is read and stored under the Session's lease.
        self.leases = leases_of(backend)
        self.sessions = sessions
        self._answers = answers
        self._ask = ask
        self._outbox = outbox
        #: Tells the outbox's sender that entries were filed (it looks for due ones now).
        self._filed = filed
        self._new_id = new_id
        self._now_ms = now_ms
        #: Plans stored (a host test's and a bench's count).
        self.stored = 0

    async def deliver(self, session_id: str, keys: Sequence[DueWake]) -> bool:
        """Store the plan of the due ``keys`` of the cold ``session_id``; ``False`` when there is
        none to store (the caller resumes the Session instead)."""
        plugins = {plugin for _, plugin, _ in keys}
        if len(plugins) != 1 or TURNS_WAKE in plugins:
            return False
        (plugin,) = plugins
        if not self._answers(plugin):
            return False
        with self.sessions.writing_cold(session_id) as held:
            if not held:
                return False
            leases = self.leases
            if leases is None:
                return await self._deliver(session_id, plugin)
            if leases.held(session_id):
                return False  # this host uses it: the live path owns its wakes
            # Raises SessionLiveElsewhereError while another host holds or claims it.
            await leases.acquire(session_id, skip_locked=True)
            try:
                return await self._deliver(session_id, plugin)
            finally:
                if not self.sessions.awaiting_cold_write(session_id):
                    await leases.release(session_id)  # else the resume waiting here holds it

    async def _deliver(self, session_id: str, plugin: str) -> bool:
        """Read, ask and store one plan (the Session held, and leased where hosts share)."""
        stored = await self.backend.load(session_id)
        if stored is None or plugin not in stored.wakes:
            return False
        now = self._now_ms()
        wake = StoredWake(
            session_id=session_id,
            header=stored.header,
            events=stored.events,
            board={key: e for (p, key), e in stored.board.items() if p == plugin},
            at_ms=stored.wakes[plugin],
            now_ms=now,
        )
        plan = self._ask(plugin, wake)
        if plan is None:
            return False
        try:
            write = self._write(plugin, wake, plan)
            await self.backend.append(write)
        except (ValueError, StorageConflictError) as exc:
            log.warning(
                "host.wake_plan_refused", session_id=session_id, plugin=plugin, error=str(exc)
            )
            return False
        self.stored += 1
        if write.files_notices:
            self._filed()
        return True

    def _write(self, plugin: str, wake: StoredWake, plan: DeliveryPlan) -> Write:
        start, now = len(wake.events), wake.now_ms
        events: list[Event] = []
        source: JSONValue = {"kind": "plugin", "plugin": plugin}
        for followup in plan.followups:
            laid: list[tuple[str, JSONValue]] = [
                (
                    "agent/followup",
                    {"messageId": self._new_id(), "text": followup.text, "source": source},
                ),
                *followup.events,
            ]
            for kind, data in laid:
                events.append(
                    Event(seq=start + len(events), type=kind, time=now, data=_json.canonical(data))
                )
        wakes: dict[str, int | None] = {plugin: plan.wake_at_ms}
        if plan.followups:
            wakes[TURNS_WAKE] = now
        board: dict[tuple[str, str], BoardEntry | None] = {
            (plugin, key): entry for key, entry in plan.board.items()
        }
        notices = {(plugin, key): notice for key, notice in plan.notices}
        return Write(
            wake.session_id, start, events, None, wakes, board=board, outbox=self._outbox(notices)
        )
