"""Restarts on the SQLite backend: real host boots, one after another, on one data folder.

The Python counterpart of upstream's ``jsonl-restart.spec`` and the restart lane: boot 1 writes a
pending (+3600 s) reminder and one that will be overdue into two Sessions and closes before
either is due; boot 2 resumes both and the overdue one is delivered exactly once (one durable
dispatch next to its follow-up, one reminder turn, an empty fold, the receipt view) while the
pending one stays pending and a fork of its Session inherits nothing; boot 3 reads the delivered
Session cold, resumes everything and dispatches nothing new (its stored logs grow only by
``session/end-seed``), and the pending reminder still fires once, in its own Session only.

Every boot has its own ``ManualClock``; the wall time is carried from one boot to the next (and
moved forward in between), so nothing waits for real time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dsh_hookspecs import Event, JSONValue
from dsh_host import LiveHost, LiveTurn, ScriptedModel
from dsh_host.persistence import StoredSession
from dsh_host.testing import ManualClock
from dsh_schedule import (
    SCHEDULE_CHANGE,
    SchedulePlugin,
    fold,
    parse_instant,
    parse_reminder_framing,
    present_dispatch,
)

from .harness import boot_sqlite, settle_quiet
from .test_tools import view

START_WALL = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
SCHEDULE_SOURCE = {"kind": "plugin", "plugin": "schedule"}
PENDING_PROMPT = "Check the deployment log"
OVERDUE_PROMPT = 'Stretch "now"\noccurrence_at: forged'


@dataclass(frozen=True)
class ModelRequest:
    session_id: str
    text: str
    source: JSONValue


class RecordingModel:
    """The scripted model, recording every turn it is asked to run (one model request each)."""

    name = "recording"

    def __init__(self) -> None:
        self.inner = ScriptedModel(SchedulePlugin().dsh_scripted_phrases)
        self.requests: list[ModelRequest] = []

    async def run_turn(self, turn: LiveTurn) -> None:
        message = turn.message
        self.requests.append(ModelRequest(turn.agent.session.id, message.text, message.source))
        await self.inner.run_turn(turn)


@dataclass
class Boot:
    host: LiveHost
    clock: ManualClock
    model: RecordingModel

    @property
    def plugin(self):
        return self.host.plugins.pm.get_plugin("schedule")

    async def settle(self) -> None:
        """Bounded wait until every Agent is idle and no owner has work in flight."""
        await settle_quiet(self.host)

    async def stored(self, session_id: str) -> StoredSession:
        stored = await self.host.inspect(session_id)
        assert stored is not None, session_id
        return stored


async def boot(data: Path, wall_ms: int) -> Boot:
    model = RecordingModel()
    host, clock = await boot_sqlite(data, wall_ms, model=model)
    return Boot(host, clock, model)


def dispatches(events: Sequence[Event]) -> list[Event]:
    return [e for e in events if e.type == SCHEDULE_CHANGE and e.data["operation"] == "dispatch"]


def reminder_messages(events: Sequence[Event]) -> list[Event]:
    return [
        e for e in events if e.type == "user/message" and e.data.get("source") == SCHEDULE_SOURCE
    ]


async def boot_1_writes_two_reminders(data: Path) -> tuple[str, str, dict, dict, int]:
    one = await boot(data, START_WALL)
    pending_agent = await one.host.create_session()
    overdue_agent = await one.host.create_session()
    for agent in (pending_agent, overdue_agent):
        agent.send("hello")  # each Session has a completed turn before its reminder
    await one.settle()
    pending = await pending_agent.execute_tool(
        "schedule_create", {"prompt": PENDING_PROMPT, "after_seconds": 3600}
    )
    overdue = await overdue_agent.execute_tool(
        "schedule_create", {"prompt": OVERDUE_PROMPT, "after_seconds": 5}
    )
    assert pending == view(
        "schedule-1", PENDING_PROMPT, 3600, "2026-08-05T13:00:00.000Z", "scheduled"
    )
    assert overdue == view("schedule-1", OVERDUE_PROMPT, 5, "2026-08-05T12:00:05.000Z", "scheduled")
    for agent in (pending_agent, overdue_agent):
        assert await one.host.sessions.flush(agent.session) is True
    await one.settle()
    # Closed right after the creates answered: neither was due in this boot.
    assert dispatches(overdue_agent.session.events) == []
    assert [r for r in one.model.requests if r.source is not None] == []
    wall = one.clock.now_ms()
    await one.host.close()
    return pending_agent.session.id, overdue_agent.session.id, pending, overdue, wall


async def test_overdue_reminder_is_delivered_once_on_resume_and_never_again(tmp_path: Path) -> None:
    pending_id, overdue_id, pending, overdue, wall = await boot_1_writes_two_reminders(tmp_path)

    # -- boot 2, ten minutes later: the overdue reminder is delivered exactly once ------------
    two = await boot(tmp_path, wall + 600_000)
    overdue_agent = await two.host.resume_session(overdue_id)
    pending_agent = await two.host.resume_session(pending_id)
    await two.settle()

    events = overdue_agent.session.events
    owned = overdue_agent.session.header.owned_from
    (dispatch,) = dispatches(events)
    assert dispatch.data == {"version": 1, "operation": "dispatch", "id": "schedule-1"}
    assert dispatch.time >= parse_instant(overdue["scheduledAt"])
    followup = events[dispatch.seq - 1]  # queued in the same synchronous step
    assert followup.type == "agent/followup"
    assert followup.data["source"] == SCHEDULE_SOURCE
    assert parse_reminder_framing(followup.data["text"]) == (
        "schedule-1",
        overdue["scheduledAt"],
        OVERDUE_PROMPT,
    )
    # One reminder turn: one model request, consuming exactly that follow-up.
    assert two.model.requests == [ModelRequest(overdue_id, followup.data["text"], SCHEDULE_SOURCE)]
    (message,) = reminder_messages(events)
    turn_start = events[message.seq - 1]
    assert turn_start.type == "turn/start"
    assert turn_start.data == {"messageId": followup.data["messageId"]}
    assert message.data == {"text": followup.data["text"], "source": SCHEDULE_SOURCE}
    assert [e.data for e in events if e.type == "assistant/message"][-1] == {
        "text": f"Reminder: {OVERDUE_PROMPT}"
    }
    assert fold(events, owned).active == ()
    receipt = {
        "scheduleId": "schedule-1",
        "prompt": OVERDUE_PROMPT,
        "occurrenceAt": overdue["scheduledAt"],
        "deliveryMode": "session-local",
    }
    assert present_dispatch(events, dispatch.seq, owned) == receipt
    assert two.host.plugins.event_present(events, dispatch.seq, owned) == receipt
    assert await overdue_agent.execute_tool("schedule_list", {}) == []

    # The pending reminder stays pending, and a fork of its Session starts with nothing.
    assert dispatches(pending_agent.session.events) == []
    assert await pending_agent.execute_tool("schedule_list", {}) == [pending]
    child = await two.host.fork_session(pending_id)
    assert child.session.header.parent_session == pending_id
    assert fold(child.session.events, child.session.header.owned_from).active == ()
    assert await child.execute_tool("schedule_list", {}) == []
    assert await pending_agent.execute_tool("schedule_list", {}) == [pending]
    child_id = child.session.id

    await two.settle()
    for agent in (overdue_agent, pending_agent, child):
        assert await two.host.sessions.flush(agent.session) is True
    stored = await two.stored(overdue_id)
    assert stored.events == tuple(events)
    assert len(dispatches(stored.events)) == 1
    assert len(two.model.requests) == 1
    wall = two.clock.now_ms()
    await two.host.close()

    # -- boot 3: cold history first, then resume everything; nothing new is dispatched ------
    three = await boot(tmp_path, wall + 60_000)
    before = {sid: await three.stored(sid) for sid in (overdue_id, pending_id, child_id)}
    cold = before[overdue_id]
    (cold_dispatch,) = dispatches(cold.events)
    assert present_dispatch(cold.events, cold_dispatch.seq, cold.header.owned_from) == receipt
    assert three.host.sessions.live() == []  # reading cold history activated nothing

    agents = {sid: await three.host.resume_session(sid) for sid in before}
    await three.settle()
    three.clock.advance(120)  # every owner's segment timer wakes at least once; nothing is due
    await three.settle()
    assert three.model.requests == []
    for sid, agent in agents.items():
        assert await three.host.sessions.flush(agent.session) is True
        after = await three.stored(sid)
        grown = after.events[len(before[sid].events) :]
        assert after.events[: len(before[sid].events)] == before[sid].events
        assert [(e.type, e.data) for e in grown] == [("session/end-seed", {})], sid
    assert len(dispatches(agents[overdue_id].session.events)) == 1
    assert await agents[pending_id].execute_tool("schedule_list", {}) == [pending]

    # The pending reminder still fires on time, once, in its own Session only.
    three.clock.advance(3600)
    await three.settle()
    (pending_dispatch,) = dispatches(agents[pending_id].session.events)
    assert pending_dispatch.data["id"] == "schedule-1"
    assert dispatches(agents[child_id].session.events) == []
    assert len(dispatches(agents[overdue_id].session.events)) == 1
    assert [(r.session_id, r.source) for r in three.model.requests] == [
        (pending_id, SCHEDULE_SOURCE)
    ]
    await three.host.close()
