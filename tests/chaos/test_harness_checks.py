"""The crash harness detects what it claims to: each invariant is broken on purpose in a real
SQLite store (written through the real backend) and the lane's checks must report it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_hookspecs import Event, SessionHeader
from dsh_host.persistence import SQLiteBackend, Write
from dsh_schedule import AfterRecord, Create, Dispatch, encode_change, reminder_framing

from .harness import BrowserView, Lane, Receipt, Success, install_plugin

pytestmark = pytest.mark.chaos

SESSION = "s" * 32
SOURCE = {"kind": "plugin", "plugin": "schedule"}
RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt="stretch",
    after_seconds=5,
    scheduled_at="2026-08-05T12:00:05.000Z",
)
VIEW = {
    "for": "event",
    "view": {
        "scheduleId": "schedule-1",
        "prompt": "stretch",
        "occurrenceAt": "2026-08-05T12:00:05.000Z",
        "deliveryMode": "session-local",
    },
}


def create() -> tuple[str, Any]:
    return "schedule/change", encode_change(Create(record=RECORD))


def followup(message_id: str = "m1") -> tuple[str, Any]:
    return "agent/followup", {
        "messageId": message_id,
        "text": reminder_framing(RECORD),
        "source": SOURCE,
    }


def dispatch() -> tuple[str, Any]:
    return "schedule/change", encode_change(Dispatch(id="schedule-1"))


def turn(message_id: str = "m1") -> tuple[str, Any]:
    return "turn/start", {"messageId": message_id}


GOOD = [
    create(),
    followup(),
    dispatch(),
    turn(),
    ("assistant/message", {"text": "Reminder: stretch"}),
    ("turn/end", {"outcome": "ok"}),
]


async def store(folder: Path, entries: list[tuple[str, Any]]) -> list[Event]:
    events = [
        Event(seq=seq, type=etype, time=1_785_931_200_000 + seq, data=data)
        for seq, (etype, data) in enumerate(entries)
    ]
    backend = SQLiteBackend(folder)
    await backend.open()
    try:
        header = SessionHeader(version=1, id=SESSION, created_at=1_785_931_200_000)
        await backend.append(Write(SESSION, 0, events, header))
    finally:
        await backend.close()
    return events


def lane(tmp_path: Path) -> Lane:
    return Lane(0, tmp_path / "lane", install_plugin(tmp_path / "plugin"), random.Random(0))


def categories(checked: Lane) -> list[str]:
    return sorted({category for category, _ in checked.violations})


async def test_a_sound_log_passes_every_check(tmp_path: Path) -> None:
    checked = lane(tmp_path)
    events = await store(checked.data, GOOD)
    checked.successes[(SESSION, "schedule-1")] = Success(
        1,
        SESSION,
        "schedule-1",
        {"prompt": "stretch", "scheduledAt": RECORD.scheduled_at, "afterSeconds": 5},
    )
    checked.receipts.append(Receipt(1, SESSION, events[2].to_json(), VIEW, "stream"))
    # What the browser showed: the whole log, its turn and the card of its dispatch.
    wire = [event.to_json() for event in events]
    frames(checked.browser, wire)  # type: ignore[arg-type]
    card(checked.browser, wire[2])  # type: ignore[arg-type]
    checked.check("final")
    assert checked.violations == []
    assert checked.pending_work(2**62, strict=True) == []


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([create(), followup()], ["corrupted"]),  # a durable follow-up without its dispatch
        ([create(), ("user/message", {"text": "x"}), dispatch()], ["corrupted"]),
        ([dispatch()], ["corrupted"]),  # a dispatch without its create (does not fold either)
        ([*GOOD, followup("m2"), dispatch()], ["corrupted", "duplicated"]),  # delivered twice
        ([*GOOD, turn()], ["duplicated"]),  # the same follow-up's turn ran twice
        ([create(), ("schedule/change", {"version": 1, "operation": "create"})], ["corrupted"]),
    ],
)
async def test_each_broken_invariant_is_reported(
    tmp_path: Path, entries: list[tuple[str, Any]], expected: list[str]
) -> None:
    checked = lane(tmp_path)
    await store(checked.data, entries)
    checked.check("post-crash")
    assert categories(checked) == expected


@pytest.mark.parametrize(
    "lose",
    [
        lambda lane, events: lane.successes.__setitem__(
            (SESSION, "schedule-2"), Success(1, SESSION, "schedule-2", {})
        ),
        lambda lane, events: lane.receipts.append(
            Receipt(1, SESSION, {**events[2].to_json(), "seq": 99}, VIEW, "stream")
        ),
        lambda lane, events: lane.receipts.append(
            Receipt(1, SESSION, events[0].to_json(), VIEW, "history")
        ),
    ],
    ids=["confirmed create missing", "receipt beyond the log", "receipt of a non-dispatch"],
)
async def test_what_the_client_saw_must_be_on_disk(
    tmp_path: Path, lose: Callable[[Lane, list[Event]], None]
) -> None:
    checked = lane(tmp_path)
    events = await store(checked.data, GOOD)
    lose(checked, events)
    checked.check("post-crash")
    assert categories(checked) == ["lost"]


async def test_a_changed_stored_prefix_and_unfinished_work_are_reported(tmp_path: Path) -> None:
    checked = lane(tmp_path)
    await store(checked.data, [create()])
    checked.check("post-crash")
    assert checked.violations == []
    assert [line.split(": ", 1)[1] for line in checked.pending_work(2**62, strict=True)] == [
        "schedule-1 due 2026-08-05T12:00:05.000Z not ended"
    ]
    # Replace the store wholesale (database, WAL, and any file the backend keeps beside them).
    for path in checked.data.glob("dsh.sqlite3*"):
        path.unlink()
    await store(checked.data, [("user/message", {"text": "another history"})])
    checked.check("post-crash")
    assert categories(checked) == ["lost"]


# -- the user-visible audit: what the browser showed --------------------------------------------


def shown(seq: int, entry: tuple[str, Any], time: int = 0) -> dict[str, Any]:
    """An event as a frame or history entry carries it."""
    etype, data = entry
    return {"seq": seq, "type": etype, "time": 1_785_931_200_000 + time + seq, "data": data}


def reply(text: str = "Reminder: stretch") -> tuple[str, Any]:
    return "assistant/message", {"text": text}


def end() -> tuple[str, Any]:
    return "turn/end", {"outcome": "ok"}


def delivery(start: int, message_id: str = "m1", time: int = 0) -> list[dict[str, Any]]:
    """Follow-up, dispatch, and the reminder turn with its reply, from seq ``start``."""
    entries = [followup(message_id), dispatch(), turn(message_id), reply(), end()]
    return [shown(start + i, entry, time) for i, entry in enumerate(entries)]


def frames(browser: BrowserView, events: list[dict[str, Any]]) -> None:
    for event in events:
        browser.frame(SESSION, str(event["seq"]), {"event": event})


def card(browser: BrowserView, dispatch_event: dict[str, Any]) -> None:
    browser.frame(SESSION, str(dispatch_event["seq"]), {"event": dispatch_event, "view": VIEW})


DISPATCHED = {(SESSION, "schedule-1"): set[str]()}


def test_one_delivery_seen_on_the_stream_and_again_after_a_reconnect_is_one_of_each() -> None:
    browser = BrowserView()
    created = shown(0, create())
    events = delivery(1)
    frames(browser, [created, *events])
    card(browser, events[1])  # the late view once the dispatch is durable
    assert browser.last_ids[SESSION] == 5
    # After a restart the tab re-reads the history: the same events, the same card again.
    browser.history(SESSION, [{"event": created}, *({"event": e} for e in events)])
    browser.history(SESSION, [{"event": events[1], "view": VIEW}])
    card(browser, events[1])
    assert browser.problems(DISPATCHED) == []
    counts = browser.counts()
    assert counts["user-visible reminder turns"] == 1
    assert counts["user-visible reminder replies"] == 1
    assert counts["user-visible reminder cards"] == 1
    assert counts["user-visible duplicate turns"] == 0


def test_two_reminder_turns_for_one_schedule_id_are_a_violation() -> None:
    # The first delivery streamed before its dispatch was durable; after the kill the log went
    # another way from seq 1, and the reminder was delivered again under a new follow-up.
    browser = BrowserView()
    frames(browser, [shown(0, create()), *delivery(1, "m1")])
    frames(browser, [shown(1, ("session/end-seed", {})), *delivery(2, "m2", time=5000)])
    problems = browser.problems(None)
    assert (
        "duplicated",
        f"session {SESSION}: user saw schedule-1: reminder turns of 2 follow-ups",
    ) in problems
    assert ("duplicated", f"session {SESSION}: user saw schedule-1: 2 reminder replies") in problems
    assert browser.counts()["user-visible duplicate turns"] == 1
    assert browser.counts()["user-visible duplicate replies"] == 1
    # The end state says so too: one dispatch stored, two turns shown.
    assert ("lost", f"session {SESSION}: schedule-1 (dispatched): 2 reminder turns shown") in (
        browser.problems(DISPATCHED)
    )


def test_two_different_dispatch_events_shown_as_cards_are_two_cards() -> None:
    browser = BrowserView()
    first, again = shown(2, dispatch()), shown(2, dispatch(), time=5000)
    card(browser, first)
    card(browser, again)  # same seq, another time: another dispatch event
    assert browser.problems(None) == [
        ("duplicated", f"session {SESSION}: user saw schedule-1: 2 cards")
    ]
    assert browser.counts()["user-visible duplicate cards"] == 1


def test_a_turn_restarted_before_its_reply_is_counted_not_a_violation() -> None:
    # The turn/start streamed, the kill came before it was durable and before the model ran;
    # the durable follow-up's turn runs again after the restart (one reply in all).
    browser = BrowserView()
    start = [shown(0, create()), shown(1, followup()), shown(2, dispatch())]
    frames(browser, [*start, shown(3, turn()), shown(4, ("user/message", {"text": "x"}))])
    rerun = [shown(3, ("session/end-seed", {}), 9000)]
    rerun += [shown(4 + i, e, 9000) for i, e in enumerate([turn(), reply(), end()])]
    frames(browser, rerun)
    card(browser, start[2])
    assert browser.problems(DISPATCHED) == []
    counts = browser.counts()
    assert counts["user-visible reminder turns"] == 2
    assert counts["reminder turns re-started after a kill (same follow-up, no reply yet)"] == 1
    assert counts["user-visible duplicate turns"] == 0


def test_a_turn_that_runs_again_after_its_reply_was_shown_is_a_violation() -> None:
    browser = BrowserView()
    start = [shown(0, create()), shown(1, followup()), shown(2, dispatch())]
    frames(browser, [*start, shown(3, turn()), shown(4, reply())])
    rerun = [shown(3 + i, e, 9000) for i, e in enumerate([turn(), reply(), end()])]
    frames(browser, rerun)
    assert (
        "duplicated",
        f"session {SESSION}: user saw schedule-1: its turn ran after a reply",
    ) in browser.problems(None)


def test_replies_count_only_inside_a_reminder_turn() -> None:
    browser = BrowserView()
    events = [
        shown(0, create()),
        shown(1, ("turn/start", {"messageId": "user-1"})),
        shown(2, reply("Scheduled.")),  # the reply to the user's own request
        shown(3, end()),
        *delivery(4),
        shown(9, reply("after the turn")),  # outside any turn
    ]
    frames(browser, events)
    counts = browser.counts()
    assert counts["user-visible reminder replies"] == 1
    assert counts["user-visible reminder turns"] == 1


def test_the_end_state_needs_one_of_each_per_stored_dispatch() -> None:
    browser = BrowserView()
    # Nothing shown at all for a stored dispatch: no turn, no reply, no card.
    assert browser.problems(DISPATCHED) == [
        ("lost", f"session {SESSION}: schedule-1 (dispatched): 0 reminder turns shown"),
        ("lost", f"session {SESSION}: schedule-1 (dispatched): 0 cards shown"),
        ("lost", f"session {SESSION}: schedule-1 (dispatched): no reply shown"),
    ]
    # A turn the kill cut off before its reply, closed interrupted on resume: no reply is owed.
    start = [shown(0, create()), shown(1, followup()), shown(2, dispatch()), shown(3, turn())]
    frames(browser, start)
    card(browser, start[2])
    assert browser.problems({(SESSION, "schedule-1"): {"m1"}}) == []
    assert browser.problems(DISPATCHED) == [
        ("lost", f"session {SESSION}: schedule-1 (dispatched): no reply shown")
    ]
    # Something shown for a reminder that storage never dispatched.
    assert browser.problems({}) == [
        ("lost", f"session {SESSION}: user saw schedule-1, never dispatched")
    ]


async def test_the_lane_reports_what_the_browser_saw_against_the_store(tmp_path: Path) -> None:
    checked = lane(tmp_path)
    events = await store(checked.data, GOOD)
    wire = [event.to_json() for event in events]
    frames(checked.browser, wire)  # type: ignore[arg-type]
    card(checked.browser, wire[2])  # type: ignore[arg-type]
    checked.check("final")
    assert checked.violations == []
    # The same reminder shown once more under a follow-up that storage lost after a kill.
    lost = [shown(6, followup("m9"), 50), shown(7, dispatch(), 50), shown(8, turn("m9"), 50)]
    frames(checked.browser, lost)
    checked.check("settled")
    assert categories(checked) == ["duplicated"]
