"""The live owner: one per root Agent, turning due records into one follow-up plus a dispatch.

The durable truth is the Session's ``schedule/change`` stream; the owner is disposable and holds
only a timer, an optional idle wait and one optional in-flight run. Its due path, inside the
Agent's schedule FIFO (shared with the tools from preflight through barrier)::

    preflight flush -> claim idle maintenance -> refold -> decision clock -> framing
    -> followup() + dispatch append (one synchronous step) -> release -> barrier flush -> next

* What is delivered is :func:`~._due.due_decision` at the decision clock sample: one due
  one-shot (after or at) per follow-up, else all overdue every records in one batch follow-up
  (each at its latest occurrence, all dispatches with the same ``acceptedAt``). Timers arm for
  the earliest target of any kind. A decision that cannot be made (a clock outside years
  0001-9999 while an every record is due) is logged and dispatches nothing; it does not fault.
* A busy Agent (a turn or another maintenance task) leaves the record active and waits for
  ``when_idle()``; when its Session stopped being live meanwhile, the owner waits for nothing.
* A rejected preflight or barrier flush is retried: a back-off of 1 s doubling up to one
  segment (:class:`~dsh_hookspecs.BackOff`), cut short by any later acknowledged flush of the
  Session (``dsh_session_flushed``), the Agent reaching idle or a management call. A stall is
  logged once (``owner.storage_stalled``), and its end once (``owner.storage_recovered``). The
  reminder turn itself waits in the Agent until its dispatch is durable, so a retried barrier
  never runs it twice.
* Framing or enqueue failure appends no dispatch and keeps the record; an append failure after
  the follow-up was queued faults this owner for good (retrying could duplicate the reminder).
* Waits are bounded segments (:func:`~dsh_hookspecs.segment_wait`: at most ``max_segment``
  seconds of loop time) and every wake re-reads the wall clock, so a clock set back never fires
  early and a forward jump is honoured within one segment. A wake whose record is still in the
  future only re-arms: no task, no flush.
* Disposal cancels timers, awaits in-flight work and never touches durable records.
"""

from __future__ import annotations

import asyncio

import structlog

from dsh_hookspecs import (
    Agent,
    AgentBusyError,
    AgentDisposedError,
    BackOff,
    EventRejectedError,
    Host,
    Once,
    TaskSlot,
    TimerHandle,
    segment_wait,
)

from ._codec import Record, ScheduleLogError, encode_change, parse_instant
from ._due import Decision, due_decision
from ._fold import SCHEDULE_CHANGE, FoldCache, earliest
from ._transactions import Transactions

log = structlog.get_logger(__name__)

#: The plugin name recorded as the source of reminder follow-ups.
PLUGIN_NAME = "schedule"


class ScheduleOwner(Transactions):
    """The disposable live owner of one root Agent's reminders (and, through
    :class:`Transactions`, of the tools' transactions)."""

    __slots__ = (
        "_armed_for",
        "_disposal",
        "_driving",
        "_idling",
        "_requested",
        "_stalled",
        "_timer",
        "faulted",
        "max_segment",
        "stopping",
    )

    def __init__(
        self,
        agent: Agent,
        host: Host,
        folds: FoldCache,
        *,
        max_segment: float = 60.0,
        stalled: dict[str, ScheduleOwner] | None = None,
    ) -> None:
        super().__init__(agent, host, folds)
        self.max_segment = max_segment
        #: The owners whose storage stalled, by Session id (shared by the plugin, which
        #: re-drives them from ``dsh_session_flushed``).
        self._stalled = {} if stalled is None else stalled
        self.stopping = False
        self.faulted = False
        self._requested = False
        self._timer: TimerHandle | None = None
        #: The target (epoch ms) the armed timer was computed for.
        self._armed_for: int | None = None
        #: The drive in flight, the wait for the Agent to be idle, and the one disposal: made
        #: on first use, so an idle owner (the common case, thousands per host) holds none.
        self._driving: TaskSlot | None = None
        self._idling: TaskSlot | None = None
        self._disposal: Once | None = None

    @property
    def _run(self) -> asyncio.Task[None] | None:
        """The drive in flight (tests outside tests/schedule wait for it to end)."""
        return None if self._driving is None else self._driving.task

    @property
    def _idle_wait(self) -> asyncio.Task[None] | None:
        """The idle wait in flight (read by the tests' quiet checks)."""
        return None if self._idling is None else self._idling.task

    # -- triggers -------------------------------------------------------------------------------
    def start(self) -> None:
        self.request_drive()

    def request_drive(self) -> None:
        """Recompute from the fold: when nothing is due, (re-)arm at once and stop there (no
        task, no flush); otherwise drive in the FIFO (coalesced with a run already in flight)."""
        if self.stopping or self.faulted:
            return
        if self._driving is not None and self._driving.busy:
            self._cancel_timer()
            self._requested = True  # the run in flight goes round once more
            return
        if self._quiet():
            self._requested = False
            return
        self._cancel_timer()
        self._requested = True
        if self._driving is None:
            self._driving = TaskSlot("schedule-owner-drive")
        self._driving.start(self._run_requested, on_done=self._run_settled)

    def _quiet(self) -> bool:
        """Nothing is due: the earliest record's segment is armed, or nothing is active.

        A fold that cannot be read is never quiet: the full drive reports it.
        """
        try:
            record = earliest(self.folds.of(self.agent.session).active)
        except Exception:
            return False
        if record is None:
            self._cancel_timer()
            return True
        return self._arm(record, keep=True)

    def _run_settled(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self._fault("run_failed", error)
        elif self._requested:
            self.request_drive()

    async def _run_requested(self) -> None:
        while self._requested and not self.stopping and not self.faulted:
            self._requested = False
            async with self.queue:
                await self._drive_once()

    def _on_timer(self) -> None:
        # A segment boundary whose record is still in the future only re-arms (see
        # request_drive): an idle owner costs one callback per segment.
        self._timer = None
        self.request_drive()

    # -- the drive --------------------------------------------------------------------------------
    def _gone(self) -> bool:
        """Stopping, or the Agent is no longer the live root Agent of its live Session."""
        return self.stopping or not self._is_live()

    def _is_live(self) -> bool:
        agent = self.agent
        return (
            not agent.disposed
            and agent.parent is None
            and self.host.agents.get(agent.id) is agent
            and self.host.sessions.get(agent.session.id) is agent.session
        )

    async def _drive_once(self) -> None:
        self._cancel_timer()
        # Nothing is decided from the live fold until it is confirmed: arming a timer (or doing
        # nothing) is not a decision, so the preflight runs only when a record is due, and the
        # fold is read again after it.
        if self._gone() or self._due() is None:
            return
        if not await self.checkpoint("preflight"):
            self._stall("preflight")
            return
        self._recovered()
        if self._gone() or self._due() is None:
            return
        try:
            dispatched = await self.agent.run_maintenance(self._due_task)
        except AgentBusyError:
            if not self._gone():  # a Session no longer live releases without work
                self._wait_for_idle()
            return
        except AgentDisposedError:
            return
        if not dispatched:
            return
        # The phase is released: the parked follow-up waits in the Agent until its dispatch is
        # durable, then starts its own turn. The barrier proves it before the next record.
        if not await self.checkpoint("barrier"):
            self._stall("barrier")
            return
        self._recovered()
        if not self._gone():
            self._requested = True

    # -- storage stalls ----------------------------------------------------------------------------
    def _stall(self, step: str) -> None:
        """A preflight or barrier was not acknowledged: retry after the back-off."""
        if self._gone():
            return
        retries = self._retries
        if retries is None:  # made on the first stall: an owner that never stalls holds none
            log.warning(
                "owner.storage_stalled",
                agent_id=self.agent.id,
                session_id=self.agent.session.id,
                step=step,
            )
            retries = self._retries = BackOff(self.max_segment)
        self._stalled[self.agent.session.id] = self
        self._cancel_timer()
        self._timer = self.host.clock.call_later(retries.next(), self._on_timer)

    def _recovered(self) -> None:
        if self._retries is None:
            return
        self._retries = None
        self._forget_stall()
        log.info(
            "owner.storage_recovered", agent_id=self.agent.id, session_id=self.agent.session.id
        )

    def _forget_stall(self) -> None:
        if self._stalled.get(self.agent.session.id) is self:
            del self._stalled[self.agent.session.id]

    def session_flushed(self) -> None:
        """Some flush of this owner's Session was acknowledged: a stalled owner retries now."""
        if self._retries is not None:
            self.request_drive()

    def _due(self) -> Decision | None:
        """What is due now (one one-shot, or the batch of due every records); when nothing is,
        arm the earliest record's segment (or nothing).

        A corrupt log faults the owner and answers ``None``; so does (without a fault, logged)
        a decision that cannot be made.
        """
        try:
            active = self.folds.of(self.agent.session).active
        except ScheduleLogError as exc:
            self._fault("corrupt_log", exc)
            return None
        record = earliest(active)
        if record is None or self._arm(record):
            return None
        # The decision clock sample. The earliest record is due by the arming clock; a
        # millisecond sample a hair behind it (or a clock stepped back since) still decides
        # at no earlier than that target.
        now = max(self.host.clock.now_ms(), parse_instant(record.scheduled_at))
        try:
            decision = due_decision(active, now)
        except ScheduleLogError as exc:
            log.warning("owner.decision_failed", agent_id=self.agent.id, error=repr(exc))
            return None
        assert decision is not None  # the earliest record is due at ``now``
        return decision

    def _due_task(self) -> bool:
        """Runs synchronously inside the claimed maintenance phase."""
        if self._gone():
            return False
        decision = self._due()  # a racing delete won, or the clock moved back: no dispatch
        if decision is None:
            return False
        ids = ", ".join(dispatch.id for dispatch in decision.dispatches())
        dispatches = tuple(
            (SCHEDULE_CHANGE, encode_change(dispatch)) for dispatch in decision.dispatches()
        )
        try:
            # The follow-up and its dispatches enter the log in one all-or-nothing step: never
            # a durable follow-up without its dispatches, nor the reverse.
            frame = decision.framing()
            self.agent.followup(frame, plugin=PLUGIN_NAME, with_events=dispatches)
        except EventRejectedError as exc:
            if exc.event is not None and exc.event.type == SCHEDULE_CHANGE:
                # A dispatch itself was refused: this owner stops for good (nothing was
                # appended or queued; the records stay active for a later life of the Agent).
                self._fault("append_failed", exc, schedule_id=ids)
                return False
            self._enqueue_failed(ids, exc)
            return False
        except Exception as exc:
            self._enqueue_failed(ids, exc)
            return False
        self.folds.of(self.agent.session)  # fold the dispatches now: their wake joins this batch
        log.info("owner.dispatched", agent_id=self.agent.id, schedule_id=ids)
        return True

    def _enqueue_failed(self, ids: str, error: BaseException) -> None:
        log.warning(
            "owner.enqueue_failed",
            agent_id=self.agent.id,
            schedule_id=ids,
            error=repr(error),
        )

    def _arm(self, record: Record, *, keep: bool = False) -> bool:
        """Arm one bounded segment if ``record`` is not due yet; ``False`` when it is due.

        With ``keep``, a timer already armed for this very target stays (every tool call
        re-drives the owner; re-arming each time would only churn the loop's timer heap). It
        fires within one segment whatever the wall clock did, and re-reads it then.
        """
        target = parse_instant(record.scheduled_at)
        wait = segment_wait(self.host.clock, target, self.max_segment)
        if wait is None:
            return False
        if keep and self._timer is not None and self._armed_for == target:
            return True
        self._cancel_timer()
        self._timer = self.host.clock.call_later(wait, self._on_timer)
        self._armed_for = target
        return True

    def _wait_for_idle(self) -> None:
        if not self.stopping:
            if self._idling is None:
                self._idling = TaskSlot("schedule-owner-idle-wait")
            self._idling.start(self._idle_then_drive)

    async def _idle_then_drive(self) -> None:
        try:
            await self.agent.when_idle()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("owner.idle_wait_failed", agent_id=self.agent.id, error=repr(exc))
            return
        finally:
            assert self._idling is not None  # it started this wait
            self._idling.release()
        self.request_drive()

    def _fault(self, reason: str, error: BaseException, **fields: object) -> None:
        self.faulted = True
        self._cancel_timer()
        log.warning(
            "owner.faulted", agent_id=self.agent.id, reason=reason, error=repr(error), **fields
        )

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._armed_for = None

    # -- disposal ---------------------------------------------------------------------------------
    async def dispose(self) -> None:
        """Stop new work, cancel waits, await in-flight work; durable records stay untouched."""
        if self._disposal is None:
            self._disposal = Once("schedule-owner-dispose")
        await self._disposal.run(self._dispose)

    async def _dispose(self) -> None:
        self.stopping = True
        self._requested = False
        self._cancel_timer()
        self._forget_stall()
        if self._idling is not None:
            self._idling.cancel()
            await self._idling.join()
        if self._driving is not None:
            await self._driving.join()
