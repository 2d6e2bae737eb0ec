"""The tools' transactions on one Agent's schedule (create, list, update, delete, ack,
snooze), and the flush checkpoint they share with the due path.

Every read or decision first awaits a preflight flush that must be acknowledged with ``True``;
create, an actual update, an actual delete, an actual ack and a snooze wait for a second barrier
after their append. A failed or unacknowledged checkpoint answers :class:`Uncertain` instead of
guessing. Each transaction holds the Agent's schedule FIFO from its preflight through its
barrier, so an edit and a delivery of the same reminder never interleave: the owner's due path
decides from the fold the edit left. Flushes per call: create 2, list 1, update 2, delete 2,
ack 2, snooze 2; an update that changes nothing (or finds no active record, or a conflict), a
delete of an id that is not active, an ack of an occurrence already done and a refused ack or
snooze 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias, TypeVar

import attrs
import structlog

from dsh_hookspecs import Agent, BackOff, Host, JSONValue

from ._at import ScheduleInputError, at_instant, at_target, future_instant
from ._codec import (
    Ack,
    AfterRecord,
    AtRecord,
    Create,
    CronRecord,
    DailyRecord,
    Delete,
    EveryRecord,
    Record,
    ScheduleLogError,
    SnoozedFrom,
    Update,
    WeeklyRecord,
    encode_change,
    encode_record,
    format_instant,
    parse_instant,
)
from ._fifo import Fifo
from ._fold import SCHEDULE_CHANGE, FoldCache
from ._record_fields import record_answer
from ._rules import CalendarRule, calendar_record, first_target, same_calendar_rule

__all__ = [
    "CORRUPT",
    "INTERNAL",
    "NO_EXPECTATION",
    "Edit",
    "NotUpdated",
    "Refused",
    "Selector",
    "SnoozeTarget",
    "Transactions",
    "Uncertain",
    "Unchanged",
    "build_record",
    "edited_record",
    "same_timing",
]

log = structlog.get_logger(__name__)

_T = TypeVar("_T")


@attrs.frozen
class Refused:
    """A transaction decided not to act; ``code`` is the tool error code that says why, and
    ``message`` its message when it is not the code's fixed one (an ``at`` refusal);
    ``snooze_id`` names the reminder that already snoozed an occurrence
    (``already_snoozed``)."""

    code: str
    message: str | None = None
    snooze_id: str | None = attrs.field(default=None, kw_only=True)


#: A create's one selector: ``("after_seconds", int)``, ``("at", str | {date, time,
#: time_zone})`` or ``("every_seconds", int)`` as the tool received it, or ``("daily" |
#: "weekly" | "cron", CalendarRule)`` as the tool checked it.
Selector: TypeAlias = "tuple[str, JSONValue | CalendarRule]"


def build_record(
    schedule_id: str,
    prompt: str,
    selector: Selector,
    now_ms: int,
    title: str | None = None,
    *,
    renotify_minutes: int | None = None,
) -> Record:
    """The record a create appends at the creation sample ``now_ms``.

    Raises :class:`~._at.ScheduleInputError` for a target that is not representable
    (``time_out_of_range``) or, for ``at``, the selector's own refusals and ``not_future``.
    """
    record = _built(schedule_id, prompt, selector, now_ms, title)
    if renotify_minutes is None:
        return record
    return attrs.evolve(record, renotify_minutes=renotify_minutes)


def _built(
    schedule_id: str, prompt: str, selector: Selector, now_ms: int, title: str | None
) -> Record:
    name, value = selector
    if isinstance(value, CalendarRule):
        scheduled_at = format_instant(first_target(value, now_ms))
        return calendar_record(schedule_id, prompt, value, scheduled_at, title)
    if name == "at":
        scheduled_at = format_instant(at_instant(value, now_ms))
        return AtRecord(
            id=schedule_id, kind="at", prompt=prompt, scheduled_at=scheduled_at, title=title
        )
    assert type(value) is int  # the tool checked the integer selectors before the queue
    scheduled_at = format_instant(future_instant(now_ms + value * 1000, now_ms))
    if name == "every_seconds":
        return EveryRecord(
            id=schedule_id,
            kind="every",
            prompt=prompt,
            every_seconds=value,
            scheduled_at=scheduled_at,
            title=title,
        )
    return AfterRecord(
        id=schedule_id,
        kind="after",
        prompt=prompt,
        after_seconds=value,
        scheduled_at=scheduled_at,
        title=title,
    )


def same_timing(record: Record, selector: Selector) -> bool:
    """Whether ``selector`` asks for the timing ``record`` already has (then an edit keeps the
    record's own target: it never re-anchors): the same ``at`` instant, the same
    ``every_seconds``, or the same calendar rule (:func:`~._rules.same_calendar_rule`).

    Raises :class:`~._at.ScheduleInputError` for an ``at`` value of the wrong form."""
    name, value = selector
    if isinstance(value, CalendarRule):
        calendar = isinstance(record, DailyRecord | WeeklyRecord | CronRecord)
        return calendar and record.kind == value.kind and same_calendar_rule(record, value)
    if name == "at":
        target = at_target(value)
        return isinstance(record, AtRecord) and parse_instant(record.scheduled_at) == target
    return isinstance(record, EveryRecord) and record.every_seconds == value


#: ``Edit.expected`` of a call that sent none (the model's): the current record is read.
NO_EXPECTATION: Final = object()


@attrs.frozen(kw_only=True)
class Edit:
    """What an update asks for: each of ``prompt``, ``title``, ``selector`` and
    ``renotify_minutes`` is ``None`` when it is to stay; ``expected`` is the record (wire form)
    the user was shown, or :data:`NO_EXPECTATION`."""

    prompt: str | None = None
    title: str | None = None
    selector: Selector | None = None
    renotify_minutes: int | None = None
    expected: object = NO_EXPECTATION


def edited_record(current: Record, edit: Edit, now_ms: int) -> Record:
    """The record ``edit`` leaves in place of ``current`` at the save time ``now_ms``: a new
    timing is computed as a create computes it; the same timing, or a text-only edit, keeps
    the record's own target. A snooze reminder given a new ``at`` stays the snooze of its
    occurrence (another kind is not a snooze any more)."""
    prompt = current.prompt if edit.prompt is None else edit.prompt
    title = current.title if edit.title is None else edit.title
    renotify = current.renotify_minutes if edit.renotify_minutes is None else edit.renotify_minutes
    selector = edit.selector
    if selector is None or same_timing(current, selector):
        return attrs.evolve(current, prompt=prompt, title=title, renotify_minutes=renotify)
    record = build_record(current.id, prompt, selector, now_ms, title, renotify_minutes=renotify)
    if isinstance(record, AtRecord) and isinstance(current, AtRecord):
        return attrs.evolve(record, snoozed_from=current.snoozed_from)
    return record


@attrs.frozen
class Unchanged:
    """An update that asked for what the record already is: nothing was written; ``answer`` is
    the record's view with ``updated: false``."""

    answer: dict[str, JSONValue]


@attrs.frozen
class NotUpdated:
    """An update that found no active record to change (``schedule_not_found``: never
    created; ``schedule_ended``: delivered for good or deleted), or one the user saw differently
    (``schedule_conflict``)."""

    code: str


def _shown(expected: object, current: Record) -> bool:
    """Whether ``expected`` is ``current`` as a record (the view-only keys ``state`` and
    ``deliveryMode`` aside; ``renotifyMinutes`` and ``snoozedFrom`` are compared only when
    ``expected`` holds them: a form that shows neither still names the record)."""
    if not isinstance(expected, dict):
        return False
    shown = {key: value for key, value in expected.items() if key not in _VIEW_ONLY}
    record = encode_record(current)
    for key in _SHOWN_WHEN_SENT:
        if key not in shown:
            record.pop(key, None)
    return shown == record


_VIEW_ONLY: Final = frozenset({"state", "deliveryMode"})
_SHOWN_WHEN_SENT: Final = ("renotifyMinutes", "snoozedFrom")


@attrs.frozen
class Uncertain:
    """A checkpoint of a transaction was not acknowledged (``persistence_uncertain``);
    ``schedule_id`` names the record it concerns once one is known."""

    schedule_id: str | None = None


#: The owned stream is corrupt.
CORRUPT: Final = Refused("corrupt_schedule_log")
#: Something else failed (logged).
INTERNAL: Final = Refused("internal_error")
#: The log event of an unexpected failure, by transaction.
_FAILED: Final = {
    name: f"tools.{name}_failed" for name in ("create", "list", "update", "delete", "ack", "snooze")
}
#: An ack or snooze names no delivered occurrence of this Session.
NOT_FOUND: Final = Refused("not_found")
#: A snooze names an occurrence already done.
ALREADY_DONE: Final = Refused("already_done")

#: When a snooze reminds again: ``("minutes", int)`` from now, or ``("until", str)``, an
#: explicit-offset instant (the tool checked both forms before the queue).
SnoozeTarget: TypeAlias = tuple[str, int | str]


class Transactions:
    """The create / list / update / delete / ack / snooze transactions of one Agent (the base
    of its owner)."""

    __slots__ = ("_retries", "agent", "folds", "host", "queue")

    def __init__(self, agent: Agent, host: Host, folds: FoldCache) -> None:
        self.agent = agent
        self.host = host
        self.folds = folds
        #: The Agent's schedule FIFO: the transactions and the due path hold it from preflight
        #: through barrier.
        self.queue = Fifo()
        #: The delays of the retries of a failed preflight or barrier (``None``: not stalled).
        self._retries: BackOff | None = None

    def request_drive(self) -> None:
        """Recompute what is due (the owner's due path); called after each confirmation."""
        raise NotImplementedError

    async def checkpoint(self, step: str) -> bool:
        """A preflight or barrier flush of the Agent's Session, for the owner and the tools;
        only a literal ``True`` counts (``owner.flush_failed`` is logged otherwise, with
        ``step``)."""
        try:
            durable = await self.host.sessions.flush(self.agent.session)
        except Exception as exc:
            error = repr(exc)
        else:
            if durable is True:
                return True
            error = "unacked"
        # While stalled, retries are reported once (owner.storage_stalled), not each time.
        report = log.debug if self._retries is not None else log.warning
        report("owner.flush_failed", agent_id=self.agent.id, step=step, error=error)
        return False

    async def create(
        self,
        prompt: str,
        selector: Selector,
        *,
        max_active: int,
        title: str | None = None,
        renotify_minutes: int | None = None,
    ) -> dict[str, JSONValue] | Refused | Uncertain:
        """Append a create of ``prompt`` (and ``title``, ``renotify_minutes``) with ``selector``
        (decided at one clock sample taken after the preflight); return the tools' answer for
        the new record."""
        async with self.queue:
            if not await self._confirmed("create"):
                return Uncertain()
            made = self._guarded(
                "create",
                lambda: self._append_create(prompt, title, selector, max_active, renotify_minutes),
            )
            if isinstance(made, Refused):
                return made
            if not await self._confirmed("create"):
                return Uncertain(made.id)
            return self._guarded("create", lambda: record_answer(made, self.host.clock.now_ms()))

    def _append_create(
        self,
        prompt: str,
        title: str | None,
        selector: Selector,
        max_active: int,
        renotify_minutes: int | None,
    ) -> Record | Refused:
        folded = self.folds.of(self.agent.session)
        if len(folded.active) >= max_active:
            return Refused("too_many_active")
        schedule_id = folded.next_id()
        now = self.host.clock.now_ms()
        try:
            record = build_record(
                schedule_id, prompt, selector, now, title, renotify_minutes=renotify_minutes
            )
        except ScheduleInputError as exc:
            return Refused(exc.code, exc.message)
        self.agent.session.append(SCHEDULE_CHANGE, encode_change(Create(record=record)))
        self.folds.of(self.agent.session)  # fold it now: a wake it moves joins this batch
        return record

    def _answers(self) -> list[JSONValue]:
        active = self.folds.of(self.agent.session).active
        now = self.host.clock.now_ms()
        return [record_answer(record, now) for record in active]

    async def list(self) -> list[JSONValue] | Refused | Uncertain:
        """The tool views of the active records, in create order."""
        async with self.queue:
            if not await self._confirmed("list"):
                return Uncertain()
            return self._guarded("list", self._answers)

    async def update(
        self, schedule_id: str, edit: Edit
    ) -> dict[str, JSONValue] | Unchanged | NotUpdated | Refused | Uncertain:
        """Replace the active record ``schedule_id`` by what ``edit`` asks for (decided at one
        clock sample taken after the preflight); return the tools' answer for the new record."""
        async with self.queue:
            if not await self._confirmed("update"):
                return Uncertain(schedule_id)
            made = self._guarded("update", lambda: self._append_update(schedule_id, edit))
            if not isinstance(made, Record):
                return made
            if not await self._confirmed("update"):
                return Uncertain(schedule_id)
            return self._guarded("update", lambda: record_answer(made, self.host.clock.now_ms()))

    def _append_update(
        self, schedule_id: str, edit: Edit
    ) -> Record | Unchanged | NotUpdated | Refused:
        folded = self.folds.of(self.agent.session)
        current = folded.get(schedule_id)
        if current is None:
            ended = schedule_id in folded.seen_ids
            return NotUpdated("schedule_ended" if ended else "schedule_not_found")
        if edit.expected is not NO_EXPECTATION and not _shown(edit.expected, current):
            return NotUpdated("schedule_conflict")
        now = self.host.clock.now_ms()
        try:
            record = edited_record(current, edit, now)
        except ScheduleInputError as exc:
            return Refused(exc.code, exc.message)
        if record == current:
            return Unchanged({**record_answer(current, now), "updated": False})
        change = Update(id=schedule_id, record=record)
        self.agent.session.append(SCHEDULE_CHANGE, encode_change(change))
        self.folds.of(self.agent.session)  # fold it now: the wake and board rows it moves join
        return record

    async def delete(self, schedule_id: str) -> bool | Refused | Uncertain:
        """Append a delete of ``schedule_id``: ``True``, or ``False`` when it is not active."""
        async with self.queue:
            if not await self._confirmed("delete"):
                return Uncertain(schedule_id)
            found = self._guarded("delete", lambda: self._append_delete(schedule_id))
            if found is not True:
                return found
            if not await self._confirmed("delete"):
                return Uncertain(schedule_id)
            return True

    def _append_delete(self, schedule_id: str) -> bool:
        if self.folds.of(self.agent.session).get(schedule_id) is None:
            return False
        self.agent.session.append(SCHEDULE_CHANGE, encode_change(Delete(id=schedule_id)))
        self.folds.of(self.agent.session)
        return True

    async def ack(self, schedule_id: str, occurrence_at: str) -> str | Refused | Uncertain:
        """Append an ack of the delivered occurrence ``occurrence_at`` (canonical) of
        ``schedule_id``: its id back (also when it was already done: nothing is written), or
        :data:`NOT_FOUND` when this Session's own stream delivered no such occurrence."""
        async with self.queue:
            if not await self._confirmed("ack"):
                return Uncertain(schedule_id)
            acked = self._guarded("ack", lambda: self._append_ack(schedule_id, occurrence_at))
            if acked is not True:
                return schedule_id if acked is False else acked
            if not await self._confirmed("ack"):
                return Uncertain(schedule_id)
            return schedule_id

    def _append_ack(self, schedule_id: str, occurrence_at: str) -> bool | Refused:
        """``True`` when an ack was appended, ``False`` when the occurrence was already done."""
        delivery = self.folds.of(self.agent.session).delivery(schedule_id, occurrence_at)
        if delivery is None:
            return NOT_FOUND
        if delivery.done:
            return False
        change = Ack(id=schedule_id, occurrence_at=occurrence_at)
        self.agent.session.append(SCHEDULE_CHANGE, encode_change(change))
        self.folds.of(self.agent.session)  # fold it now: its rows and withdrawals join the batch
        return True

    async def snooze(
        self, schedule_id: str, occurrence_at: str, target: SnoozeTarget, *, max_active: int
    ) -> dict[str, JSONValue] | Refused | Uncertain:
        """Append a create of a one-shot ``at`` reminder of the delivered occurrence
        ``occurrence_at`` (canonical) of ``schedule_id`` (its prompt, title and
        ``renotifyMinutes`` as delivered, ``snoozedFrom`` naming it) at ``target`` (decided at
        one clock sample taken after the preflight); return the tools' answer for it."""
        async with self.queue:
            if not await self._confirmed("snooze"):
                return Uncertain(schedule_id)
            made = self._guarded(
                "snooze",
                lambda: self._append_snooze(schedule_id, occurrence_at, target, max_active),
            )
            if not isinstance(made, Record):
                return made
            if not await self._confirmed("snooze"):
                return Uncertain(made.id)
            return self._guarded("snooze", lambda: record_answer(made, self.host.clock.now_ms()))

    def _append_snooze(
        self, schedule_id: str, occurrence_at: str, target: SnoozeTarget, max_active: int
    ) -> Record | Refused:
        folded = self.folds.of(self.agent.session)
        delivery = folded.delivery(schedule_id, occurrence_at)
        if delivery is None:
            return NOT_FOUND
        if delivery.done:
            return ALREADY_DONE
        if delivery.snooze is not None:
            return Refused("already_snoozed", snooze_id=delivery.snooze)
        if len(folded.active) >= max_active:
            return Refused("too_many_active")
        now = self.host.clock.now_ms()
        name, value = target
        try:
            if name == "minutes":
                assert type(value) is int  # the tool checked it before the queue
                at_ms = future_instant(now + value * 60_000, now)
            else:
                at_ms = at_instant(value, now)
        except ScheduleInputError as exc:
            return Refused(exc.code, exc.message)
        delivered = delivery.record
        record = AtRecord(
            id=folded.next_id(),
            kind="at",
            prompt=delivered.prompt,
            scheduled_at=format_instant(at_ms),
            title=delivered.title,
            renotify_minutes=delivered.renotify_minutes,
            snoozed_from=SnoozedFrom(id=schedule_id, occurrence_at=occurrence_at),
        )
        self.agent.session.append(SCHEDULE_CHANGE, encode_change(Create(record=record)))
        self.folds.of(self.agent.session)  # fold it now: its wake, rows and withdrawals join
        return record

    def _guarded(self, operation: str, step: Callable[[], _T]) -> _T | Refused:
        """``step()``; a corrupt log, or any other failure (logged), is a refusal."""
        try:
            return step()
        except ScheduleLogError:
            return CORRUPT
        except Exception:
            log.exception(_FAILED[operation], agent_id=self.agent.id)
            return INTERNAL

    async def _confirmed(self, operation: str) -> bool:
        """A checkpoint; a confirmed one re-drives the owner, since the fold it decides from is
        now on disk."""
        if not await self.checkpoint(operation):
            return False
        try:
            self.request_drive()
        except Exception:
            log.exception("tools.notify_failed", agent_id=self.agent.id)
        return True
