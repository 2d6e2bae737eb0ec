"""Presentation: the receipt view of a ``schedule/change`` dispatch, at O(1) per receipt.

A dispatch pairs with the nearest preceding create of the same id, searched in its window: an
inherited dispatch (``seq < seed_length``) in ``events[:seq]``, a dispatch the Session owns only in
its own segment ``events[seed_length:seq]`` (so a fork that reused a parent's id never borrows the
parent's create). Walking back from the dispatch, the first ``schedule/change`` of that window
that does not decode, or that ended the id (a delete or an id-only dispatch), makes the receipt
an error instead; the walk passes the id's recurring dispatches (those with ``acceptedAt``), its
acks and its updates, which are then replayed forward from the create: a dispatch the record does
not admit (or its last one) ends the id there, an update replaces the record (one that holds
another id is passed over), and the presented dispatch must be admitted itself. Its
``occurrenceAt`` is what it delivered: a one-shot's ``scheduledAt``, an every dispatch's latest
occurrence at or before its ``acceptedAt`` (so each dispatch of a batch has its own), or a
calendar dispatch's own ``occurrenceAt``. The receipt shows the record as it read when it was
delivered (its prompt, and its ``title`` when it has one).

:class:`ReceiptIndex` gives every answer of that walk from one forward pass: per window it keeps,
for each id, the last change that touched it, and the last change that did not decode, and it
records each dispatch's answer as the pass reaches it. It consumes only the events appended
since its last use. :class:`Receipts` keeps one index per live Session (released with it) and
a few for other logs (a cold Session's history page passes one fresh list for all its entries).
The backward walk itself is kept as the reference in the property tests.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, NotRequired, TypeAlias, TypedDict

from dsh_hookspecs import Event, Session

from ._codec import (
    Ack,
    Create,
    Dispatch,
    Record,
    ScheduleLogError,
    Update,
    brief,
    decode_change,
)
from ._fold import SCHEDULE_CHANGE, check_seed_length, dispatched, log_error
from ._record_fields import DELIVERY_MODE

__all__ = ["ReceiptIndex", "Receipts", "ReminderView", "present_dispatch"]

#: How many logs that are not a tracked live Session's keep their index (most recent first).
RECENT_LOGS: Final = 4


class ReminderView(TypedDict):
    """The presentation view of a dispatched reminder (what ``dsh_event_present`` returns)."""

    scheduleId: str
    prompt: str
    occurrenceAt: str
    deliveryMode: str
    title: NotRequired[str]


#: A dispatch's paired record and the occurrence it delivered, or the message of the error
#: presenting that event raises.
_Answer: TypeAlias = tuple[Record, str] | str


class _Window:
    """What a backward walk from the next event of one window meets first, per id."""

    __slots__ = ("bad", "last")

    def __init__(self) -> None:
        #: id -> (index, the record that change left active (its create, an update that
        #: replaced it, or a recurring dispatch that advanced it) or ``None`` when it ended the
        #: id, the event's own seq).
        self.last: dict[str, tuple[int, Record | None, int]] = {}
        #: (index, error message) of the window's last change that does not decode.
        self.bad: tuple[int, str] | None = None


class ReceiptIndex:
    """The receipt of every ``schedule/change`` of one append-only log, computed in one pass.

    ``ReceiptIndex(events, seed_length)`` has consumed nothing; :meth:`extend` consumes up to an
    index; :meth:`answer` is then O(1) for any consumed index.
    """

    __slots__ = ("_answers", "_events", "_last", "_position", "_window", "seed_length")

    def __init__(self, events: Sequence[Event], seed_length: int) -> None:
        self._events = events
        self.seed_length = seed_length
        self._position = 0
        self._window = _Window()
        #: index -> answer, for each dispatch and each change that does not decode.
        self._answers: dict[int, _Answer] = {}
        #: The last consumed event: the log must still hold it where it was.
        self._last: Event | None = None

    @property
    def position(self) -> int:
        """How many events have been consumed."""
        return self._position

    def covers(self, events: Sequence[Event], seed_length: int) -> bool:
        """This index belongs to ``events`` with ``seed_length``, and the log only grew since
        (a shorter log, or another event where the last consumed one was, is a doubt)."""
        if events is not self._events or seed_length != self.seed_length:
            return False
        position = self._position
        return position == 0 or (len(events) >= position and events[position - 1] is self._last)

    def extend(self, end: int) -> None:
        """Consume ``events[position:end]``."""
        events, window = self._events, self._window
        for index in range(self._position, end):
            if index == self.seed_length:
                window = self._window = _Window()  # the owned segment pairs only within itself
            event = events[index]
            if event.type == SCHEDULE_CHANGE:
                self._consume(window, index, event)
        if end > self._position:
            self._position = end
            self._last = events[end - 1]

    def _consume(self, window: _Window, index: int, event: Event) -> None:
        try:
            change = decode_change(event.data, seq=event.seq)
        except ScheduleLogError as exc:
            self._answers[index] = str(exc)
            window.bad = (index, str(exc))
            return
        if isinstance(change, Ack):
            return  # marks a delivery done: the record a later walk meets is unchanged
        if isinstance(change, Create):
            window.last[change.record.id] = (index, change.record, event.seq)
            return
        if isinstance(change, Dispatch):
            answer, last = self._pair(window, index, change, event.seq)
            self._answers[index] = answer
            if last is not None:
                window.last[change.id] = last
            return
        if isinstance(change, Update):
            # A walk back from a later dispatch passes an update on to what precedes it; when
            # that is the id's active record with nothing undecodable since, the update is what
            # such a walk replays last.
            touched = window.last.get(change.id)
            bad = window.bad
            if (
                touched is not None
                and touched[1] is not None
                and change.record.id == change.id
                and (bad is None or bad[0] < touched[0])
            ):
                window.last[change.id] = (index, change.record, event.seq)
            return
        window.last[change.id] = (index, None, event.seq)

    def _pair(
        self, window: _Window, index: int, change: Dispatch, seq: int
    ) -> tuple[_Answer, tuple[int, Record | None, int] | None]:
        """The answer of a dispatch and what a later walk meets at it (``None``: it walks on).

        An id-only dispatch ends its id whatever its answer; a walk passes an every dispatch
        (``acceptedAt``) that met an error further back, so a later one meets that error too.
        """
        ended = (index, None, seq)
        passes = None if change.accepted_at is not None else ended
        touched = window.last.get(change.id)
        bad = window.bad
        if bad is not None and (touched is None or bad[0] > touched[0]):
            return bad[1], passes
        if touched is None:
            lowest = 0 if index < self.seed_length else self.seed_length
            problem = f"(no create of it at seq {lowest}..{index - 1})"
        elif touched[1] is None:
            problem = f"(ended at seq {touched[2]})"
        else:
            try:
                occurrence_at, left = dispatched(touched[1], change)
            except ScheduleLogError as exc:
                return str(log_error(index, str(exc))), ended
            return (touched[1], occurrence_at), (index, left, seq)
        problem = f"dispatch targets inactive id {brief(change.id)} {problem}"
        return str(log_error(index, problem)), passes

    def answer(self, seq: int) -> ReminderView | None:
        """The receipt of consumed index ``seq`` (see :func:`present_dispatch`)."""
        answer = self._answers.get(seq)
        if answer is None:
            return None
        if isinstance(answer, str):
            raise ScheduleLogError(answer)
        record, occurrence_at = answer
        view: ReminderView = {
            "scheduleId": record.id,
            "prompt": record.prompt,
            "occurrenceAt": occurrence_at,
            "deliveryMode": DELIVERY_MODE,
        }
        if record.title is not None:
            view["title"] = record.title
        return view


def _is_change(events: Sequence[Event], seq: int, seed_length: int) -> bool:
    """Validate a presentation request; ``True`` when ``events[seq]`` is a ``schedule/change``."""
    if type(seq) is not int or not 0 <= seq < len(events):
        raise ScheduleLogError(
            f"dispatch seq {brief(seq)} is not an index of a {len(events)}-event log"
        )
    check_seed_length(seed_length, len(events))
    event = events[seq]
    if event.seq != seq:
        raise ScheduleLogError(f"the event at index {seq} has seq {event.seq}; log not contiguous")
    return event.type == SCHEDULE_CHANGE


def present_dispatch(events: Sequence[Event], seq: int, seed_length: int) -> ReminderView | None:
    """The receipt view of the dispatch at ``events[seq]``, or ``None`` if it is not one.

    One-off: this indexes ``events[:seq + 1]`` for this call (the plugin keeps its indexes in
    :class:`Receipts`). Raises :class:`ScheduleLogError` for an invalid ``seq`` or
    ``seed_length``, a non-contiguous log, an undecodable payload, or a dispatch without a live
    create (see the module docstring for the window).
    """
    if not _is_change(events, seq, seed_length):
        return None
    index = ReceiptIndex(events, seed_length)
    index.extend(seq + 1)
    return index.answer(seq)


class Receipts:
    """The plugin's receipt indexes: one per presented live Session, a few for other logs."""

    __slots__ = ("_live", "_recent")

    def __init__(self) -> None:
        #: Created on a live Session's first presentation, released with the Session.
        self._live: weakref.WeakKeyDictionary[Session, ReceiptIndex] = weakref.WeakKeyDictionary()
        self._recent: OrderedDict[int, ReceiptIndex] = OrderedDict()

    def present(
        self,
        events: Sequence[Event],
        seq: int,
        seed_length: int,
        session: Session | None = None,
    ) -> ReminderView | None:
        """:func:`present_dispatch`, answered from a kept index (``session``: the live Session
        whose log ``events`` is, or ``None`` for a log read from storage)."""
        if not _is_change(events, seq, seed_length):
            return None
        index = self._index(events, seed_length, session)
        if index.position <= seq:
            index.extend(seq + 1)
        return index.answer(seq)

    def _index(
        self, events: Sequence[Event], seed_length: int, session: Session | None
    ) -> ReceiptIndex:
        if session is not None and session.events is events:
            index = self._live.get(session)
            if index is None or not index.covers(events, seed_length):
                index = self._live[session] = ReceiptIndex(events, seed_length)
            return index
        # The index holds ``events``, so its id cannot be reused while it is kept here.
        index = self._recent.pop(id(events), None)
        if index is None or not index.covers(events, seed_length):
            index = ReceiptIndex(events, seed_length)
        self._recent[id(events)] = index
        if len(self._recent) > RECENT_LOGS:
            self._recent.popitem(last=False)
        return index
