"""The outbox end to end in one host: a plugin's notice is filed with its events, the sender
sends it once per channel and records what happened, on SQLite on disk.

Channels here are scripted (each send answers the next :class:`Outcome` of its script), so every
path of the sender is reached without a network: delivered, refused, retried after a back-off,
ambiguous, superseded, given up. The real channels (apprise, Web Push) against loopback
receivers are tests/notify and tests/notify/test_reach.py.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from dsh_hookspecs import Host, JSONValue, Notice, hookimpl
from dsh_host import LiveHost
from dsh_host.notify import Message, Outcome
from dsh_host.notify._sender import MAX_ATTEMPTS, Channels, OutboxSender, Route, retry_delay
from dsh_host.persistence import SQLiteBackend, Write
from dsh_host.persistence._outbox import OutboxChange, OutboxRow
from dsh_host.testing import ManualClock

PLUGIN = "notes"
NOTE = "test/note"
T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z


class Notes:
    """Appends a ``test/note`` event and files its notice in the same step, like a plugin."""

    def __init__(self) -> None:
        self.host: Host | None = None

    @hookimpl
    def dsh_plugin_start(self, host: Host, config: Mapping[str, JSONValue]) -> None:
        del config
        self.host = host

    def note(self, session_id: str, key: str, notice: Notice | None) -> None:
        assert self.host is not None
        session = self.host.sessions.get(session_id)
        assert session is not None
        session.append(NOTE, {"key": key})
        self.host.sessions.notify(session, PLUGIN, key, notice)


class Script:
    """One scripted channel: answers the queued outcomes in order (then delivered)."""

    def __init__(self, channel_id: str, *, dedupes: bool = True) -> None:
        self.id = channel_id
        self.dedupes = dedupes
        self.outcomes: list[Outcome] = []
        self.sent: list[Message] = []

    def __call__(self, message: Message, *, timeout: float) -> Outcome:
        del timeout
        self.sent.append(message)
        return self.outcomes.pop(0) if self.outcomes else Outcome(status="delivered")


class ScriptedChannels(Channels):
    def __init__(self, *scripts: Script) -> None:
        super().__init__()
        self.scripts = {script.id: script for script in scripts}
        self.forgotten: list[str] = []

    def ids(self) -> tuple[str, ...]:
        return tuple(self.scripts)

    def route(self, channel_id: str) -> Route | None:
        script = self.scripts.get(channel_id)
        if script is None:
            return None
        return Route(script.id, f"label of {script.id}", "Scripted", script.dedupes, script)

    def forget(self, channel_id: str) -> None:
        self.forgotten.append(channel_id)
        self.scripts.pop(channel_id, None)


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def notice(title: str = "Stretch", **fields: Any) -> Notice:
    return Notice(title=title, body="Stand up and stretch", at_ms=T0, **fields)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


async def rows_of(backend: SQLiteBackend, session_id: str) -> Sequence[OutboxRow]:
    return await backend.outbox_of(session_id)


MakeWorld = Callable[..., Awaitable["World"]]


class World:
    def __init__(self, host: LiveHost, backend: SQLiteBackend, notes: Notes, clock: ManualClock):
        self.host, self.backend, self.notes, self.clock = host, backend, notes, clock

    async def session(self) -> str:
        agent = await self.host.create_session()
        return agent.session.id

    async def file(self, session_id: str, key: str, filed: Notice | None) -> None:
        self.notes.note(session_id, key, filed)
        session = self.host.sessions.get(session_id)
        assert session is not None
        assert await self.host.sessions.flush(session)

    async def settled(self, session_id: str, count: int = 1) -> list[OutboxRow]:
        async with asyncio.timeout(10):
            while True:
                rows = await rows_of(self.backend, session_id)
                quiet = all(
                    r.status != "sending"
                    and (r.status != "pending" or r.next_ms > self.clock.now_ms())
                    for r in rows
                )
                if len(rows) >= count and quiet:
                    return list(rows)
                await asyncio.sleep(0.01)

    def advance(self, seconds: float) -> None:
        self.clock.set_wall(self.clock.now_ms() + int(seconds * 1000))
        assert self.host.sender is not None
        self.host.sender.kick()


@pytest.fixture
async def make_world(
    tmp_path: Path, clock: ManualClock
) -> AsyncIterator[Callable[..., Awaitable[World]]]:
    hosts: list[LiveHost] = []

    async def make(*scripts: Script, **sender: object) -> World:
        backend = SQLiteBackend(tmp_path / "data")
        notes = Notes()
        host = LiveHost(backend=backend, clock=clock, channels=ScriptedChannels(*scripts))
        await host.start()
        host.load_plugin(PLUGIN, factory=lambda: notes)
        assert host.sender is not None
        host.sender.poll_seconds = 0.05
        for name, value in sender.items():
            setattr(host.sender, name, value)
        hosts.append(host)
        return World(host, backend, notes, clock)

    yield make
    for host in hosts:
        await host.close()  # idempotent: most tests closed theirs


# -- failure paths first ---------------------------------------------------------------------------
async def test_a_refused_send_is_failed_with_its_reason_and_never_retried(
    make_world: MakeWorld,
) -> None:
    phone = Script("phone")
    phone.outcomes = [Outcome(status="failed", reason="401 Unauthorized (check the address)")]
    world = await make_world(phone)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    [row] = await world.settled(sid)
    assert (row.status, row.error, row.attempts) == (
        "failed",
        "401 Unauthorized (check the address)",
        1,
    )
    world.advance(7200)
    # A later notice is sent: the sender has looked again since, and left the refused one.
    await world.file(sid, "r2@t", notice())
    await wait_for(lambda: len(phone.sent) == 2)
    assert [m.key.split("/")[2] for m in phone.sent] == ["r1@t", "r2@t"]
    await world.host.close()


async def test_a_transient_failure_is_retried_after_the_back_off_then_delivered(
    make_world: MakeWorld,
) -> None:
    hook = Script("hook")
    hook.outcomes = [Outcome(status="retry", reason="503 Service Unavailable")]
    world = await make_world(hook)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    [row] = await world.settled(sid)
    assert (row.status, row.error, row.attempts) == ("pending", "503 Service Unavailable", 1)
    waited = (row.next_ms - T0) / 1000
    assert 15 <= waited <= 30  # about 30 s, jittered down to half
    world.advance(waited)
    await wait_for(lambda: len(hook.sent) == 2)
    [row] = await world.settled(sid)
    assert (row.status, row.attempts, row.error) == ("delivered", 2, None)
    assert hook.sent[0].key == hook.sent[1].key  # one key on every attempt
    await world.host.close()


async def test_retry_after_is_honoured(make_world: MakeWorld) -> None:
    hook = Script("hook")
    hook.outcomes = [Outcome(status="retry", reason="429 Too Many Requests", retry_after=120)]
    world = await make_world(hook)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    [row] = await world.settled(sid)
    assert row.next_ms - T0 == 120_000
    await world.host.close()


async def test_an_ambiguous_send_is_final_on_a_channel_that_cannot_drop_a_repeat(
    make_world: MakeWorld,
) -> None:
    mail = Script("mail", dedupes=False)
    hook = Script("hook", dedupes=True)
    timed_out = Outcome(status="unknown", reason="timed out after the request was sent")
    mail.outcomes, hook.outcomes = [timed_out], [timed_out]
    world = await make_world(mail, hook)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    rows = {row.channel: row for row in await world.settled(sid, 2)}
    assert rows["mail"].status == "unknown"
    assert rows["hook"].status == "pending"  # the receiver drops a repeat by key: sent again
    world.advance(60)
    await wait_for(lambda: len(hook.sent) == 2)
    rows = {row.channel: row for row in await world.settled(sid, 2)}
    assert rows["hook"].status == "delivered"
    assert len(mail.sent) == 1
    await world.host.close()


async def test_a_claim_left_by_a_dead_host_is_resent_only_where_a_repeat_is_dropped(
    tmp_path: Path, clock: ManualClock
) -> None:
    backend = SQLiteBackend(tmp_path / "data")
    await backend.open()
    from dsh_host.conformance import make_header

    header = make_header("s-dead")
    await backend.append(
        Write(
            "s-dead",
            0,
            [],
            header,
            outbox=[OutboxChange(PLUGIN, "r1@t", notice(), ("mail", "hook"), T0)],
        ),
    )
    # A host claims both, "sends", and dies before settling.
    claims = await backend.claim_outbox(T0, 10, "dead-host", T0 + 30_000)
    assert len(claims) == 2
    await backend.close()

    mail, hook = Script("mail", dedupes=False), Script("hook", dedupes=True)
    clock.set_wall(T0 + 31_000)  # the dead host's claim ran out
    backend = SQLiteBackend(tmp_path / "data")
    sender = OutboxSender(backend, ScriptedChannels(mail, hook), clock, poll_seconds=0.05)
    await backend.open()
    sender.start()
    try:

        async def final() -> dict[str, OutboxRow]:
            return {row.channel: row for row in await backend.outbox_of("s-dead")}

        async with asyncio.timeout(10):
            while {r.status for r in (await final()).values()} - {"delivered", "unknown"}:
                await asyncio.sleep(0.01)
        rows = await final()
        assert rows["mail"].status == "unknown"
        assert rows["mail"].error == "the host stopped during the send; not sent again"
        assert rows["hook"].status == "delivered"
        assert (len(mail.sent), len(hook.sent)) == (0, 1)
    finally:
        await sender.stop()
        await backend.close()


async def test_a_notice_whose_next_occurrence_is_due_is_not_sent(make_world: MakeWorld) -> None:
    hook = Script("hook")
    world = await make_world(hook)
    sid = await world.session()
    world.host.sender.concurrency = 1  # type: ignore[union-attr]
    await world.file(sid, "r1@t", notice(expires_ms=T0 - 1))
    [row] = await world.settled(sid)
    assert (row.status, row.error) == ("failed", "not sent: the next occurrence was already due")
    assert hook.sent == []
    await world.host.close()


async def test_a_retry_that_would_land_after_the_next_occurrence_gives_up(
    make_world: MakeWorld,
) -> None:
    hook = Script("hook")
    hook.outcomes = [Outcome(status="retry", reason="could not connect")]
    world = await make_world(hook)
    sid = await world.session()
    await world.file(sid, "r1@t", notice(expires_ms=T0 + 5_000))
    [row] = await world.settled(sid)
    assert (row.status, row.error) == (
        "failed",
        "not sent before the next occurrence: could not connect",
    )
    await world.host.close()


async def test_it_gives_up_after_the_last_attempt(make_world: MakeWorld) -> None:
    hook = Script("hook")
    hook.outcomes = [Outcome(status="retry", reason="could not connect")] * MAX_ATTEMPTS
    world = await make_world(hook)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    for attempt in range(1, MAX_ATTEMPTS):
        [row] = await world.settled(sid)
        assert (row.status, row.attempts) == ("pending", attempt)
        world.advance(3600)
        sends = attempt + 1
        await wait_for(lambda: len(hook.sent) == sends)  # noqa: B023 - awaited at once
    [row] = await world.settled(sid)
    assert (row.status, row.attempts) == ("failed", MAX_ATTEMPTS)
    assert row.error == f"gave up after {MAX_ATTEMPTS} attempts: could not connect"
    await world.host.close()


async def test_a_channel_removed_since_is_failed_plainly_and_a_gone_one_forgotten(
    make_world: MakeWorld,
) -> None:
    push = Script("push")
    push.outcomes = [Outcome(status="failed", reason="410 Gone", gone=True)]
    world = await make_world(push)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    [row] = await world.settled(sid)
    assert row.status == "failed"
    assert world.host.channels.forgotten == ["push"]  # type: ignore[union-attr]
    # A notice filed later goes to the channels there are now: none.
    await world.file(sid, "r2@t", notice())
    assert [r.key for r in await rows_of(world.backend, sid)] == ["r1@t"]
    await world.host.close()


async def test_a_sender_that_raises_is_a_retry_not_a_crash(make_world: MakeWorld) -> None:
    class Broken(Script):
        def __call__(self, message: Message, *, timeout: float) -> Outcome:
            raise RuntimeError("boom")

    world = await make_world(Broken("hook"))
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    [row] = await world.settled(sid)
    assert (row.status, row.error) == ("pending", "the sender failed (RuntimeError)")
    await world.host.close()


# -- what works ----------------------------------------------------------------------------------
async def test_each_channel_gets_the_notice_once_with_one_key_and_a_link(
    tmp_path: Path, clock: ManualClock
) -> None:
    phone, hook = Script("phone"), Script("hook")
    backend = SQLiteBackend(tmp_path / "data")
    notes = Notes()
    host = LiveHost(
        backend=backend,
        clock=clock,
        channels=ScriptedChannels(phone, hook),
        public_url="https://dsh.example",
    )
    await host.start()
    host.load_plugin(PLUGIN, factory=lambda: notes)
    world = World(host, backend, notes, clock)
    sid = await world.session()
    await world.file(sid, "r1@t", notice(data={"scheduleId": "r1"}))
    await world.file(sid, "r1@t", notice())  # the same decision again: nothing new
    rows = await world.settled(sid, 2)
    assert sorted((r.channel, r.status) for r in rows) == [
        ("hook", "delivered"),
        ("phone", "delivered"),
    ]
    assert len(phone.sent) == len(hook.sent) == 1
    [message] = phone.sent
    assert message.key == f"{sid}/{PLUGIN}/r1@t/phone"
    assert message.link == f"https://dsh.example/?session={sid}"
    assert (message.title, message.body, dict(message.data)) == (
        "Stretch",
        "Stand up and stretch",
        {"scheduleId": "r1"},
    )
    await host.close()


async def test_a_withdrawn_notice_is_not_sent(make_world: MakeWorld, clock: ManualClock) -> None:
    hook = Script("hook")
    world = await make_world(hook)
    sid = await world.session()
    await world.file(sid, "r1@t#1", notice(not_before_ms=T0 + 300_000))
    await world.file(sid, "r1@t#1", None)
    world.advance(600)
    await world.file(sid, "r2@t", notice())  # sent: the sender looked again since
    await wait_for(lambda: len(hook.sent) == 1)
    rows = {row.key: row.status for row in await rows_of(world.backend, sid)}
    assert rows == {"r1@t#1": "withdrawn", "r2@t": "delivered"}
    assert [m.key.split("/")[2] for m in hook.sent] == ["r2@t"]
    await world.host.close()


async def test_a_host_without_channels_files_nothing(tmp_path: Path, clock: ManualClock) -> None:
    backend = SQLiteBackend(tmp_path / "data")
    notes = Notes()
    host = LiveHost(backend=backend, clock=clock)
    await host.start()
    host.load_plugin(PLUGIN, factory=lambda: notes)
    assert host.sender is None
    world = World(host, backend, notes, clock)
    sid = await world.session()
    await world.file(sid, "r1@t", notice())
    assert await rows_of(backend, sid) == []
    await host.close()


def test_retry_delay_doubles_to_an_hour_jittered_to_between_half_and_all() -> None:
    assert [retry_delay(n, rng=lambda: 1.0) for n in (1, 2, 3, 8, 20)] == [
        30.0,
        60.0,
        120.0,
        3600.0,
        3600.0,
    ]
    assert retry_delay(1, rng=lambda: 0.0) == 15.0
    assert retry_delay(3, retry_after=7200) == 3600.0
    assert retry_delay(3, retry_after=5) == 5


class Gate(Script):
    """Sends that wait for the test to open them, counting how many run at once."""

    def __init__(self, channel_id: str) -> None:
        super().__init__(channel_id)
        self.open = threading.Event()
        self.lock = threading.Lock()
        self.running = self.most = 0

    def __call__(self, message: Message, *, timeout: float) -> Outcome:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.open.wait(10)
        with self.lock:
            self.running -= 1
        return super().__call__(message, timeout=timeout)


async def test_while_cold_delivery_delivers_a_herd_its_messages_wait_then_all_go(
    make_world: MakeWorld,
) -> None:
    gate = Gate("hook")
    gate.open.set()
    delivering = [True]
    world = await make_world(gate, defer=lambda: delivering[0], defer_seconds=3600.0)
    sid = await world.session()
    for key in ("a", "b", "c"):
        await world.file(sid, key, notice())
    # A later pass has seen them (each filing kicked it) and sent none: all still pending.
    assert {row.status for row in await rows_of(world.backend, sid)} == {"pending"}
    assert gate.sent == []
    delivering[0] = False  # the herd is delivered
    await wait_for(lambda: len(gate.sent) == 3)
    assert {row.status for row in await world.settled(sid, 3)} == {"delivered"}
    await world.host.close()


async def test_a_long_delivery_lets_one_message_through_at_a_time(make_world: MakeWorld) -> None:
    gate = Gate("hook")
    world = await make_world(gate, defer=lambda: True, defer_seconds=0.0)
    sid = await world.session()
    for key in ("a", "b", "c"):
        await world.file(sid, key, notice())
    await wait_for(lambda: gate.running == 1)
    gate.open.set()
    await wait_for(lambda: len(gate.sent) == 3)
    assert gate.most == 1
    assert {row.status for row in await world.settled(sid, 3)} == {"delivered"}
    await world.host.close()


async def test_without_a_herd_messages_go_at_once(make_world: MakeWorld) -> None:
    gate = Gate("hook")
    world = await make_world(gate)
    sid = await world.session()
    for key in ("a", "b", "c"):
        await world.file(sid, key, notice())
    await wait_for(lambda: gate.running == 3)  # all at once
    gate.open.set()
    await wait_for(lambda: len(gate.sent) == 3)
    await world.host.close()


class _HeldSettles(SQLiteBackend):
    """Holds its first batch of settlements until released; records each batch's size."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.batches: list[int] = []
        self.release = asyncio.Event()

    async def settle_outbox_many(self, settlements):  # type: ignore[no-untyped-def]
        self.batches.append(len(settlements))
        if len(self.batches) == 1:
            await self.release.wait()
        return await super().settle_outbox_many(settlements)


async def _filed(backend: SQLiteBackend, keys: Sequence[str], channel: str) -> None:
    from dsh_host.conformance import make_header

    await backend.append(
        Write(
            "s-many",
            0,
            [],
            make_header("s-many"),
            outbox=[OutboxChange(PLUGIN, key, notice(), (channel,), T0) for key in keys],
        )
    )


async def test_sends_that_end_while_a_settle_is_written_are_settled_in_one_write(
    tmp_path: Path, clock: ManualClock
) -> None:
    backend = _HeldSettles(tmp_path / "data")
    await backend.open()
    keys = [f"r{i}@t" for i in range(12)]
    await _filed(backend, keys, "hook")
    hook = Script("hook")
    sender = OutboxSender(backend, ScriptedChannels(hook), clock, poll_seconds=0.05)
    sender.start()
    try:
        async with asyncio.timeout(10):
            while len(hook.sent) < len(keys):  # every send ends; the first settle is held
                await asyncio.sleep(0.01)
        (first,) = backend.batches  # one write under way, held
        backend.release.set()
        async with asyncio.timeout(10):
            while {r.status for r in await backend.outbox_of("s-many")} != {"delivered"}:
                await asyncio.sleep(0.01)
        assert backend.batches == [first, len(keys) - first]
        assert sorted(m.key.split("/")[2] for m in hook.sent) == sorted(keys)
    finally:
        backend.release.set()
        await sender.stop()
        await backend.close()


async def test_a_send_that_waited_too_long_for_a_thread_is_put_back_not_sent(
    tmp_path: Path, clock: ManualClock
) -> None:
    backend = SQLiteBackend(tmp_path / "data")
    await backend.open()
    await _filed(backend, ["r1@t", "r2@t"], "mail")
    gate = threading.Event()
    mail = Script("mail", dedupes=False)
    first_started = threading.Event()

    def slow(message: Message, *, timeout: float) -> Outcome:
        first_started.set()
        gate.wait(10)
        return mail(message, timeout=timeout)

    mail_route = ScriptedChannels(mail)
    mail_route.route = lambda channel_id: Route("mail", "mail", "Scripted", False, slow)  # type: ignore[method-assign]
    sender = OutboxSender(backend, mail_route, clock, poll_seconds=0.05, threads=1, timeout=1)
    sender.start()
    try:
        await asyncio.to_thread(first_started.wait, 10)
        # The second waits for the one thread; meanwhile its claim runs down past one send.
        clock.set_wall(T0 + int(sender.lease_seconds * 1000) - int(sender.send_budget * 1000) + 1)
        gate.set()
        async with asyncio.timeout(10):
            while {r.status for r in await backend.outbox_of("s-many")} != {"delivered"}:
                await asyncio.sleep(0.01)
        rows = await backend.outbox_of("s-many")
        assert sorted(r.attempts for r in rows) == [1, 2]  # put back once, then sent
        assert len(mail.sent) == 2  # each sent once
    finally:
        gate.set()
        await sender.stop()
        await backend.close()
