"""Folding a Session log's ``schedule/change`` events into the active reminders.

There is one walk, :meth:`IncrementalFold.walk`: it folds the events appended since the fold's
last use, one ``schedule/change`` at a time. :func:`fold` walks the owned suffix
``events[seed_length:]`` from scratch; :class:`IncrementalFold` is the form the live owner and the
tools keep per Session object (in a :class:`FoldCache`): each :meth:`~IncrementalFold.apply`
consumes only what was appended since the last one, and agrees with :func:`fold` on every prefix
of an append-only log however the log was cut into appends (property-tested).

Transition rules (any violation makes the log corrupt):

* create: the id must never have been seen in the owned suffix ("was reused");
* update / delete / dispatch: the id must be active ("targets inactive id") - so double
  dispatch, dispatch after delete and delete of an unknown id are all corruption;
* an update's record carries the id it replaces, and takes that record's create-order position;
* a dispatch of a one-shot (after, at) record must not carry ``acceptedAt`` and ends it; a
  dispatch of an every record must carry it, not before the record's ``scheduledAt``, and moves
  the record (same id, same create-order position) to its next target
  (:func:`~._every.resolve_every_occurrence`), or ends it when that target is not representable;
* a dispatch of a calendar (daily, weekly, cron) record must carry ``acceptedAt`` (not before
  its ``scheduledAt``), the ``occurrenceAt`` it delivered (from its ``scheduledAt`` through
  ``acceptedAt``) and ``nextAt`` (after ``acceptedAt``, or ``null``); it moves the record to
  ``nextAt``, or ends it on ``null``. No zone is consulted: the dispatch froze both;
* each dispatch delivers one occurrence ``(id, occurrenceAt)`` (:class:`Delivery`, kept for the
  fold's life whether the id stays active or not); an ack must name a delivered occurrence that
  is not done yet, and makes it done;
* a create whose record carries ``snoozedFrom`` (a snooze) must name a delivered occurrence that
  is neither done nor snoozed yet, and makes it snoozed (until the new record's ``scheduledAt``);
* an update keeps the record's ``snoozedFrom`` or drops it, never adds or changes one.

Events before ``seed_length`` (a fork's inherited prefix) are not decoded at all.
"""

import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Final, NoReturn, Protocol, TypeAlias

import attrs

from dsh_hookspecs import Event, Session

from ._codec import (
    Ack,
    AfterRecord,
    AtRecord,
    Create,
    Dispatch,
    EveryRecord,
    Record,
    ScheduleChange,
    ScheduleLogError,
    Update,
    brief,
    decode_change,
    format_instant,
    parse_instant,
)
from ._every import resolve_every_occurrence

__all__ = [
    "SCHEDULE_CHANGE",
    "Delivery",
    "FoldCache",
    "FoldResult",
    "FoldWatcher",
    "IncrementalFold",
    "Step",
    "allocate_id",
    "apply_change",
    "check_seed_length",
    "dispatched",
    "earliest",
    "fold",
    "log_error",
    "violation",
]

#: The durable event type this plugin owns.
SCHEDULE_CHANGE: Final = "schedule/change"

#: One folded ``schedule/change``: its event, its decoded change and the record the change acts
#: on (the record a create adds, the active record an update replaces or a delete or dispatch
#: ends or moves, or the record as the acked occurrence delivered it).
Step: TypeAlias = tuple[Event, ScheduleChange, Record]


@attrs.define(slots=True)
class Delivery:
    """One delivered occurrence ``(id, occurrenceAt)`` of the owned stream: ``record`` as its
    (latest) dispatch delivered it; ``done`` once acked; ``snooze`` the id of the reminder
    that snoozed it and ``until`` that reminder's target when it was created (``None``: not
    snoozed)."""

    record: Record
    done: bool = False
    snooze: str | None = None
    until: str | None = None


#: Delivered occurrences by ``(id, occurrenceAt)``.
Deliveries: TypeAlias = Mapping[tuple[str, str], Delivery]
_NO_DELIVERIES: Final[Deliveries] = {}


@attrs.frozen(kw_only=True)
class FoldResult:
    """The state of an owned ``schedule/change`` stream.

    ``active`` is in create order; ``seen_ids`` holds every id ever created in the owned suffix
    (active, deleted or dispatched); ``created_count`` is the number of creates.
    """

    active: tuple[Record, ...]
    seen_ids: frozenset[str]
    created_count: int


def violation(
    change: ScheduleChange,
    active: Mapping[str, Record],
    seen: Collection[str],
    deliveries: Deliveries = _NO_DELIVERIES,
) -> str | None:
    """Why ``change`` cannot follow a stream in this state, or ``None`` if it can."""
    if isinstance(change, Create):
        if change.record.id in seen:
            return f"id {brief(change.record.id)} was reused"
        snoozed = change.record.snoozed_from if isinstance(change.record, AtRecord) else None
        if snoozed is None:
            return None
        return _occurrence_problem(
            "snooze", deliveries.get((snoozed.id, snoozed.occurrence_at)), snoozed.id
        )
    if isinstance(change, Ack):
        delivery = deliveries.get((change.id, change.occurrence_at))
        return _occurrence_problem("ack", delivery, change.id)
    record = active.get(change.id)
    if record is None:
        operation = type(change).__name__.lower()
        return f"{operation} targets inactive id {brief(change.id)}"
    if isinstance(change, Update):
        if change.record.id != change.id:
            return f"update of id {brief(change.id)} holds a record of id {brief(change.record.id)}"
        now = change.record.snoozed_from if isinstance(change.record, AtRecord) else None
        if now is not None and now != _snoozed_from(record):
            return f"update of id {brief(change.id)} cannot add or change snoozedFrom"
    if isinstance(change, Dispatch):
        try:
            dispatched(record, change)
        except ScheduleLogError as exc:
            return str(exc)
    return None


def _snoozed_from(record: Record) -> object:
    return record.snoozed_from if isinstance(record, AtRecord) else None


def _occurrence_problem(operation: str, delivery: Delivery | None, schedule_id: str) -> str | None:
    """Why ``operation`` (ack or snooze) cannot act on ``delivery``, or ``None``."""
    named = f"(id {brief(schedule_id)})"
    if delivery is None:
        return f"{operation} targets an occurrence that was not delivered {named}"
    if delivery.done:
        return f"{operation} targets an occurrence already done {named}"
    if operation == "snooze" and delivery.snooze is not None:
        return f"snooze targets an occurrence already snoozed {named}"
    return None


def dispatched(record: Record, change: Dispatch) -> tuple[str, Record | None]:
    """What a dispatch of the active ``record`` delivers and leaves: the occurrence (canonical
    instant) and the record that stays active, or ``None`` when the dispatch ends it.

    A one-shot's occurrence is its ``scheduledAt``; an every record's is the latest target at or
    before ``acceptedAt``; a calendar record's is the dispatch's ``occurrenceAt``. Raises
    :class:`ScheduleLogError` (the problem, naming the id) for a dispatch the record does not
    admit.
    """
    named = f"(id {brief(change.id)})"
    if isinstance(record, AfterRecord | AtRecord):
        if change.accepted_at is not None:
            raise ScheduleLogError(f"one-shot dispatch must not contain acceptedAt {named}")
        return record.scheduled_at, None
    if change.accepted_at is None:
        raise ScheduleLogError(f"{record.kind} dispatch must contain acceptedAt {named}")
    if not isinstance(record, EveryRecord):
        return _calendar_dispatched(record, change, change.accepted_at, named)
    if change.calendar:
        raise ScheduleLogError(f"every dispatch must not contain occurrenceAt or nextAt {named}")
    try:
        occurrence = resolve_every_occurrence(record, parse_instant(change.accepted_at))
    except ScheduleLogError as exc:
        raise ScheduleLogError(f"{exc} {named}") from None
    following = occurrence.next_ms
    successor = (
        None if following is None else attrs.evolve(record, scheduled_at=format_instant(following))
    )
    return format_instant(occurrence.occurrence_ms), successor


def _calendar_dispatched(
    record: Record, change: Dispatch, accepted_at: str, named: str
) -> tuple[str, Record | None]:
    kind = record.kind
    if change.occurrence_at is None:
        raise ScheduleLogError(f"{kind} dispatch must contain occurrenceAt and nextAt {named}")
    accepted = parse_instant(accepted_at)
    target = parse_instant(record.scheduled_at)
    if accepted < target:
        raise ScheduleLogError(f"{kind} dispatch cannot precede the active scheduledAt {named}")
    if not target <= parse_instant(change.occurrence_at) <= accepted:
        raise ScheduleLogError(
            f"{kind} occurrenceAt must lie from the active scheduledAt through acceptedAt {named}"
        )
    following = change.next_at
    if following is None:
        return change.occurrence_at, None
    if parse_instant(following) <= accepted:
        raise ScheduleLogError(f"{kind} nextAt must come after acceptedAt {named}")
    return change.occurrence_at, attrs.evolve(record, scheduled_at=following)


def apply_change(
    change: ScheduleChange,
    active: dict[str, Record],
    deliveries: dict[tuple[str, str], Delivery] | None,
) -> str | None:
    """Apply a change that :func:`violation` accepted to ``active`` and to the delivered
    occurrences ``deliveries`` (``None`` only while there are none, and never for a dispatch);
    the id it ended, if it ended one (a delete, a one-shot's dispatch or a recurring record's
    last dispatch)."""
    if isinstance(change, Ack):
        assert deliveries is not None  # violation() found the occurrence there
        deliveries[change.id, change.occurrence_at].done = True
        return None
    if isinstance(change, Create):
        record = change.record
        active[record.id] = record
        snoozed = record.snoozed_from if isinstance(record, AtRecord) else None
        if snoozed is not None:
            assert deliveries is not None  # violation() found the occurrence there
            delivery = deliveries[snoozed.id, snoozed.occurrence_at]
            delivery.snooze, delivery.until = record.id, record.scheduled_at
        return None
    if isinstance(change, Update):
        # Reassigning an existing key keeps its create-order position.
        active[change.id] = change.record
        return None
    if isinstance(change, Dispatch):
        record = active[change.id]
        occurrence_at, successor = dispatched(record, change)
        assert deliveries is not None  # the walk keeps them from the first dispatch on
        again = deliveries.get((change.id, occurrence_at))
        if again is None:
            deliveries[change.id, occurrence_at] = Delivery(record)
        else:  # the same occurrence again (an edit moved the record back): its state stays
            again.record = record
        if successor is not None:
            active[change.id] = successor
            return None
    del active[change.id]
    return change.id


def log_error(seq: int, problem: str) -> ScheduleLogError:
    """The error for a ``schedule/change`` at ``seq`` that breaks the stream's rules."""
    return ScheduleLogError(f"schedule/change at seq {seq}: {problem}")


def check_seed_length(seed_length: int, length: int) -> None:
    """Raise :class:`ScheduleLogError` unless ``seed_length`` is an int in ``[0, length]``."""
    if type(seed_length) is not int or not 0 <= seed_length <= length:
        raise ScheduleLogError(
            f"seedLength {brief(seed_length)} is not an integer in [0, {length}]"
        )


def fold(events: Sequence[Event], seed_length: int) -> FoldResult:
    """Fold ``events[seed_length:]`` from scratch.

    Raises :class:`ScheduleLogError` for an invalid ``seed_length``, an owned ``schedule/change``
    payload that does not decode, or an invalid transition.
    """
    check_seed_length(seed_length, len(events))
    folded = IncrementalFold(seed_length)
    folded.apply(events)
    return folded.result()


class IncrementalFold:
    """:func:`fold` kept up to date one appended event at a time.

    ``IncrementalFold(seed_length)`` starts at :attr:`position` ``== seed_length``;
    :meth:`apply` is handed the whole (append-only) log each time and folds only
    ``events[position:]``. The first failure makes the fold **corrupt**: a
    :class:`ScheduleLogError` with that same message is raised again by every later
    :meth:`apply`, :meth:`check`, :meth:`result` and state accessor (a corrupt stream never
    becomes valid by appending); :attr:`error` holds it (without a traceback). ``seed_length``
    is validated like :func:`fold` does: its type at once (reported on first use), its range on
    the first :meth:`apply`.
    """

    __slots__ = ("_active", "_checked", "_deliveries", "_error", "_position", "_retired")

    def __init__(self, seed_length: int) -> None:
        self._active: dict[str, Record] = {}
        # The delivered occurrences; allocated on the first dispatch (most folds hold none).
        self._deliveries: dict[tuple[str, str], Delivery] | None = None
        # Ids that were created and are no longer active; allocated on the first retirement so
        # that a fresh fold (one per idle Session) holds a single dict.
        self._retired: set[str] | None = None
        # The last candidate that check() accepted, with its decoded change: apply() reuses it
        # when that very event object was appended (the usual validate-then-append path).
        self._checked: tuple[Event, ScheduleChange] | None = None
        self._error: ScheduleLogError | None = None
        if type(seed_length) is int and seed_length >= 0:
            self._position = seed_length
        else:
            self._position = 0
            self._error = ScheduleLogError(
                f"seedLength {brief(seed_length)} is not a non-negative integer"
            )

    def __repr__(self) -> str:
        state = "corrupt" if self._error is not None else f"{len(self._active)} active"
        return f"<IncrementalFold position={self._position} {state}>"

    @property
    def position(self) -> int:
        """How many log events have been consumed (the next event's index)."""
        return self._position

    @property
    def error(self) -> ScheduleLogError | None:
        """The sticky error once the fold is corrupt, else ``None``."""
        return self._error

    def _fail(self, error: ScheduleLogError) -> NoReturn:
        # Keep a pristine copy: a stored traceback would pin the failing call's frames - and
        # through them e.g. the Session a cache keys this fold by - for the fold's lifetime.
        self._error = ScheduleLogError(*error.args)
        raise error

    def _ensure_sound(self) -> None:
        if self._error is not None:
            raise ScheduleLogError(*self._error.args)

    def apply(self, events: Sequence[Event]) -> bool:
        """Fold the events appended since the last call (``events[position:]``); ``True`` when
        one of them was a ``schedule/change`` (the active records changed)."""
        changed = False
        for _ in self.walk(events):
            changed = True
        return changed

    def steps(
        self, events: Sequence[Event], known: Mapping[int, ScheduleChange] | None = None
    ) -> list[Step]:
        """Fold ``events[position:]`` like :meth:`apply`; each ``schedule/change`` folded, with
        the record it acted on, in log order. ``known`` (seq -> change) holds the changes of
        events the caller encoded itself (:func:`~._codec.encode_change`): those are not decoded
        again, and are still checked by the transition rules."""
        return [
            (event, change, self._acted_on(change)) for event, change in self.walk(events, known)
        ]

    def _acted_on(self, change: ScheduleChange) -> Record:
        """The record ``change`` (accepted, not applied yet) acts on."""
        if isinstance(change, Create):
            return change.record
        if isinstance(change, Ack):
            assert self._deliveries is not None  # the ack was accepted: its occurrence is kept
            return self._deliveries[change.id, change.occurrence_at].record
        return self._active[change.id]

    def walk(
        self, events: Sequence[Event], known: Mapping[int, ScheduleChange] | None = None
    ) -> Iterator[tuple[Event, ScheduleChange]]:
        """Fold ``events[position:]`` (the whole append-only log is handed over each time) by the
        transition rules, one ``schedule/change`` at a time.

        Yields each ``schedule/change`` event with its decoded change *before* the change is
        applied, so a caller reads (:meth:`get`, :attr:`active`) the state it applies to. Events
        of other types are stepped over. A caller that stops early leaves the fold consistent:
        :attr:`position` is then the yielded event's index, which was not applied.
        """
        self._ensure_sound()
        end = len(events)
        if end < self._position:
            self._fail(
                ScheduleLogError(
                    f"the log has {end} events but {self._position} were already folded "
                    "(or lie before seedLength); a Session log is append-only"
                )
            )
        checked, self._checked = self._checked, None
        active, seen = self._active, self._seen_view()
        for index in range(self._position, end):
            event = events[index]
            if event.type != SCHEDULE_CHANGE:
                continue
            if checked is not None and checked[0] is event:
                change = checked[1]
            elif known is not None and event.seq in known:
                change = known[event.seq]
            else:
                try:
                    change = decode_change(event.data, seq=event.seq)
                except ScheduleLogError as exc:
                    self._fail(exc)
            problem = violation(change, active, seen, self._deliveries or _NO_DELIVERIES)
            if problem is not None:
                self._fail(log_error(event.seq, problem))
            self._position = index
            yield event, change
            deliveries = self._deliveries
            if deliveries is None and isinstance(change, Dispatch):
                deliveries = self._deliveries = {}
            retired = apply_change(change, active, deliveries)
            if retired is not None:
                if self._retired is None:
                    self._retired = set()
                    seen = self._seen_view()
                self._retired.add(retired)
        self._position = end

    def _seen_view(self) -> Collection[str]:
        """Every id created so far: the active ones and the retired ones."""
        retired = self._retired
        return self._active if retired is None else _SeenIds(self._active, retired)

    def check(self, candidate: Event) -> None:
        """Raise :class:`ScheduleLogError` if appending ``candidate`` would corrupt the stream.

        Call :meth:`apply` with the current log first: ``candidate.seq`` must equal
        :attr:`position`. Nothing is mutated. A non-``schedule/change`` candidate passes unless
        the fold is already corrupt (a Session host should only validate ``schedule/change``
        candidates, so a corrupt schedule stream never blocks unrelated events).
        """
        self._ensure_sound()
        if candidate.seq != self._position:
            raise ScheduleLogError(
                f"candidate seq {brief(candidate.seq)} is not the next seq {self._position}; "
                "apply the current log first"
            )
        if candidate.type != SCHEDULE_CHANGE:
            return
        change = decode_change(candidate.data, seq=candidate.seq)
        deliveries = self._deliveries or _NO_DELIVERIES
        problem = violation(change, self._active, self._seen_view(), deliveries)
        if problem is not None:
            raise log_error(candidate.seq, problem)
        self._checked = (candidate, change)

    @property
    def active(self) -> tuple[Record, ...]:
        """Active records in create order."""
        self._ensure_sound()
        return tuple(self._active.values())

    def get(self, schedule_id: str) -> Record | None:
        """The active record with this id, or ``None``."""
        self._ensure_sound()
        return self._active.get(schedule_id)

    def delivery(self, schedule_id: str, occurrence_at: str) -> Delivery | None:
        """The delivered occurrence ``(schedule_id, occurrence_at)`` of the owned stream, or
        ``None`` when no dispatch delivered it (the caller must not change it)."""
        self._ensure_sound()
        deliveries = self._deliveries
        return None if deliveries is None else deliveries.get((schedule_id, occurrence_at))

    @property
    def seen_ids(self) -> frozenset[str]:
        """Every id created in the owned suffix so far."""
        self._ensure_sound()
        return frozenset(self._seen_view())

    @property
    def created_count(self) -> int:
        """How many creates the owned suffix holds so far."""
        self._ensure_sound()
        return len(self._seen_view())

    def next_id(self) -> str:
        """:func:`allocate_id` for the current state, without copying the seen ids."""
        self._ensure_sound()
        seen = self._seen_view()
        return allocate_id(seen, len(seen))

    def result(self) -> FoldResult:
        """A frozen snapshot, equal to ``fold(log[:position], seed_length)``."""
        self._ensure_sound()
        seen = self._seen_view()
        return FoldResult(
            active=tuple(self._active.values()),
            seen_ids=frozenset(seen),
            created_count=len(seen),
        )


class FoldWatcher(Protocol):
    """Told ``(session, fold, steps, fresh)`` by a :class:`FoldCache` each time the active
    records of ``session`` moved: ``steps`` are the changes just folded (log order, already
    applied to ``fold``); ``fresh`` says the fold was built anew (the Session was just opened,
    or its log was taken back), so ``steps`` hold its whole owned stream and the watcher compares
    its standing output with the whole fold."""

    def __call__(
        self, session: Session, folded: IncrementalFold, steps: Sequence[Step], fresh: bool
    ) -> None: ...


class FoldCache:
    """One :class:`IncrementalFold` per exact Session object, shared by tools, owner and the
    invariant companion; each use folds only what was appended since the last one.

    ``watchers`` are told (:class:`FoldWatcher`) whenever :meth:`of` built a fold or folded a
    ``schedule/change``: the one place where a Session's active records move.
    """

    __slots__ = ("_folds", "watchers")

    def __init__(self) -> None:
        self._folds: weakref.WeakKeyDictionary[Session, IncrementalFold] = (
            weakref.WeakKeyDictionary()
        )
        self.watchers: tuple[FoldWatcher, ...] = ()

    def of(self, session: Session) -> IncrementalFold:
        """The up-to-date fold of ``session``; raises :class:`ScheduleLogError` when corrupt.

        A log shorter than what was folded (the host took back an all-or-nothing append whose
        later event was refused) is a doubt: the fold is rebuilt from ``seedLength``.
        """
        folded = self._folds.get(session)
        fresh = folded is None or len(session.events) < folded.position
        if folded is None or fresh:
            folded = IncrementalFold(session.header.owned_from)
            self._folds[session] = folded
        steps = folded.steps(session.events)
        if fresh or steps:
            for watcher in self.watchers:
                watcher(session, folded, steps, fresh)
        return folded


class _SeenIds(Collection[str]):
    """The union of the active ids and the retired ids, without copying either."""

    __slots__ = ("_active", "_retired")

    def __init__(self, active: Mapping[str, Record], retired: set[str]) -> None:
        self._active = active
        self._retired = retired

    def __contains__(self, item: object) -> bool:
        return item in self._active or item in self._retired

    def __len__(self) -> int:
        return len(self._active) + len(self._retired)

    def __iter__(self) -> Iterator[str]:
        yield from self._active
        yield from self._retired


def allocate_id(seen_ids: Collection[str], created_count: int) -> str:
    """The next readable id: ``schedule-N`` from ``created_count + 1``, skipping every seen id."""
    if type(created_count) is not int or created_count < 0:
        raise ValueError(f"created_count {created_count!r} is not a non-negative integer")
    number = created_count + 1
    while f"schedule-{number}" in seen_ids:
        number += 1
    return f"schedule-{number}"


def earliest(active: Iterable[Record]) -> Record | None:
    """The record with the earliest ``scheduled_at``; ties go to the first in create order."""
    best: Record | None = None
    best_at = 0
    for record in active:
        at = parse_instant(record.scheduled_at)
        if best is None or at < best_at:
            best, best_at = record, at
    return best
