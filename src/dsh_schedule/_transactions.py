"""The tools' three transactions on one Agent's schedule, and the flush checkpoint they share
with the due path.

Every read or decision first awaits a preflight flush that must be acknowledged with ``True``;
create and an actual delete wait for a second barrier after their append. A failed or
unacknowledged checkpoint answers :class:`Uncertain` instead of guessing. Each transaction holds
the Agent's schedule FIFO from its preflight through its barrier. Flushes per call: create 2,
list 1, delete 2, delete of an id that is not active 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, TypeAlias, TypeVar

import attrs
import structlog

from dsh_hookspecs import Agent, BackOff, Host, JSONValue

from ._answers import record_answer
from ._at import ScheduleInputError, at_instant, future_instant
from ._codec import (
    AfterRecord,
    AtRecord,
    Create,
    Delete,
    EveryRecord,
    Record,
    ScheduleLogError,
    encode_change,
    format_instant,
)
from ._fifo import Fifo
from ._fold import SCHEDULE_CHANGE, FoldCache

__all__ = [
    "CORRUPT",
    "INTERNAL",
    "Refused",
    "Selector",
    "Transactions",
    "Uncertain",
    "build_record",
]

log = structlog.get_logger(__name__)

_T = TypeVar("_T")


@attrs.frozen
class Refused:
    """A transaction decided not to act; ``code`` is the tool error code that says why, and
    ``message`` its message when it is not the code's fixed one (an ``at`` refusal)."""

    code: str
    message: str | None = None


#: A create's one selector, as the tool received it: ``("after_seconds", int)``,
#: ``("at", str | {date, time, time_zone})`` or ``("every_seconds", int)``.
Selector: TypeAlias = tuple[Literal["after_seconds", "at", "every_seconds"], JSONValue]


def build_record(schedule_id: str, prompt: str, selector: Selector, now_ms: int) -> Record:
    """The record a create appends at the creation sample ``now_ms``.

    Raises :class:`~._at.ScheduleInputError` for a target that is not representable
    (``time_out_of_range``) or, for ``at``, the selector's own refusals and ``not_future``.
    """
    name, value = selector
    if name == "at":
        scheduled_at = format_instant(at_instant(value, now_ms))
        return AtRecord(id=schedule_id, kind="at", prompt=prompt, scheduled_at=scheduled_at)
    assert type(value) is int  # the tool checked the integer selectors before the queue
    scheduled_at = format_instant(future_instant(now_ms + value * 1000, now_ms))
    if name == "every_seconds":
        return EveryRecord(
            id=schedule_id,
            kind="every",
            prompt=prompt,
            every_seconds=value,
            scheduled_at=scheduled_at,
        )
    return AfterRecord(
        id=schedule_id, kind="after", prompt=prompt, after_seconds=value, scheduled_at=scheduled_at
    )


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
_FAILED: Final = {name: f"tools.{name}_failed" for name in ("create", "list", "delete")}


class Transactions:
    """The create / list / delete transactions of one Agent (the base of its owner)."""

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
        self, prompt: str, selector: Selector, *, max_active: int
    ) -> dict[str, JSONValue] | Refused | Uncertain:
        """Append a create of ``prompt`` with ``selector`` (decided at one clock sample taken
        after the preflight); return the tools' answer for the new record."""
        async with self.queue:
            if not await self._confirmed("create"):
                return Uncertain()
            made = self._guarded(
                "create", lambda: self._append_create(prompt, selector, max_active)
            )
            if isinstance(made, Refused):
                return made
            if not await self._confirmed("create"):
                return Uncertain(made.id)
            return self._guarded("create", lambda: record_answer(made, self.host.clock.now_ms()))

    def _append_create(self, prompt: str, selector: Selector, max_active: int) -> Record | Refused:
        folded = self.folds.of(self.agent.session)
        if len(folded.active) >= max_active:
            return Refused("too_many_active")
        schedule_id = folded.next_id()
        try:
            record = build_record(schedule_id, prompt, selector, self.host.clock.now_ms())
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
