"""Receipts from an index: the same answers as the backward walk, at O(1) per receipt.

The reference here is the walk the plugin used to run on every presentation: from the dispatch
back to the nearest same-id create of its window (``events[:seq]`` when inherited,
``events[seed_length:seq]`` when owned), decoding every ``schedule/change`` on the way; a
recurring record's dispatches (``acceptedAt``) and its updates met on the way are replayed
forward from the create (an update holding another id is passed over).
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_hookspecs import Event, Session, SessionHeader
from dsh_schedule import (
    SCHEDULE_CHANGE,
    Create,
    Dispatch,
    Record,
    ReminderView,
    ScheduleLogError,
    Update,
    decode_change,
    present_dispatch,
)
from dsh_schedule._codec import brief
from dsh_schedule._fold import check_seed_length, dispatched, log_error
from dsh_schedule._receipts import RECENT_LOGS, ReceiptIndex, Receipts

PROMPTS = ["Parent", "Child", "Stretch"]
AT = "2026-08-05T12:01:00.000Z"


def reference(events: Sequence[Event], seq: int, seed_length: int) -> ReminderView | None:
    """The backward walk (the presentation before the index), kept as the reference."""
    if type(seq) is not int or not 0 <= seq < len(events):
        raise ScheduleLogError(
            f"dispatch seq {brief(seq)} is not an index of a {len(events)}-event log"
        )
    check_seed_length(seed_length, len(events))
    event = events[seq]
    if event.seq != seq:
        raise ScheduleLogError(f"the event at index {seq} has seq {event.seq}; log not contiguous")
    if event.type != SCHEDULE_CHANGE:
        return None
    dispatch = decode_change(event.data, seq=seq)
    if not isinstance(dispatch, Dispatch):
        return None
    lowest = 0 if seq < seed_length else seed_length
    passed: list[tuple[int, Dispatch | Update]] = []  # the id's recurring dispatches and updates
    for index in range(seq - 1, lowest - 1, -1):
        earlier = events[index]
        if earlier.type != SCHEDULE_CHANGE:
            continue
        change = decode_change(earlier.data, seq=earlier.seq)
        if isinstance(change, Create):
            if change.record.id == dispatch.id:
                return replayed(change, passed, dispatch, seq)
        elif change.id == dispatch.id:
            if isinstance(change, Update) or (
                isinstance(change, Dispatch) and change.accepted_at is not None
            ):
                passed.append((earlier.seq, change))
                continue
            raise log_error(
                seq,
                f"dispatch targets inactive id {brief(dispatch.id)} (ended at seq {earlier.seq})",
            )
    raise log_error(
        seq,
        f"dispatch targets inactive id {brief(dispatch.id)} "
        f"(no create of it at seq {lowest}..{seq - 1})",
    )


def replayed(
    create: Create, passed: list[tuple[int, Dispatch | Update]], dispatch: Dispatch, seq: int
) -> ReminderView:
    """The view of ``dispatch`` after replaying the passed recurring dispatches and updates from
    the create."""
    record: Record | None = create.record
    for earlier_seq, earlier in reversed(passed):
        assert record is not None
        if isinstance(earlier, Update):
            if earlier.record.id == earlier.id:
                record = earlier.record
            continue
        try:
            record = dispatched(record, earlier)[1]
        except ScheduleLogError:
            record = None
        if record is None:
            raise log_error(
                seq,
                f"dispatch targets inactive id {brief(dispatch.id)} (ended at seq {earlier_seq})",
            )
    assert record is not None
    try:
        occurrence_at = dispatched(record, dispatch)[0]
    except ScheduleLogError as exc:
        raise log_error(seq, str(exc)) from None
    view: ReminderView = {
        "scheduleId": dispatch.id,
        "prompt": record.prompt,
        "occurrenceAt": occurrence_at,
        "deliveryMode": "session-local",
    }
    if record.title is not None:
        view["title"] = record.title
    return view


def outcome(present: Any, events: Sequence[Event], seq: Any, seed_length: Any) -> object:
    """The view, or ``("raises", message)``: both answers must agree on refusing too."""
    try:
        return present(events, seq, seed_length)
    except ScheduleLogError as exc:
        return ("raises", str(exc))


def record_data(
    schedule_id: str, prompt: str, kind: str = "after", title: str | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {"id": schedule_id, "kind": kind, "prompt": prompt}
    if kind == "after":
        record["afterSeconds"] = 60
    elif kind == "every":
        record["everySeconds"] = 300
    elif kind == "daily":
        record.update(time="12:01:00.000", timeZone="UTC")
    elif kind == "cron":
        record.update(expression="1 12 * * *", timeZone="UTC")
    record["scheduledAt"] = AT
    if title is not None:
        record["title"] = title
    return record


def create(
    schedule_id: str, prompt: str, kind: str = "after", title: str | None = None
) -> dict[str, Any]:
    return {
        "version": 1,
        "operation": "create",
        "schedule": record_data(schedule_id, prompt, kind, title),
    }


def update(schedule_id: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operation": "update", "id": schedule_id, "schedule": record}


def ended(
    operation: str,
    schedule_id: str,
    accepted_at: str | None = None,
    next_at: str | bool | None = False,
) -> dict[str, Any]:
    """A delete or dispatch; ``next_at`` other than ``False`` makes a calendar dispatch (of the
    occurrence at ``AT``)."""
    data: dict[str, Any] = {"version": 1, "operation": operation, "id": schedule_id}
    if accepted_at is not None:
        data["acceptedAt"] = accepted_at
    if next_at is not False:
        data["occurrenceAt"] = AT
        data["nextAt"] = next_at
    return data


ids = st.sampled_from(["schedule-1", "schedule-2", "x"])
#: Decision times: before AT, on it, between targets, later, at the end of year 9999.
ACCEPTED = [
    "2026-08-05T12:00:00.000Z",
    AT,
    "2026-08-05T12:08:30.000Z",
    "2026-08-05T13:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
]
KINDS = ["after", "at", "every", "daily", "cron"]
titles = st.sampled_from([None, None, "Title"])
changes = st.one_of(
    st.builds(create, ids, st.sampled_from(PROMPTS), st.sampled_from(KINDS), titles),
    st.builds(
        lambda schedule_id, held, prompt, kind: update(
            schedule_id, record_data(held or schedule_id, prompt, kind)
        ),
        ids,
        st.sampled_from([None, None, None, "x"]),  # now and then a record of another id
        st.sampled_from(PROMPTS),
        st.sampled_from(KINDS),
    ),
    st.builds(ended, st.sampled_from(["dispatch", "dispatch", "delete"]), ids),
    st.builds(ended, st.just("dispatch"), ids, st.sampled_from(ACCEPTED)),
    st.builds(
        ended,
        st.just("dispatch"),
        ids,
        st.sampled_from(ACCEPTED),
        st.sampled_from([None, "2026-08-06T12:01:00.000Z", AT]),
    ),
    st.sampled_from([{"junk": True}, ended("dispatch", ""), {"version": 2}]),  # malformed
)
entries = st.one_of(
    changes.map(lambda data: (SCHEDULE_CHANGE, data)),
    st.sampled_from([("user/message", {"text": "hi"}), ("session/end-seed", {})]),
)


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[Event], int]:
    """A log of forks: generations of a few entries each, the last boundary its seedLength;
    rarely an event whose own seq is off (a non-contiguous log)."""
    events: list[Event] = []
    seed_length = 0
    for _ in range(draw(st.integers(1, 3))):
        seed_length = len(events)
        if events:
            events.append(Event(seq=len(events), type="session/end-seed", time=0, data={}))
        for kind, data in draw(st.lists(entries, max_size=8)):
            seq = len(events) + (1 if draw(st.integers(0, 40)) == 0 else 0)
            events.append(Event(seq=seq, type=kind, time=0, data=data))
    return events, draw(st.sampled_from([seed_length, 0, len(events)]))


@settings(max_examples=400, deadline=None)
@given(logs())
def test_the_index_gives_the_walks_answer_for_every_event(log: tuple[list[Event], int]) -> None:
    events, seed_length = log
    receipts = Receipts()
    for seq in range(len(events)):
        expected = outcome(reference, events, seq, seed_length)
        assert outcome(present_dispatch, events, seq, seed_length) == expected
        assert outcome(receipts.present, events, seq, seed_length) == expected
    for seq in reversed(range(len(events))):  # a warm index, asked out of order
        assert outcome(receipts.present, events, seq, seed_length) == outcome(
            reference, events, seq, seed_length
        )


@settings(max_examples=200, deadline=None)
@given(logs(), st.data())
def test_a_kept_index_follows_an_append_only_log(
    log: tuple[list[Event], int], data: st.DataObject
) -> None:
    events, seed_length = log
    growing: list[Event] = events[: seed_length + 1]
    receipts = Receipts()
    while True:
        seq = data.draw(st.integers(0, len(growing) - 1)) if growing else 0
        if growing and seed_length <= len(growing):
            assert outcome(receipts.present, growing, seq, seed_length) == outcome(
                reference, growing, seq, seed_length
            )
        if len(growing) == len(events):
            break
        growing.extend(events[len(growing) : len(growing) + data.draw(st.integers(1, 3))])


@settings(max_examples=100, deadline=None)
@given(logs(), st.sampled_from([-1, True, None, 1.5, "0"]), st.integers(-2, 2))
def test_invalid_requests_are_refused_alike(
    log: tuple[list[Event], int], bad: object, offset: int
) -> None:
    events, seed_length = log
    receipts = Receipts()
    for seq, length in ((bad, seed_length), (len(events) + offset, seed_length), (0, bad)):
        expected = outcome(reference, events, seq, length)
        assert outcome(present_dispatch, events, seq, length) == expected
        assert outcome(receipts.present, events, seq, length) == expected


def log_of(*items: tuple[str, Any]) -> list[Event]:
    return [Event(seq=i, type=kind, time=0, data=data) for i, (kind, data) in enumerate(items)]


def receipt(prompt: str, schedule_id: str = "schedule-1") -> ReminderView:
    return {
        "scheduleId": schedule_id,
        "prompt": prompt,
        "occurrenceAt": AT,
        "deliveryMode": "session-local",
    }


PAIR = (
    (SCHEDULE_CHANGE, create("schedule-1", "Stretch")),
    ("user/message", {"text": "hi"}),
    (SCHEDULE_CHANGE, ended("dispatch", "schedule-1")),
)


def test_an_index_consumes_only_what_was_appended() -> None:
    events = log_of(*PAIR)
    index = ReceiptIndex(events, 0)
    assert index.covers(events, 0)
    assert not index.covers(list(events), 0)  # another list
    assert not index.covers(events, 1)  # another seedLength
    index.extend(2)
    assert index.position == 2
    index.extend(2)  # nothing new
    assert index.position == 2
    index.extend(3)
    assert index.answer(2) == receipt("Stretch")
    assert index.answer(1) is None
    assert index.covers(events, 0)
    events[2] = Event(seq=2, type="user/message", time=0, data={})  # not append-only: a doubt
    assert not index.covers(events, 0)
    del events[1:]
    assert not index.covers(events, 0)  # shorter than what was consumed


class FakeSession:
    """A live Session as the plugin sees it: a stable ``events`` object, weakly referenced."""

    def __init__(self, events: list[Event], *, stable: bool = True) -> None:
        self.id = "s"
        self.header = SessionHeader(version=1, id="s", created_at=0)
        self._events = events
        self._stable = stable

    @property
    def events(self) -> Sequence[Event]:
        return self._events if self._stable else tuple(self._events)


def test_a_live_session_keeps_its_index_for_its_lifetime() -> None:
    events = log_of(*PAIR)
    session = FakeSession(events)
    receipts = Receipts()
    live = cast("Session", session)
    assert receipts.present(events, 1, 0, live) is None  # a create: no receipt, no index yet
    assert len(receipts._live) == 0
    assert receipts.present(events, 2, 0, live) == receipt("Stretch")
    (index,) = receipts._live.values()
    events.append(Event(seq=3, type=SCHEDULE_CHANGE, time=0, data=create("schedule-2", "Later")))
    events.append(Event(seq=4, type=SCHEDULE_CHANGE, time=0, data=ended("dispatch", "schedule-2")))
    assert receipts.present(events, 4, 0, live) == receipt("Later", "schedule-2")
    assert list(receipts._live.values()) == [index]  # the same index, extended
    assert index.position == 5
    assert receipts._recent == {}  # a live Session's log never takes a place among the recent ones
    assert receipts.present(events, 4, 2, live) == receipt("Later", "schedule-2")  # seedLength 2
    assert list(receipts._live.values()) != [index]  # ... is another index
    del session, live
    gc.collect()
    assert len(receipts._live) == 0


def test_a_log_that_is_not_the_sessions_own_events_is_served_from_the_recent_logs() -> None:
    session = FakeSession(log_of(*PAIR), stable=False)
    receipts = Receipts()
    events = session.events
    assert receipts.present(events, 2, 0, cast("Session", session)) == receipt("Stretch")
    assert len(receipts._recent) == 1
    assert len(receipts._live) == 0


def test_a_cold_history_page_indexes_its_list_once_and_only_a_few_lists_are_kept() -> None:
    receipts = Receipts()
    page = log_of(*PAIR)
    assert receipts.present(page, 2, 0) == receipt("Stretch")
    (index,) = receipts._recent.values()
    assert receipts.present(page, 0, 0) is None
    assert receipts.present(page, 2, 0) == receipt("Stretch")
    assert list(receipts._recent.values()) == [index]  # one index for the whole page
    pages = [log_of(*PAIR) for _ in range(RECENT_LOGS)]
    for other in pages:
        assert receipts.present(other, 2, 0) == receipt("Stretch")
    assert len(receipts._recent) == RECENT_LOGS
    assert index not in receipts._recent.values()  # the oldest list was let go
    page[2] = Event(seq=2, type=SCHEDULE_CHANGE, time=0, data=ended("delete", "schedule-1"))
    assert receipts.present(pages[-1], 2, 0) == receipt("Stretch")  # the latest stays kept


def test_the_index_raises_what_the_walk_raises() -> None:
    events = log_of(
        (SCHEDULE_CHANGE, create("schedule-1", "Stretch")),
        (SCHEDULE_CHANGE, {"junk": True}),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1")),
        (SCHEDULE_CHANGE, create("schedule-1", "Again")),
        (SCHEDULE_CHANGE, ended("delete", "schedule-1")),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1")),
        (SCHEDULE_CHANGE, ended("dispatch", "never")),
    )
    receipts = Receipts()
    cases = ((2, "at seq 1: "), (5, r"\(ended at seq 4\)"), (6, "at seq 1: "), (6, "no create"))
    for seq, problem in cases:
        seed_length = 2 if problem == "no create" else 0  # past the junk: nothing to meet
        with pytest.raises(ScheduleLogError, match=problem):
            receipts.present(events, seq, seed_length)
        with pytest.raises(ScheduleLogError, match=problem):
            reference(events, seq, seed_length)


def test_a_receipt_shows_the_reminder_as_it_read_when_it_was_delivered() -> None:
    events = log_of(
        (SCHEDULE_CHANGE, create("schedule-1", "Stretch", "daily")),
        (SCHEDULE_CHANGE, update("schedule-1", record_data("schedule-1", "Walk", "daily", "Go"))),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1", ACCEPTED[2], ACCEPTED[3])),
        (SCHEDULE_CHANGE, update("schedule-1", record_data("schedule-1", "Run", "daily"))),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1", ACCEPTED[3], None)),
    )
    first: ReminderView = {**receipt("Walk"), "title": "Go"}
    assert present_dispatch(events, 2, 0) == first == reference(events, 2, 0)
    # The occurrence is the one the calendar dispatch froze; the edit since shows in the next.
    assert present_dispatch(events, 4, 0) == receipt("Run") == reference(events, 4, 0)


def test_an_update_that_does_not_apply_is_passed_over_alike() -> None:
    events = log_of(
        (SCHEDULE_CHANGE, create("schedule-1", "Stretch")),
        (SCHEDULE_CHANGE, update("schedule-1", record_data("other", "Walk"))),  # another id
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1")),
        (SCHEDULE_CHANGE, update("gone", record_data("gone", "Walk"))),  # nothing to update
        (SCHEDULE_CHANGE, create("schedule-2", "Stretch")),
        (SCHEDULE_CHANGE, {"junk": True}),
        (SCHEDULE_CHANGE, update("schedule-2", record_data("schedule-2", "Walk"))),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-2")),
        (SCHEDULE_CHANGE, ended("delete", "schedule-1")),
        (SCHEDULE_CHANGE, update("schedule-1", record_data("schedule-1", "Walk"))),
        (SCHEDULE_CHANGE, ended("dispatch", "schedule-1")),
    )
    assert present_dispatch(events, 2, 0) == receipt("Stretch") == reference(events, 2, 0)
    # Past undecodable data the update is not trusted: the walk meets the junk first.
    for seq, problem in ((7, "at seq 5: "), (10, r"\(ended at seq 8\)")):
        with pytest.raises(ScheduleLogError, match=problem):
            present_dispatch(events, seq, 0)
        with pytest.raises(ScheduleLogError, match=problem):
            reference(events, seq, 0)
