"""A Session that owes a turn is due work, also cold (the host's ``dsh.turns`` wake entry).

A follow-up is queued with its record in the log; its turn starts once that record is durable.
A crash between the two (or inside the turn) used to leave the Session cold with the turn owed
and nothing to resume it: the reminder was dispatched and shown, yet never reached the model.
Now the host files its own wake entry with the follow-up, in the same batch, and clears it in the
batch of the turn's end, so cold delivery resumes such a Session and its Agent runs (or closes)
the turn. The stored logs below are what a SIGKILL leaves; tests/chaos/test_herd_crash.py kills
real processes.
"""

from __future__ import annotations

from pathlib import Path

from dsh_hookspecs import Event, JSONValue
from dsh_host import Detached, LiveHost
from dsh_host.conformance import make_header
from dsh_host.core._session import TURNS_WAKE
from dsh_host.persistence import SQLiteBackend, Write
from dsh_host.testing import ManualClock, wait_until
from tests.host.test_cold_delivery import advance_until

MESSAGE = "m-1"
FOLLOWUP: dict[str, JSONValue] = {
    "messageId": MESSAGE,
    "text": "Reminder: water the plants",
    "source": {"kind": "plugin", "plugin": "schedule"},
}


def _event(seq: int, etype: str, data: JSONValue) -> Event:
    return Event(seq=seq, type=etype, time=1_785_931_100_000 + seq, data=data)


async def _store(folder: Path, clock: ManualClock, events: list[Event], *, entry: bool) -> None:
    """What a process killed at that point leaves: ``events``, and the entry when it was
    written with them."""
    backend = SQLiteBackend(folder)
    await backend.open()
    wakes = {TURNS_WAKE: clock.now_ms() - 1_000} if entry else None
    await backend.append(Write("s", 0, events, make_header("s"), wakes))
    await backend.close()


def _of(events: tuple[Event, ...], etype: str) -> list[JSONValue]:
    return [event.data for event in events if event.type == etype]


async def _delivered(folder: Path, clock: ManualClock) -> tuple[Event, ...]:
    """Start a host on ``folder``; once cold delivery woke the Session and it went cold again,
    its stored log (its wake entries all cleared)."""
    async with LiveHost(backend=SQLiteBackend(folder), clock=clock) as host:
        detached: list[str] = []
        host.sessions.subscribe(lambda o: detached.append(o.session.id), Detached)
        await advance_until(clock, lambda: "s" in detached)
        stored = await host.inspect("s")
    assert stored is not None
    assert dict(stored.wakes) == {}
    return stored.events


async def test_a_durable_follow_up_whose_turn_never_started_runs_once_after_a_restart(
    tmp_path: Path, clock: ManualClock
) -> None:
    await _store(tmp_path, clock, [_event(0, "agent/followup", FOLLOWUP)], entry=True)
    events = await _delivered(tmp_path, clock)
    assert _of(events, "turn/start") == [{"messageId": MESSAGE}]
    (end,) = _of(events, "turn/end")
    assert end == {"outcome": "ok"}
    (said,) = _of(events, "user/message")
    assert isinstance(said, dict)
    assert said["text"] == FOLLOWUP["text"]  # the model was told the reminder


async def test_a_turn_the_crash_cut_off_is_closed_and_not_run_again(
    tmp_path: Path, clock: ManualClock
) -> None:
    started = [
        _event(0, "agent/followup", FOLLOWUP),
        _event(1, "turn/start", {"messageId": MESSAGE}),
        _event(2, "user/message", {"text": FOLLOWUP["text"], "source": FOLLOWUP["source"]}),
    ]
    await _store(tmp_path, clock, started, entry=True)
    events = await _delivered(tmp_path, clock)
    assert _of(events, "turn/start") == [{"messageId": MESSAGE}]  # at most once to the model
    (end,) = _of(events, "turn/end")
    assert isinstance(end, dict)
    assert end["outcome"] == "error"
    assert "interrupted" in str(end)


async def test_reindex_files_the_entry_of_a_store_written_before_it_existed(
    tmp_path: Path, clock: ManualClock
) -> None:
    await _store(tmp_path, clock, [_event(0, "agent/followup", FOLLOWUP)], entry=False)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        assert host.sessions.get("s") is None  # nothing due: nothing resumed it
        await host.reindex()
        stored = await host.inspect("s")
        assert stored is not None
        assert set(stored.wakes) == {TURNS_WAKE}
    events = await _delivered(tmp_path, clock)
    assert _of(events, "turn/start") == [{"messageId": MESSAGE}]


async def test_a_session_that_owes_nothing_has_no_entry_after_its_turn(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        agent = await host.create_session()
        agent.followup("Reminder: stretch", plugin="schedule")
        assert set(host.sessions.wakes(agent.session)) == {TURNS_WAKE}
        assert await host.sessions.flush(agent.session) is True
        stored = await host.inspect(agent.session.id)
        assert stored is not None
        assert set(stored.wakes) == {TURNS_WAKE}  # durable with the follow-up's record
        await wait_until(lambda: _of(tuple(agent.session.events), "turn/end") != [])
        await wait_until(lambda: agent.phase == "idle")
        assert dict(host.sessions.wakes(agent.session)) == {}
        assert await host.sessions.flush(agent.session) is True
        stored = await host.inspect(agent.session.id)
        assert stored is not None
        assert dict(stored.wakes) == {}


async def test_an_owed_turn_waits_while_the_outbox_sends_and_runs_once_it_is_done(
    tmp_path: Path, clock: ManualClock
) -> None:
    await _store(tmp_path, clock, [_event(0, "agent/followup", FOLLOWUP)], entry=True)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        sending = True
        host.wakeups.sending = lambda: sending  # a herd's notices are going out
        await wait_until(lambda: not host.wakeups.busy)
        clock.advance(1.0)  # passes look again and hold the turn back
        await wait_until(lambda: not host.wakeups.busy)
        assert host.sessions.get("s") is None  # not resumed for its turn yet
        sending = False
        await advance_until(clock, lambda: host.sessions.get("s") is not None)

        async def turned() -> bool:
            stored = await host.inspect("s")
            return stored is not None and bool(_of(stored.events, "turn/end"))

        await wait_until(turned)
        stored = await host.inspect("s")
        assert stored is not None
        assert _of(stored.events, "turn/start") == [{"messageId": MESSAGE}]


async def test_owed_turns_wait_for_a_stuck_outbox_only_so_long(
    tmp_path: Path, clock: ManualClock, monkeypatch
) -> None:
    from dsh_host.core import _wakeups

    monkeypatch.setattr(_wakeups, "TURNS_HELD_SECONDS", 0.05)
    await _store(tmp_path, clock, [_event(0, "agent/followup", FOLLOWUP)], entry=True)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.wakeups.sending = lambda: True  # never done
        await advance_until(clock, lambda: host.sessions.get("s") is not None)
