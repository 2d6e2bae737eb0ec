"""The Schedule plugin's rows on the host's board: every live Session's pending reminders and its
newest deliveries, kept in step with the log (posting only what changed), reconciled on resume,
never posted for a fork's inherited reminders nor for a Session that is not live."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from dsh_hookspecs import BoardEntry, Event
from dsh_host import BoardChanged, LiveHost
from dsh_host.persistence import SQLiteBackend, Write, opened
from dsh_host.testing import wait_until
from dsh_schedule import SCHEDULE_CHANGE, format_instant, parse_instant
from dsh_schedule._board import DELIVERED_KEPT, TEXT_MAX_CHARS, board_text

from .harness import START, Harness, boot_sqlite, settle_quiet

PLUGIN = "schedule"
START_MS = parse_instant(START)

Post = tuple[str, str, BoardEntry | None]


def rows(host: LiveHost, session) -> dict[str, BoardEntry]:
    """The Schedule plugin's standing rows of ``session`` by key."""
    return {
        key: entry
        for (plugin, key), entry in host.sessions.posted(session).items()
        if plugin == PLUGIN
    }


def record_posts(host: LiveHost) -> list[Post]:
    """Every board change the host publishes from now on: ``(session id, key, entry)``."""
    posts: list[Post] = []
    host.sessions.subscribe(
        lambda o: posts.append((o.session.id, o.key, o.entry)) if o.plugin == PLUGIN else None,
        BoardChanged,
    )
    return posts


def pending(at_ms: int, text: str, every: int | None = None) -> BoardEntry:
    data: dict = {"text": text}
    if every is not None:
        data["everySeconds"] = every
    return BoardEntry(kind="pending", at_ms=at_ms, data=data)


def delivered(event: Event, text: str, occurrence_ms: int, **state: object) -> BoardEntry:
    """The delivered row of the dispatch ``event``, which delivered the occurrence at
    ``occurrence_ms`` (``state``: ``done`` or ``snoozedUntil`` when set)."""
    data = {
        "text": text,
        "id": event.data["id"],  # type: ignore[index, call-overload]
        "occurrenceAt": format_instant(occurrence_ms),
        **state,
    }
    return BoardEntry(kind="delivered", at_ms=event.time, data=data)


def dispatch_events(session) -> list[Event]:
    return [
        e for e in session.events if e.type == SCHEDULE_CHANGE and e.data["operation"] == "dispatch"
    ]


def append_create(session, schedule_id: str, at_ms: int, prompt: str = "p") -> None:
    """A create written straight to the log (ids no tool makes); it is folded on the next read."""
    record = {
        "id": schedule_id,
        "kind": "at",
        "prompt": prompt,
        "scheduledAt": format_instant(at_ms),
    }
    session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "create", "schedule": record})


async def create(host: LiveHost, agent, prompt: str, **selector: int) -> str:
    value = await agent.execute_tool("schedule_create", {"prompt": prompt, **selector})
    assert isinstance(value, dict)
    assert "id" in value, value
    return str(value["id"])


async def delivered_count(host: LiveHost, session, count: int) -> None:
    await wait_until(lambda: len(dispatch_events(session)) >= count, timeout=10)
    await settle_quiet(host, timeout=10)


# ---------------------------------------------------------------------------------------------
# What is never posted


async def test_a_session_that_is_not_live_posts_nothing(h: Harness):
    posts = record_posts(h.host)
    # A change folded only after the Session went cold.
    agent = await h.agent()
    session = agent.session
    append_create(session, "late-1", START_MS + 60_000)
    await h.host.close_session(session.id)
    assert h.host.sessions.get(session.id) is None
    assert [r.id for r in h.plugin.folds.of(session).active] == ["late-1"]
    # A fold first built after the Session went cold (it was opened without the plugin).
    await h.host.unload_plugin(PLUGIN)
    other = await h.agent()
    append_create(other.session, "late-2", START_MS + 60_000)
    await h.host.close_session(other.session.id)
    h.host.load_plugin(PLUGIN)
    assert [r.id for r in h.plugin.folds.of(other.session).active] == ["late-2"]
    assert posts == []
    assert rows(h.host, session) == {}
    assert rows(h.host, other.session) == {}


async def test_a_fork_posts_none_of_its_parents_reminders(h: Harness):
    agent = await h.agent()
    await create(h.host, agent, "parent soon", after_seconds=60)
    await create(h.host, agent, "parent later", every_seconds=600)
    h.clock.advance(60)
    await delivered_count(h.host, agent.session, 1)
    parent_rows = rows(h.host, agent.session)
    assert {entry.kind for entry in parent_rows.values()} == {"pending", "delivered"}
    posts = record_posts(h.host)
    child = await h.host.fork_session(agent.session.id)
    await settle_quiet(h.host)
    assert rows(h.host, child.session) == {}
    assert posts == []
    # The fork's own reminder is its own row; the parent's rows are untouched.
    own = await create(h.host, child, "child's own", after_seconds=120)
    assert rows(h.host, child.session) == {own: pending(h.clock.now_ms() + 120_000, "child's own")}
    assert rows(h.host, agent.session) == parent_rows
    assert [(sid, key) for sid, key, _ in posts] == [(child.session.id, own)]


async def test_ids_too_long_for_a_board_key_are_left_off(h: Harness):
    agent = await h.agent()
    session = agent.session
    fits, too_long = "x" * 200, "y" * 201  # a delivery key adds "@<seq>" to the id
    later = "z" * 201
    append_create(session, fits, START_MS + 60_000, "fits")
    append_create(session, too_long, START_MS + 60_000, "too long")
    append_create(session, later, START_MS + 3_600_000, "later")
    assert await h.call(agent, "schedule_list", {}) is not None  # reads (folds) the creates
    assert rows(h.host, session) == {fits: pending(START_MS + 60_000, "fits")}
    h.clock.advance(60)
    await delivered_count(h.host, session, 2)
    assert rows(h.host, session) == {}
    # Reconciled on resume, the same rows are left off.
    await h.host.close_session(session.id)
    resumed = await h.host.resume_session(session.id)
    assert rows(h.host, resumed.session) == {}


async def test_a_corrupt_stream_on_resume_removes_its_rows(h: Harness):
    agent = await h.agent()
    await create(h.host, agent, "soon", after_seconds=60)
    sid = agent.session.id
    assert set(rows(h.host, agent.session)) == {"schedule-1"}
    await h.host.unload_plugin(PLUGIN)  # write a corrupt stream without the companion
    agent.session.append(SCHEDULE_CHANGE, {"junk": True})
    await h.host.close_session(sid)
    h.host.load_plugin(PLUGIN)
    with capture_logs() as logs:
        resumed = await h.host.resume_session(sid)
    assert [e["plugin"] for e in logs if e["event"] == "session.invalid"] == [PLUGIN]
    assert rows(h.host, resumed.session) == {}
    assert await h.host.sessions.flush(resumed.session) is True
    await h.host.close_session(sid)
    again = await h.host.resume_session(sid)  # what storage holds now
    assert rows(h.host, again.session) == {}


# ---------------------------------------------------------------------------------------------
# Rows in step with the log


async def test_a_create_posts_its_pending_row(h: Harness):
    posts = record_posts(h.host)
    agent = await h.agent()
    sid = agent.session.id
    one = await create(h.host, agent, "stand up", after_seconds=60)
    assert one == "schedule-1"
    row = pending(START_MS + 60_000, "stand up")
    assert rows(h.host, agent.session) == {one: row}
    assert posts == [(sid, one, row)]
    assert "everySeconds" not in row.data  # type: ignore[operator]
    # Reading the schedule changes nothing.
    assert await h.call(agent, "schedule_list", {}) is not None
    assert posts == [(sid, one, row)]


async def test_a_delete_removes_the_row_and_only_it(h: Harness):
    agent = await h.agent()
    sid = agent.session.id
    one = await create(h.host, agent, "first", after_seconds=60)
    two = await create(h.host, agent, "second", after_seconds=120)
    posts = record_posts(h.host)
    assert await h.call(agent, "schedule_delete", {"id": one}) is not None
    assert rows(h.host, agent.session) == {two: pending(START_MS + 120_000, "second")}
    assert posts == [(sid, one, None)]


async def test_a_delivery_moves_the_reminder_from_pending_to_delivered(h: Harness):
    agent = await h.agent()
    session = agent.session
    one = await create(h.host, agent, "drink water", after_seconds=60)
    other = await create(h.host, agent, "later", after_seconds=3600)
    posts = record_posts(h.host)
    h.clock.advance(60)
    await delivered_count(h.host, session, 1)
    (dispatch,) = dispatch_events(session)
    key = f"{one}@{dispatch.seq}"
    assert dispatch.time == START_MS + 60_000
    assert rows(h.host, session) == {
        other: pending(START_MS + 3_600_000, "later"),
        key: delivered(dispatch, "drink water", START_MS + 60_000),
    }
    assert posts == [
        (session.id, one, None),
        (session.id, key, delivered(dispatch, "drink water", START_MS + 60_000)),
    ]


async def test_a_repeating_reminder_moves_its_row_to_the_next_due_instant(h: Harness):
    agent = await h.agent()
    session = agent.session
    every = await create(h.host, agent, "check the oven", every_seconds=300)
    first = START_MS + 300_000
    assert rows(h.host, session) == {every: pending(first, "check the oven", 300)}
    h.clock.advance(300)
    await delivered_count(h.host, session, 1)
    (one,) = dispatch_events(session)
    assert rows(h.host, session) == {
        every: pending(first + 300_000, "check the oven", 300),
        f"{every}@{one.seq}": delivered(one, "check the oven", first),
    }
    # Asleep past two occurrences: one delivery (the latest), and the row follows the anchor.
    h.clock.suspend(650)
    h.clock.advance(60)
    await delivered_count(h.host, session, 2)
    two = dispatch_events(session)[1]
    assert two.data["acceptedAt"] == format_instant(START_MS + 1_010_000)
    assert rows(h.host, session) == {
        every: pending(first + 3 * 300_000, "check the oven", 300),
        f"{every}@{one.seq}": delivered(one, "check the oven", first),
        # The latest occurrence at or before the delivery, anchored at creation.
        f"{every}@{two.seq}": delivered(two, "check the oven", START_MS + 900_000),
    }


async def test_only_the_newest_deliveries_are_kept(h: Harness):
    agent = await h.agent()
    session = agent.session
    count = DELIVERED_KEPT + 2
    for index in range(count):
        await create(h.host, agent, f"one-shot {index}", after_seconds=60)
    posts = record_posts(h.host)
    h.clock.advance(60)
    await delivered_count(h.host, session, count)
    events = dispatch_events(session)
    keys = [f"schedule-{index + 1}@{e.seq}" for index, e in enumerate(events)]
    assert [e.data["id"] for e in events] == [f"schedule-{i + 1}" for i in range(count)]
    assert rows(h.host, session) == {
        key: delivered(e, f"one-shot {index}", START_MS + 60_000)
        for index, (key, e) in enumerate(zip(keys, events, strict=True))
        if index >= count - DELIVERED_KEPT
    }
    removed = [key for _, key, entry in posts if entry is None and "@" in key]
    assert removed == keys[:2]
    # A batch larger than the limit: what storage is left with (the newest post of each key)
    # replaces every row before it with the batch's newest deliveries.
    batch = DELIVERED_KEPT + 5
    ids = [
        await create(h.host, agent, f"repeat {index}", every_seconds=300) for index in range(batch)
    ]
    posts.clear()
    h.clock.advance(300)
    await delivered_count(h.host, session, count + batch)
    batch_events = dispatch_events(session)[count:]
    assert len({e.data["acceptedAt"] for e in batch_events}) == 1  # one batch
    batch_keys = [f"{e.data['id']}@{e.seq}" for e in batch_events]
    delivered_rows = {k for k, entry in rows(h.host, session).items() if entry.kind == "delivered"}
    assert delivered_rows == set(batch_keys[-DELIVERED_KEPT:])
    net = {key: entry for _, key, entry in posts}
    assert {key for key, entry in net.items() if entry is None} == set(
        keys[-DELIVERED_KEPT:] + batch_keys[:-DELIVERED_KEPT]
    )
    assert {key for key, entry in net.items() if entry is not None} == set(
        batch_keys[-DELIVERED_KEPT:] + ids
    )
    assert all(net[key] == rows(h.host, session)[key] for key in ids)


async def test_text_is_cut_to_200_characters(h: Harness):
    assert TEXT_MAX_CHARS == 200
    exact, long = "é" * 200, "🙂" * 150 + " and then some more words" * 10
    assert board_text(exact) == exact
    assert board_text(long) == long[:199] + "…"
    agent = await h.agent()
    session = agent.session
    fits = await create(h.host, agent, exact, after_seconds=60)
    cut = await create(h.host, agent, long, after_seconds=60)
    assert rows(h.host, session) == {
        fits: pending(START_MS + 60_000, exact),
        cut: pending(START_MS + 60_000, long[:199] + "…"),
    }
    assert len(rows(h.host, session)[cut].data["text"]) == 200  # type: ignore[index]
    h.clock.advance(60)
    await delivered_count(h.host, session, 2)
    texts = {entry.data["text"] for entry in rows(h.host, session).values()}  # type: ignore[index]
    assert texts == {exact, long[:199] + "…"}


# ---------------------------------------------------------------------------------------------
# Restart


async def test_resume_reconciles_the_stored_rows_with_the_log(tmp_path: Path):
    data = tmp_path / "data"
    host, clock = await boot_sqlite(data, START_MS)
    try:
        agent = await host.create_session()
        kept = await create(host, agent, "kept as is", after_seconds=3600)
        lost = await create(host, agent, "lost from storage", every_seconds=600)
        outdated = await create(host, agent, "the current text", after_seconds=7200)
        done = await create(host, agent, "already delivered", after_seconds=60)
        clock.advance(60)
        await delivered_count(host, agent.session, 1)
        sid = agent.session.id
        wanted = rows(host, agent.session)
        assert set(wanted) == {
            kept,
            lost,
            outdated,
            f"{done}@{dispatch_events(agent.session)[0].seq}",
        }
    finally:
        await host.close()
    # Storage disagrees with the log: a row nobody asks for, a lost row and an outdated one.
    async with opened(SQLiteBackend(data)) as backend:
        stored = await backend.load(sid)
        assert stored is not None
        assert {key for (plugin, key) in stored.board if plugin == PLUGIN} == set(wanted)
        await backend.append(
            Write(
                sid,
                len(stored.events),
                [],
                board={
                    (PLUGIN, "schedule-99"): pending(START_MS, "a reminder that is gone"),
                    (PLUGIN, lost): None,
                    (PLUGIN, outdated): pending(START_MS + 7_200_000, "an older text"),
                },
            ),
        )
    host, clock = await boot_sqlite(data, START_MS + 120_000)
    try:
        posts = record_posts(host)
        resumed = await host.resume_session(sid)
        assert rows(host, resumed.session) == wanted
        # Only the difference is posted: the row that is right stays as it is.
        assert sorted(posts, key=lambda post: post[1]) == [
            (sid, lost, wanted[lost]),
            (sid, outdated, wanted[outdated]),
            (sid, "schedule-99", None),
        ]
        assert await host.sessions.flush(resumed.session) is True
    finally:
        await host.close()
    async with opened(SQLiteBackend(data)) as backend:
        stored = await backend.load(sid)
        assert stored is not None
        assert {
            key: entry for (plugin, key), entry in stored.board.items() if plugin == PLUGIN
        } == (wanted)
