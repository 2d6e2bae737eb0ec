"""The commit-gated sidecar and history views (upstream api-proxy-schedule-view cases)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Event, JSONValue
from dsh_host import LiveHost, LiveSession
from dsh_host.persistence import StorageError, StoredSession
from dsh_host.web import Frame, Sidecar, Subscription, history_page, page_range

from .support import BROKEN, FlushGate, append, flush_task

SCHEDULED_AT = "2026-08-05T12:01:00.000Z"


def create(schedule_id: str, prompt: str = "Check the deployment log") -> JSONValue:
    return {
        "version": 1,
        "operation": "create",
        "schedule": {
            "id": schedule_id,
            "kind": "after",
            "prompt": prompt,
            "afterSeconds": 60,
            "scheduledAt": SCHEDULED_AT,
        },
    }


def dispatch(schedule_id: str) -> JSONValue:
    return {"version": 1, "operation": "dispatch", "id": schedule_id}


def reminder(schedule_id: str, prompt: str = "Check the deployment log") -> JSONValue:
    return {
        "for": "event",
        "view": {
            "scheduleId": schedule_id,
            "prompt": prompt,
            "occurrenceAt": SCHEDULED_AT,
            "deliveryMode": "session-local",
        },
    }


def drain(subscription: Subscription) -> list[Frame]:
    """Every frame queued so far (the queue is a plain deque behind ``get``)."""
    frames = list(subscription._frames)
    subscription._frames.clear()
    return frames


def late(frames: list[Frame]) -> list[tuple[int, JSONValue]]:
    return [(f.event.seq, f.view) for f in frames if f.late]


@pytest.fixture
async def sidecar(web_host: LiveHost) -> AsyncIterator[Sidecar]:
    sidecar = Sidecar(web_host.sessions, web_host.plugins)
    try:
        yield sidecar
    finally:
        sidecar.close()


# -- commit gating ----------------------------------------------------------------------------


async def test_reversed_flush_completion_keeps_the_max_and_presents_each_event_once(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    gate.auto = None
    first_event = append(session, "a")
    first = await flush_task(web_host, session, gate)  # covers [0, 1)
    second_event = append(session, "b")
    second = await flush_task(web_host, session, gate)  # covers [0, 2)
    await gate.wait_pending(2)

    gate.release(1)  # the later flush completes first
    assert await second is True
    assert web_host.persistence.durable_length(session) == 2
    gate.release(0)
    assert await first is True
    # The older completion cannot move it back.
    assert web_host.persistence.durable_length(session) == 2

    frames = drain(subscription)
    assert [(f.event.seq, f.late) for f in frames] == [(0, False), (1, False), (0, True), (1, True)]
    raw, views = frames[:2], frames[2:]
    # The identical event object is re-sent, now with the sidecar; raw frames never carry one.
    assert views[0].event is first_event
    assert views[1].event is second_event
    assert all(f.view is None for f in raw)
    assert views[0].view == {"for": "event", "view": {"label": "a", "seedLength": 0, "of": 2}}
    for plain, presented in zip(raw, views, strict=True):
        assert _wire(plain)["event"] == _wire(presented)["event"]
        assert "view" not in _wire(plain)
        assert _wire(presented)["view"] == presented.view


def _wire(frame: Frame) -> dict:
    lines = frame.data.decode().split("\n")
    assert lines[0] == f"id: {frame.event.seq}"
    assert lines[1].startswith("data: ")
    assert lines[2:] == ["", ""]
    return json.loads(lines[1].removeprefix("data: "))


async def test_view_withheld_after_rejection_and_published_on_the_next_success(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    append(session, "receipt")

    gate.auto = "raise"
    with pytest.raises(OSError, match="injected"):
        await web_host.sessions.flush(session)
    gate.auto = "false"
    assert await web_host.sessions.flush(session) is False
    assert late(drain(subscription)) == []
    assert web_host.persistence.durable_length(session) == 0

    gate.auto = "ok"
    assert await web_host.sessions.flush(session) is True
    assert late(drain(subscription)) == [
        (0, {"for": "event", "view": {"label": "receipt", "seedLength": 0, "of": 1}})
    ]
    assert await web_host.sessions.flush(session) is True
    assert late(drain(subscription)) == []  # covered once, presented once


async def test_presentation_failures_are_logged_and_served_raw(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    append(session, "x", kind=BROKEN)
    append(session, "ok")
    with capture_logs() as logs:
        assert await web_host.sessions.flush(session) is True
    assert [seq for seq, _ in late(drain(subscription))] == [1]
    assert any(e["event"] == "plugin.hook_failed" for e in logs)


async def test_a_view_that_is_not_json_is_contained(web_host: LiveHost, sidecar: Sidecar):
    class Odd:
        from dsh_hookspecs import hookimpl

        @hookimpl
        def dsh_event_present(self, events, seq, seed_length):
            return {"not": {1, 2}} if events[seq].type == "test/odd" else None

    web_host.load_plugin("odd", factory=Odd)
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    session.append("test/odd", {})
    with capture_logs() as logs:
        assert await web_host.sessions.flush(session) is True
    assert late(drain(subscription)) == []
    assert any(e["event"] == "web.present_failed" for e in logs)


async def test_presentation_is_told_the_live_session_whose_log_it_reads(
    web_host: LiveHost, sidecar: Sidecar
):
    seen: list[tuple[str, object]] = []

    class Witness:
        from dsh_hookspecs import hookimpl

        @hookimpl
        def dsh_event_present(self, events, seq, seed_length, session):
            if events[seq].type == "test/witness":
                assert session is None or session.events is events
                seen.append(("live" if session is not None else "stored", session))

    web_host.load_plugin("witness", factory=Witness)
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    session.append("test/witness", {})
    assert await web_host.sessions.flush(session) is True
    drain(subscription)
    await history_page(web_host, session.id, None, 50)
    assert seen == [("live", session), ("live", session)]  # the late view, then history
    await web_host.close_session(session.id)
    await history_page(web_host, session.id, None, 50)
    assert seen[2:] == [("stored", None)]  # a cold log: no live Session to key anything by


async def test_watermark_is_per_session_object_and_only_counts_flushes(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    session = web_host.sessions.create()
    append(session, "a")
    assert web_host.persistence.durable_length(session) == 0  # an append is not durability evidence
    assert await web_host.sessions.flush(session) is True
    assert web_host.persistence.durable_length(session) == 1
    await web_host.close_session(session.id)
    stored = await web_host.inspect(session.id)  # what the resumed object is built from
    assert stored is not None
    again = await web_host.sessions.resume(session.id)
    assert again is not session
    assert web_host.persistence.durable_length(again) == len(stored.events) == 1


async def test_a_resume_does_not_rebroadcast_historical_receipts(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    web_host.load_plugin("schedule")
    session = web_host.sessions.create()
    session.append("schedule/change", create("schedule-1"))
    session.append("schedule/change", dispatch("schedule-1"))
    subscription = sidecar.subscribe(session.id)
    assert await web_host.sessions.flush(session) is True
    assert late(drain(subscription)) == [(1, reminder("schedule-1"))]
    await web_host.close_session(session.id)

    resumed = await web_host.sessions.resume(session.id)
    frames = drain(subscription)  # subscriptions are by id: the resumed object streams too
    assert [(f.event.seq, f.event.type, f.late) for f in frames] == [(2, "session/end-seed", False)]
    assert await web_host.sessions.flush(resumed) is True
    assert late(drain(subscription)) == []
    assert web_host.persistence.durable_length(resumed) == 3


async def test_resumed_ancestor_dispatch_copied_into_a_fork_seed(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    web_host.load_plugin("schedule")
    parent = web_host.sessions.create()
    parent.append("schedule/change", create("schedule-1"))
    parent.append("schedule/change", dispatch("schedule-1"))
    assert await web_host.sessions.flush(parent) is True
    await web_host.close_session(parent.id)
    ancestor = await web_host.sessions.resume(parent.id)  # seq 2: session/end-seed
    assert await web_host.sessions.flush(ancestor) is True

    child = web_host.sessions.fork(ancestor)
    assert child.header.seed_length == 3
    # The seed is not the child's storage yet.
    assert web_host.persistence.durable_length(child) == 0
    subscription = sidecar.subscribe(child.id)

    # Before the child's own storage proves the seed: no receipt, raw history only.
    gate.auto = "raise"
    with pytest.raises(OSError):
        await web_host.sessions.flush(child)
    assert late(drain(subscription)) == []
    page = await history_page(web_host, child.id, None, 50)
    assert page is not None
    assert [e.get("view") for e in page["entries"]] == [None, None, None]

    gate.auto = "ok"
    assert await web_host.sessions.flush(child) is True
    frames = drain(subscription)
    assert late(frames) == [(1, reminder("schedule-1"))]
    assert frames[0].event is child.events[1]
    page = await history_page(web_host, child.id, None, 50)
    assert page is not None
    assert [e.get("view") for e in page["entries"]] == [None, reminder("schedule-1"), None]


async def test_a_child_dispatch_reusing_a_parent_id_pairs_with_the_child_create(
    web_host: LiveHost, gate: FlushGate, sidecar: Sidecar
):
    web_host.load_plugin("schedule")
    parent = web_host.sessions.create()
    parent.append("schedule/change", create("schedule-1", "parent prompt"))
    parent.append("schedule/change", dispatch("schedule-1"))
    child = web_host.sessions.fork(parent)
    child.append("schedule/change", create("schedule-1", "child prompt"))
    child.append("schedule/change", dispatch("schedule-1"))
    subscription = sidecar.subscribe(child.id)
    assert await web_host.sessions.flush(child) is True
    assert late(drain(subscription)) == [
        (1, reminder("schedule-1", "parent prompt")),
        (4, reminder("schedule-1", "child prompt")),
    ]


async def test_closing_the_sidecar_ends_every_subscription(web_host: LiveHost, sidecar: Sidecar):
    session = web_host.sessions.create()
    subscription = sidecar.subscribe(session.id)
    sidecar.close()
    assert subscription.reason == "shutdown"
    assert sidecar.subscribe(session.id).reason == "shutdown"
    append(session, "after")  # no longer observed
    assert drain(subscription) == []


async def test_a_subscriber_that_falls_behind_is_closed_with_bounded_memory(web_host: LiveHost):
    sidecar = Sidecar(web_host.sessions, web_host.plugins, queue_size=3)
    try:
        session = web_host.sessions.create()
        slow = sidecar.subscribe(session.id)
        for index in range(10):
            append(session, str(index))
        assert slow.reason == "overflow"
        assert [f.event.seq for f in drain(slow)] == [0, 1, 2]
        assert sidecar.subscriber_count(session.id) == 0
    finally:
        sidecar.close()


# -- history views ----------------------------------------------------------------------------


async def _stored_prefix(web_host: LiveHost, gate: FlushGate) -> LiveSession:
    session = web_host.sessions.create()
    append(session, "a")
    append(session, "b")
    assert await web_host.sessions.flush(session) is True
    append(session, "c")  # live only: storage is the shorter, still identical side
    return session


def _views(page: dict | None) -> list[JSONValue]:
    assert page is not None
    return [entry.get("view") for entry in page["entries"]]


async def test_attached_history_presents_only_the_proven_stored_prefix(
    web_host: LiveHost, gate: FlushGate
):
    session = await _stored_prefix(web_host, gate)
    stored = await web_host.inspect(session.id)
    assert stored is not None
    # Storage writes an absent delegationDepth as 0: still the same header.
    assert session.header.delegation_depth is None
    assert stored.header.delegation_depth == 0
    views = _views(await history_page(web_host, session.id, None, 50))
    assert views == [
        {"for": "event", "view": {"label": "a", "seedLength": 0, "of": 3}},
        {"for": "event", "view": {"label": "b", "seedLength": 0, "of": 3}},
        None,
    ]


def _tampered(stored: StoredSession, how: str) -> StoredSession:
    events = list(stored.events)
    header = stored.header
    if how == "header":
        header = dataclasses.replace(header, created_at=header.created_at + 1)
    elif how == "cwd":
        header = dataclasses.replace(header, cwd="/elsewhere")
    elif how == "event":
        events[1] = dataclasses.replace(events[1], data={"label": "forged"})
    elif how == "time":
        events[0] = dataclasses.replace(events[0], time=events[0].time + 1)
    elif how == "longer":
        events += [
            Event(seq=len(events) + i, type="test/presentable", time=0, data={"label": "x"})
            for i in range(2)
        ]
    return StoredSession(header=header, events=tuple(events))


@pytest.mark.parametrize("how", ["header", "cwd", "event", "time", "longer", "absent", "fails"])
async def test_attached_history_falls_back_to_raw_without_a_proven_prefix(
    web_host: LiveHost, gate: FlushGate, monkeypatch: pytest.MonkeyPatch, how: str
):
    session = await _stored_prefix(web_host, gate)
    # The proof reads storage through the persistence coordinator (the host's inspect too).
    real = web_host.persistence.inspect

    async def inspect(session_id: str) -> StoredSession | None:
        if how == "fails":
            raise StorageError("injected inspection failure")
        if how == "absent":
            return None
        stored = await real(session_id)
        assert stored is not None
        return _tampered(stored, how)

    monkeypatch.setattr(web_host.persistence, "inspect", inspect)
    with capture_logs() as logs:
        page = await history_page(web_host, session.id, None, 50)
    assert _views(page) == [None, None, None]
    assert page is not None
    assert [e["event"]["seq"] for e in page["entries"]] == [0, 1, 2]  # raw history still served
    assert any(e["event"].startswith("web.history_") for e in logs)


async def test_detached_history_presents_every_dispatch_without_activating(
    web_host: LiveHost, gate: FlushGate
):
    web_host.load_plugin("schedule")
    agent = await web_host.create_session()
    session = agent.session
    session.append("schedule/change", create("schedule-1", "first"))
    session.append("user/message", {"text": "one"})
    session.append("user/message", {"text": "two"})
    session.append("schedule/change", dispatch("schedule-1"))
    session.append("schedule/change", create("schedule-2", "second"))
    session.append("schedule/change", dispatch("schedule-2"))
    await web_host.close_session(session.id)
    agents = len(web_host.agents.all())

    page = await history_page(web_host, session.id, None, 50)
    assert _views(page) == [
        None,
        None,
        None,
        reminder("schedule-1", "first"),
        None,
        reminder("schedule-2", "second"),
    ]
    # A create on an earlier page still pairs: presentation sees the whole log.
    tail = await history_page(web_host, session.id, None, 1)
    assert tail is not None
    assert [e["event"]["seq"] for e in tail["entries"]] == [2, 3, 4, 5]
    assert _views(tail)[1] == reminder("schedule-1", "first")
    assert web_host.sessions.get(session.id) is None
    assert web_host.agents.for_session(session.id) is None
    assert len(web_host.agents.all()) == agents


def test_page_range_counts_messages_back_from_before_seq():
    types = ["turn/start", "user/message", "tool/call", "assistant/message", "turn/end"] * 3
    events = [Event(seq=i, type=t, time=0, data={}) for i, t in enumerate(types)]
    assert page_range(events, None, 2) == range(11, 15)
    assert page_range(events, 11, 2) == range(6, 11)
    assert page_range(events, 6, 50) == range(6)
    assert page_range(events, 0, 5) == range(0)
    assert page_range(events, 999, 1) == range(13, 15)
    assert page_range([], None, 1) == range(0)
