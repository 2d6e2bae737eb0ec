"""The one subscription API of a Session store: its kinds, its handle and one test per ordering
rule of :mod:`dsh_host._observations` (the rule's number is in each test's name)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import BoardEntry, EventRejectedError, SessionNotLiveError
from dsh_host import (
    Appended,
    BoardChanged,
    Detached,
    Flushed,
    LiveHost,
    LiveSession,
    LiveSessionStore,
    Observation,
    Opened,
    SessionHooks,
    Streamed,
    WakeChanged,
)
from dsh_host.persistence import MemoryBackend, StoredSession

ALL = (Opened, Appended, Flushed, WakeChanged, BoardChanged, Detached, Streamed)


class Recording(SessionHooks):
    """Plugin hooks that write into the same list as the subscribers."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def session_opened(self, session: LiveSession, reason: Any) -> None:
        self.log.append(f"hook opened {reason}")

    def session_flushed(self, session: LiveSession, through_seq: int) -> None:
        self.log.append(f"hook flushed {through_seq}")


class Ledger:
    """A stand-in for the persistence coordinator's durability answers."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.durable = 0

    def durable_length(self, session: object) -> int:
        return self.durable

    def acknowledged(self, session: object, through_seq: int) -> None:
        self.log.append(f"acknowledged {through_seq}")
        self.durable = max(self.durable, through_seq)


def describe(observation: Observation) -> str:
    match observation:
        case Opened(reason=reason):
            return f"opened {reason}"
        case Appended(event=event):
            return f"appended {event.type}"
        case Flushed(through_seq=through_seq):
            return f"flushed {through_seq}"
        case WakeChanged(plugin=plugin, at_ms=at_ms):
            return f"wake {plugin} {at_ms}"
        case BoardChanged(plugin=plugin, key=key, entry=entry):
            return f"board {plugin} {key} {None if entry is None else entry.at_ms}"
        case Detached():
            return "detached"
        case Streamed(payload=payload):
            return f"streamed {payload['text']}"
    raise AssertionError(observation)


async def durable(_session: object) -> bool:
    return True


def stored_loader(session: LiveSession) -> Callable[[str], Any]:
    async def load(session_id: str) -> StoredSession | None:
        return StoredSession(header=session.header, events=tuple(session.events), wakes={})

    return load


# -- the API ---------------------------------------------------------------------------------


def test_one_subscription_takes_the_kinds_it_names_and_one_handle_ends_it():
    store = LiveSessionStore(plugin_names=lambda: ["p"])
    seen: list[str] = []
    unsubscribe = store.subscribe(lambda o: seen.append(describe(o)), (Opened, Detached))
    session = store.create()
    session.append("a/b", {})
    store.request_wake(session, "p", 5)
    store.detach(session)
    assert seen == ["opened created", "detached"]
    unsubscribe()
    unsubscribe()  # idempotent
    store.detach(store.create())
    assert seen == ["opened created", "detached"]


def test_a_kind_named_twice_is_delivered_once():
    store = LiveSessionStore()
    seen: list[str] = []
    store.subscribe(lambda o: seen.append(describe(o)), (Opened, Opened))
    store.create()
    assert seen == ["opened created"]


@pytest.mark.parametrize(
    "kinds",
    [Observation, int, (), (Opened, str), [Opened], "Opened", None],
    ids=["the base", "not one", "none", "one wrong", "a list", "a name", "nothing"],
)
def test_bad_kinds_are_refused_and_subscribe_nothing(kinds):
    store = LiveSessionStore()
    seen: list[object] = []
    with pytest.raises(TypeError, match=r"^kinds must be one or more of Opened, Appended, "):
        store.subscribe(seen.append, kinds)
    store.create().append("a/b", {})
    assert seen == []


def test_a_callback_that_cannot_be_called_is_refused():
    store = LiveSessionStore()
    with pytest.raises(TypeError, match=r"^callback must be callable, got 3$"):
        store.subscribe(3, Opened)  # type: ignore[call-overload]
    store.create()  # nothing was subscribed: nothing to call


def test_observations_are_frozen():
    store = LiveSessionStore()
    seen: list[Opened] = []
    store.subscribe(seen.append, Opened)
    store.create()
    with pytest.raises(AttributeError):
        seen[0].reason = "forked"  # type: ignore[misc]


def test_no_observation_is_built_for_a_kind_nobody_subscribed_to(monkeypatch):
    built: list[object] = []
    real_init = Appended.__init__

    def counting_init(self: Appended, *args: Any) -> None:
        built.append(args)
        real_init(self, *args)

    monkeypatch.setattr(Appended, "__init__", counting_init)
    store = LiveSessionStore()
    session = store.create()
    session.append_all([("a/b", {}), ("c/d", {})])
    assert built == []
    store.subscribe(lambda o: None, Streamed)  # another kind changes nothing
    session.append("e/f", {})
    assert built == []
    seen: list[Appended] = []
    store.subscribe(seen.append, Appended)
    session.append("g/h", {})
    assert len(built) == 1  # one observation per event once somebody subscribed
    assert seen[0].event.type == "g/h"


# -- rule 1: subscription order ----------------------------------------------------------------


def test_rule_1_subscribers_of_a_kind_are_called_in_subscription_order():
    store = LiveSessionStore()
    order: list[str] = []
    for name in ("first", "second", "third"):
        store.subscribe(lambda o, name=name: order.append(name), (Opened, Appended))
    store.create().append("a/b", {})
    assert order == ["first", "second", "third"] * 2


async def test_rule_1_the_host_subscribes_its_coordinator_before_anything_else(clock):
    backend = MemoryBackend()
    async with LiveHost(backend=backend, clock=clock) as host:
        agent = await host.create_session()
        session_id = agent.session.id
        agent.session.append("user/message", {"text": "x"})
        await host.close_session(session_id)
        stored = await backend.load(session_id)
        assert stored is not None
        durable_at_open: list[tuple[int, int]] = []
        host.sessions.subscribe(
            lambda o: durable_at_open.append(
                (o.stored_length, host.sessions.durable_length(o.session))
            ),
            Opened,
        )
        await host.resume_session(session_id)
        assert durable_at_open == [(len(stored.events), len(stored.events))]


# -- rule 2: Opened comes first ------------------------------------------------------------------


async def test_rule_2_opened_comes_before_the_end_seed_and_the_plugins_hook():
    log: list[str] = []
    store = LiveSessionStore(hooks=Recording(log))
    store.subscribe(lambda o: log.append(describe(o)), ALL)
    parent = store.create()
    parent.append("user/message", {"text": "x"})
    log.clear()
    store.fork(parent)
    assert log == ["opened forked", "appended session/end-seed", "hook opened forked"]
    log.clear()
    store.detach(parent)
    log.clear()
    store.set_loader(stored_loader(parent))
    await store.resume(parent.id)
    assert log == ["opened resumed", "appended session/end-seed", "hook opened resumed"]


# -- rule 3: Appended after admission ------------------------------------------------------------


def test_rule_3_a_batch_is_published_after_all_of_it_was_admitted():
    class Refuse(SessionHooks):
        def event_validate(self, session: LiveSession, event: Any) -> None:
            if event.type == "refuse/me":
                raise EventRejectedError("no", plugin="test", event=event)

    store = LiveSessionStore(hooks=Refuse())
    session = store.create()
    seen: list[tuple[int, int]] = []
    store.subscribe(lambda o: seen.append((o.event.seq, len(o.session.events))), Appended)
    session.append_all([("a/b", {}), ("c/d", {}), ("e/f", {})])
    assert seen == [(0, 3), (1, 3), (2, 3)]  # in seq order, the whole batch already logged
    with pytest.raises(EventRejectedError):
        session.append_all([("g/h", {}), ("refuse/me", {})])
    assert seen == [(0, 3), (1, 3), (2, 3)]  # a refused batch publishes nothing


# -- rule 4: durable before Flushed --------------------------------------------------------------


async def test_rule_4_the_acknowledgement_is_recorded_before_flushed_and_plugins_come_last():
    log: list[str] = []
    store = LiveSessionStore(hooks=Recording(log))
    ledger = Ledger(log)
    store.set_durability(ledger)
    store.subscribe(
        lambda o: log.append(f"{describe(o)} durable={store.durable_length(o.session)}"), Flushed
    )
    store.subscribe(lambda o: log.append("second subscriber"), Flushed)
    session = store.create()
    session.append("a/b", {})
    log.clear()
    assert await store.flush(session) is False  # no listener: not durable, nothing published
    assert log == []
    store.add_flush_listener(durable)
    assert await store.flush(session) is True
    assert log == ["acknowledged 1", "flushed 1 durable=1", "second subscriber", "hook flushed 1"]


# -- rule 5: WakeChanged after the change --------------------------------------------------------


def test_rule_5_wake_changed_follows_a_change_and_reads_the_new_entry():
    store = LiveSessionStore(plugin_names=lambda: ["p"])
    session = store.create()
    seen: list[tuple[int | None, dict[str, int]]] = []
    store.subscribe(lambda o: seen.append((o.at_ms, dict(store.wakes(o.session)))), WakeChanged)
    store.request_wake(session, "p", 5)
    store.request_wake(session, "p", 5)  # the standing value: nothing changed, nothing published
    store.request_wake(session, "p", None)
    store.request_wake(session, "p", None)
    assert seen == [(5, {"p": 5}), (None, {})]
    with pytest.raises(ValueError, match="loaded plugin"):
        store.request_wake(session, "q", 1)
    assert len(seen) == 2  # a refused request publishes nothing


def test_rule_5_board_changed_follows_a_change_and_reads_the_new_row():
    store = LiveSessionStore(plugin_names=lambda: ["p"])
    session = store.create()
    seen: list[tuple[str, dict[tuple[str, str], BoardEntry]]] = []
    store.subscribe(
        lambda o: seen.append((describe(o), dict(store.posted(o.session)))), BoardChanged
    )
    row = BoardEntry(kind="pending", at_ms=5, data={"text": "x"})
    store.post(session, "p", "k", row)
    store.post(session, "p", "k", BoardEntry(kind="pending", at_ms=5, data={"text": "x"}))
    store.post(session, "p", "k", None)
    store.post(session, "p", "k", None)  # the standing value: nothing changed, nothing published
    assert seen == [("board p k 5", {("p", "k"): row}), ("board p k None", {})]
    with pytest.raises(ValueError, match="loaded plugin"):
        store.post(session, "q", "k", row)
    assert len(seen) == 2  # a refused post publishes nothing


# -- rule 6: Detached after leaving --------------------------------------------------------------


def test_rule_6_detached_comes_once_the_session_left_the_live_set():
    store = LiveSessionStore(plugin_names=lambda: ["p"])
    session = store.create()
    store.request_wake(session, "p", 7)
    seen: list[object] = []

    def on_detached(o: Detached) -> None:
        with pytest.raises(SessionNotLiveError):
            o.session.append("a/b", {})
        seen.append(
            (store.is_live(o.session), store.get(o.session.id), dict(store.wakes(o.session)))
        )

    store.subscribe(on_detached, Detached)
    store.detach(session)
    store.detach(session)  # already cold: nothing more
    assert seen == [(False, None, {"p": 7})]


# -- rule 7: Streamed only while live ------------------------------------------------------------


def test_rule_7_a_payload_for_a_session_not_live_here_is_dropped():
    store = LiveSessionStore()
    seen: list[str] = []
    store.subscribe(lambda o: seen.append(describe(o)), Streamed)
    session = store.create()
    store.publish_stream(session, {"text": "live"})
    store.detach(session)
    store.publish_stream(session, {"text": "cold"})
    other = LiveSessionStore().create()
    store.publish_stream(other, {"text": "elsewhere"})
    assert seen == ["streamed live"]


# -- rule 8: failures are contained --------------------------------------------------------------


async def _cause(store: LiveSessionStore, kind: type[Observation]) -> None:
    session = store.create()
    if kind is Appended:
        session.append("a/b", {})
    elif kind is Flushed:
        store.add_flush_listener(durable)
        assert await store.flush(session) is True
    elif kind is WakeChanged:
        store.request_wake(session, "p", 5)
        assert store.wakes(session) == {"p": 5}
    elif kind is BoardChanged:
        store.post(session, "p", "k", BoardEntry(kind="pending", at_ms=5))
        assert dict(store.posted(session)) == {("p", "k"): BoardEntry(kind="pending", at_ms=5)}
    elif kind is Detached:
        store.detach(session)
        assert not store.is_live(session)
    elif kind is Streamed:
        store.publish_stream(session, {"text": "x"})


@pytest.mark.parametrize(
    ("kind", "logged"),
    [
        (Opened, "session.open_observer_failed"),
        (Appended, "session.append_observer_failed"),
        (Flushed, "session.flushed_observer_failed"),
        (WakeChanged, "session.wake_observer_failed"),
        (BoardChanged, "session.board_observer_failed"),
        (Detached, "session.detach_observer_failed"),
        (Streamed, "session.stream_observer_failed"),
    ],
)
async def test_rule_8_a_failing_subscriber_is_logged_and_the_others_still_run(kind, logged):
    store = LiveSessionStore(plugin_names=lambda: ["p"])

    def broken(o: Observation) -> None:
        raise RuntimeError("subscriber bug")

    seen: list[type[Observation]] = []
    store.subscribe(broken, kind)
    store.subscribe(lambda o: seen.append(type(o)), kind)
    with capture_logs() as logs:
        await _cause(store, kind)
    assert seen == [kind]
    assert [entry["event"] for entry in logs] == [logged]
    assert len(store.live()) == (0 if kind is Detached else 1)  # the operation went on


# -- rule 9: deliveries nest ---------------------------------------------------------------------


def test_rule_9_an_observation_caused_inside_a_callback_reaches_everyone_first():
    store = LiveSessionStore()
    session = store.create()
    first: list[str] = []
    second: list[str] = []

    def appends_once(o: Appended) -> None:
        first.append(o.event.type)
        if o.event.type == "x/outer":
            session.append("x/inner", {})

    store.subscribe(appends_once, Appended)
    store.subscribe(lambda o: second.append(o.event.type), Appended)
    session.append("x/outer", {})
    assert first == ["x/outer", "x/inner"]
    assert second == ["x/inner", "x/outer"]  # later in the order: it hears the inner one first


# -- rule 10: changes during a delivery ----------------------------------------------------------


def test_rule_10_subscribing_or_unsubscribing_during_a_delivery_counts_from_then_on():
    store = LiveSessionStore()
    session = store.create()
    late: list[str] = []
    dropped: list[str] = []
    handles: dict[str, Callable[[], None]] = {}

    def changes(o: Appended) -> None:
        if o.event.type == "x/first":
            handles["late"] = store.subscribe(lambda o: late.append(o.event.type), Appended)
            handles["dropped"]()

    store.subscribe(changes, Appended)
    handles["dropped"] = store.subscribe(lambda o: dropped.append(o.event.type), Appended)
    session.append("x/first", {})
    session.append("x/second", {})
    assert late == ["x/second"]  # subscribed during the first delivery: hears the next one
    assert dropped == []  # unsubscribed during the first delivery: not called by it
