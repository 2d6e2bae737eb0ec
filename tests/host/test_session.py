"""Sessions: envelope, strict JSON data, contiguous seq, fork seeds, end-seed, resume."""

from __future__ import annotations

import math

import pytest

from dsh_hookspecs import Event, EventRejectedError, SessionHeader
from dsh_host import Appended, ForkBoundaryError, JSONError, LiveSessionStore, SessionHooks
from dsh_host.persistence import StoredSession
from dsh_host.testing import ManualClock


def test_append_assigns_contiguous_seq_and_wall_time():
    clock = ManualClock(wall_ms=1_000)
    store = LiveSessionStore(clock=clock)
    session = store.create(cwd="/w")
    first = session.append("user/message", {"text": "a"})
    clock.advance(1.5)
    second = session.append("assistant/message", {"text": "b"})
    assert (first.seq, first.time) == (0, 1_000)
    assert (second.seq, second.time) == (1, 2_500)
    assert [e.seq for e in session.events] == [0, 1]
    assert session.header.cwd == "/w"
    assert session.header.seed_length is None


@pytest.mark.parametrize(
    "data",
    [math.nan, math.inf, {"x": -math.inf}, {1: "int key"}, {"s": {1, 2}}, object()],
)
def test_non_json_data_is_refused_and_changes_nothing(data):
    session = LiveSessionStore().create()
    with pytest.raises(JSONError):
        session.append("x/y", data)
    assert len(session.events) == 0


def test_appended_data_is_a_canonical_copy():
    session = LiveSessionStore().create()
    payload = {"list": (1, 2), "nested": {"flag": True}}
    event = session.append("x/y", payload)
    payload["nested"]["flag"] = False
    assert event.data == {"list": [1, 2], "nested": {"flag": True}}


def test_a_rejected_candidate_changes_nothing():
    class Refuse(SessionHooks):
        def event_validate(self, session, event):
            if event.type == "bad/type":
                raise EventRejectedError("no", plugin="test")

    session = LiveSessionStore(hooks=Refuse()).create()
    session.append("ok/type", {})
    with pytest.raises(EventRejectedError):
        session.append("bad/type", {})
    assert [e.type for e in session.events] == ["ok/type"]
    assert session.append("ok/type", {}).seq == 1


def test_fork_copies_the_seed_records_seed_length_and_appends_end_seed():
    store = LiveSessionStore()
    parent = store.create(cwd="/p")
    for text in ("a", "b", "c"):
        parent.append("user/message", {"text": text})
    child = store.fork(parent, 2)
    assert child.header.parent_session == parent.id
    assert child.header.seed_length == 2
    assert child.header.cwd == "/p"
    assert [e.type for e in child.events] == ["user/message", "user/message", "session/end-seed"]
    assert child.events[2].seq == 2
    assert child.events[:2] == parent.events[:2]
    # The child's own appends start right after its seed.
    assert [e.seq for e in child.events[child.header.seed_length :]] == [2]
    # The parent is untouched and independent.
    parent.append("user/message", {"text": "d"})
    assert len(child.events) == 3


@pytest.mark.parametrize("boundary", [-1, 4, True, 1.0])
def test_fork_boundary_out_of_range_is_refused(boundary):
    store = LiveSessionStore()
    parent = store.create()
    for _ in range(3):
        parent.append("user/message", {"text": "x"})
    with pytest.raises(ForkBoundaryError):
        store.fork(parent, boundary)


def test_fork_inside_an_open_turn_is_refused():
    store = LiveSessionStore()
    parent = store.create()
    parent.append("turn/start", {"messageId": "m"})
    parent.append("user/message", {"text": "x"})
    with pytest.raises(ForkBoundaryError, match="open turn"):
        store.fork(parent)
    parent.append("turn/end", {"outcome": "ok"})
    assert store.fork(parent).header.seed_length == 3
    assert store.fork(parent, 0).header.seed_length == 0


async def test_resume_loads_keeps_the_header_and_appends_end_seed_once():
    header = SessionHeader(version=1, id="s1", created_at=5, seed_length=1)
    events = (
        Event(seq=0, type="user/message", time=1, data={"text": "x"}),
        Event(seq=1, type="session/end-seed", time=2, data={}),
        Event(seq=2, type="user/message", time=3, data={"text": "y"}),
    )
    loads = []

    async def loader(session_id):
        loads.append(session_id)
        return StoredSession(header, events) if session_id == "s1" else None

    store = LiveSessionStore(loader=loader)
    session, again = await store.resume("s1"), await store.resume("s1")
    assert session is again
    assert loads == ["s1"]
    assert session.header == header
    # The stored log is the prefix; this object's own appends start right after it.
    assert tuple(session.events[:3]) == events
    assert session.events[3].seq == 3
    assert [e.type for e in session.events][-1] == "session/end-seed"
    assert len(session.events) == 4
    with pytest.raises(KeyError):
        await store.resume("missing")


def test_strict_json_refuses_overflowing_numbers_and_duplicates():
    from dsh_host import _json

    for text in ("1e999", "-1e999", "[NaN]", "Infinity", '{"a": 1, "a": 2}', "[1] x"):
        with pytest.raises(_json.JSONError):
            _json.loads(text)
    assert _json.loads("[1.5, 2, true]") == [1.5, 2, True]


def test_a_refused_end_seed_leaves_no_half_open_session():
    class RefuseEndSeed(SessionHooks):
        def event_validate(self, session, event):
            if event.type == "session/end-seed":
                raise EventRejectedError("no", plugin="test")

    store = LiveSessionStore(hooks=RefuseEndSeed())
    parent = store.create()
    parent.append("user/message", {"text": "x"})
    with pytest.raises(EventRejectedError):
        store.fork(parent)
    assert [s.id for s in store.live()] == [parent.id]


def test_append_all_is_all_or_nothing_and_validators_see_earlier_candidates():
    seen: list[tuple[int, int]] = []

    class Second(SessionHooks):
        def event_validate(self, session, event):
            seen.append((event.seq, len(session.events)))
            if event.type == "refuse/me":
                raise EventRejectedError("no", plugin="test", event=event)

    store = LiveSessionStore(hooks=Second())
    session = store.create()
    notified: list[int] = []
    store.subscribe(lambda o: notified.append(o.event.seq), Appended)
    session.append("a/b", {})
    with pytest.raises(EventRejectedError) as info:
        session.append_all([("x/y", {"n": 1}), ("refuse/me", {})])
    assert info.value.event.type == "refuse/me"
    assert [e.type for e in session.events] == ["a/b"]  # the first candidate was taken back
    assert notified == [0]  # and nobody was told about it
    assert seen[-2:] == [(1, 1), (2, 2)]  # the second candidate saw the first in the log
    events = session.append_all([("x/y", {}), ("z/w", {"k": "v"})])
    assert [e.seq for e in events] == [1, 2]
    assert notified == [0, 1, 2]
    with pytest.raises(ValueError, match="non-empty"):
        session.append_all([("x/y", {}), ("", {})])
    with pytest.raises(JSONError):
        session.append_all([("x/y", {"bad": float("nan")})])
    assert len(session.events) == 3


@pytest.mark.parametrize(
    "data",
    [{"s": "lone \ud800 surrogate"}, {"k\udfff": 1}, [10**4001], {"n": -(10**4001)}],
)
def test_values_storage_cannot_encode_are_refused_at_append(data):
    session = LiveSessionStore().create()
    with pytest.raises(JSONError):
        session.append("x/y", data)
    assert len(session.events) == 0


@pytest.mark.parametrize(
    "text",
    ['{"x": 1' + "0" * 4300 + "}", '["\\ud800"]', '{"\\udc00": 1}', "[" * 5000 + "]" * 5000],
)
def test_loads_refuses_what_the_host_could_not_store(text):
    from dsh_host import _json

    with pytest.raises(_json.JSONError):
        _json.loads(text)


def test_loads_accepts_escaped_surrogate_pairs_and_canonical_keeps_unicode():
    from dsh_host import _json

    assert _json.loads('["\\ud83d\\ude00", "caf\\u00e9"]') == ["\U0001f600", "café"]
    assert _json.canonical({"é": ("ü", 1, True, None, 1.5)}) == {"é": ["ü", 1, True, None, 1.5]}
