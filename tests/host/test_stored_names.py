"""A Session's name is stored with the batch that changed it (so a listing or a board row names
the Session without reading its log), computed one event at a time: :class:`NameTracker` always
answers what ``session_name`` answers for the same log, and the coordinator passes ``name`` only
when it differs from the one storage holds."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_hookspecs import Event
from dsh_host import LiveHost
from dsh_host._names import RENAME, NameTracker, session_name
from dsh_host.persistence import StorageError
from dsh_host.testing import ManualClock

from .board_plugin import load_pins
from .board_support import Faults, RecordingSQLite

# -- the tracker and session_name agree -----------------------------------------------------------

_TEXTS = st.sampled_from(["remind me to stretch", "  ", "\u202ehi", "x" * 70, "hello"])
_CALL_IDS = st.sampled_from(["c1", "c2", None, 3, ["not", "hashable"], {"x": 1}])
_DATA = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(_TEXTS, st.integers())}),
    st.fixed_dictionaries(
        {"text": _TEXTS, "source": st.just({"kind": "plugin"})},
    ),
    st.fixed_dictionaries({"callId": _CALL_IDS}),
    st.fixed_dictionaries({"callId": _CALL_IDS, "source": st.just({"kind": "user"})}),
    st.fixed_dictionaries(
        {
            "callId": _CALL_IDS,
            "value": st.sampled_from([{}, {"code": "x", "message": "m"}, {"code": 3}, None]),
        }
    ),
    st.fixed_dictionaries({"name": st.one_of(_TEXTS, st.integers(), st.just("\u200b"))}),
    st.just("not an object"),
    st.none(),
)
_TYPES = st.sampled_from(
    ["user/message", "tool/call", "tool/result", "turn/start", "turn/end", RENAME, "other"]
)
_LOGS = st.lists(st.tuples(_TYPES, _DATA), max_size=40)


def _events(items: list[tuple[str, Any]]) -> list[Event]:
    return [Event(seq=i, type=kind, time=i, data=data) for i, (kind, data) in enumerate(items)]


@settings(max_examples=400, deadline=None)
@given(items=_LOGS, cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=6))
def test_the_tracker_answers_what_session_name_answers_at_every_length(
    items: list[tuple[str, Any]], cuts: list[int]
) -> None:
    events = _events(items)
    tracker = NameTracker()
    for end in [*sorted(cuts), len(events)]:
        assert tracker.feed(events, end) == session_name(events[: min(end, len(events))])
        assert tracker.read == max(tracker.read, min(end, len(events)))
    assert tracker.feed(events) == session_name(events)


def test_a_call_id_that_is_not_a_scalar_pairs_with_nothing_and_breaks_nothing() -> None:
    typed = ("user/message", {"text": "remind me to stretch"})
    for call_id in (["a"], {"a": 1}):
        events = _events(
            [
                typed,
                ("tool/call", {"callId": call_id}),
                ("tool/result", {"callId": call_id, "value": {}}),
            ]
        )
        assert session_name(events) is None
        assert NameTracker().feed(events) is None


# -- the coordinator stores it ------------------------------------------------------------------


def typed_turn(session: Any, text: str, call: str = "c1") -> None:
    """A typed message whose turn ran a tool that succeeded (it names the Session)."""
    session.append("turn/start", {"messageId": "m"})
    session.append("user/message", {"text": text})
    session.append("tool/call", {"callId": call, "name": "t", "arguments": {}})
    session.append("tool/result", {"callId": call, "name": "t", "value": {}})
    session.append("turn/end", {"outcome": "ok"})


@pytest.fixture
def recording(tmp_path: Path) -> RecordingSQLite:
    return RecordingSQLite(tmp_path / "data")


@pytest.fixture
async def host(clock: ManualClock, recording: RecordingSQLite) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=Faults(recording), clock=clock, model="none") as running:
        yield running


async def stored_names(host: LiveHost) -> dict[str, str | None]:
    return {row.header.id: row.name for row in await host.backend.list_sessions()}


async def test_the_name_is_stored_with_the_batch_that_changed_it_and_only_then(
    host: LiveHost, recording: RecordingSQLite
) -> None:
    session = (await host.create_session()).session
    session.append("user/message", {"text": "hello"})  # answered with help: no name yet
    assert await host.sessions.flush(session) is True
    assert [c.name for c in recording.of(session.id)] == [None, None]
    typed_turn(session, "remind me  to stretch")
    assert await host.sessions.flush(session) is True
    assert recording.of(session.id)[-1].name == "remind me to stretch"
    assert recording.of(session.id)[-1].types[-1] == "turn/end"  # with the events that named it
    typed_turn(session, "a later message", call="c2")
    assert await host.sessions.flush(session) is True
    assert recording.of(session.id)[-1].name is None  # unchanged: not passed
    session.append(RENAME, {"name": "Groceries"})
    assert await host.sessions.flush(session) is True
    assert recording.of(session.id)[-1].name == "Groceries"
    assert (await stored_names(host))[session.id] == "Groceries"


async def test_a_resumed_session_starts_from_the_name_of_its_stored_log(
    host: LiveHost, recording: RecordingSQLite
) -> None:
    session = (await host.create_session()).session
    typed_turn(session, "remind me to stretch")
    await host.close_session(session.id)
    resumed = (await host.resume_session(session.id)).session
    typed_turn(resumed, "something else", call="c2")
    assert await host.sessions.flush(resumed) is True
    calls = recording.of(session.id)
    assert [c.name for c in calls if c.name is not None] == ["remind me to stretch"]
    resumed.append(RENAME, {"name": "Stretching"})
    assert await host.sessions.flush(resumed) is True
    assert (await stored_names(host))[session.id] == "Stretching"


async def test_a_fork_stores_the_name_it_inherited_with_its_header(
    host: LiveHost, recording: RecordingSQLite
) -> None:
    parent = (await host.create_session()).session
    parent.append(RENAME, {"name": "Groceries"})
    assert await host.sessions.flush(parent) is True
    child = (await host.fork_session(parent.id)).session
    (created,) = [c for c in recording.of(child.id) if c.header]
    assert created.name == "Groceries"
    assert (await stored_names(host))[child.id] == "Groceries"


async def test_a_failed_write_passes_the_name_again(
    host: LiveHost, recording: RecordingSQLite
) -> None:
    faulty = host.backend
    assert isinstance(faulty, Faults)
    session = (await host.create_session()).session
    session.append(RENAME, {"name": "Groceries"})
    faulty.plan.fail_appends = 1
    with pytest.raises(StorageError, match="injected"):
        await host.sessions.flush(session)
    assert await host.sessions.flush(session) is True
    assert recording.of(session.id)[-1].name == "Groceries"
    assert (await stored_names(host))[session.id] == "Groceries"


async def test_reindex_stores_a_name_storage_lost_and_the_rows(
    clock: ManualClock, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    async with LiveHost(backend=RecordingSQLite(data), clock=clock, model="none") as host:
        pins = load_pins(host)
        session = (await host.create_session()).session
        typed_turn(session, "remind me to stretch")
        pins.pin(session, "a", 1_785_931_260_000, "stretch")
        session_id = session.id
    db = sqlite3.connect(data / "dsh.sqlite3")
    with db:  # storage lost the names and the board (as a store from before them has none)
        db.execute("DELETE FROM names")
        db.execute("DELETE FROM board")
    db.close()
    async with LiveHost(backend=RecordingSQLite(data), clock=clock, model="none") as host:
        pins = load_pins(host)
        assert (await stored_names(host))[session_id] is None
        assert await host.reindex() == (1, 0, [])
        assert (await stored_names(host))[session_id] == "remind me to stretch"
        rows = await host.backend.board_page("pins", "pending", limit=5)
        assert [(r.session_id, r.session_name, r.key) for r in rows] == [
            (session_id, "remind me to stretch", "a")
        ]
        assert host.sessions.get(session_id) is None  # reindexed Sessions stay cold
        assert pins.opened == [(session_id, "resumed")]
