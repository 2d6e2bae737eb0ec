"""Notices: each delivery is filed with the host's outbox (``SessionStore.notify``) while its
dispatch is folded, so it joins the dispatch's own storage batch; a reminder with
``renotifyMinutes`` files up to three "Still due" notices, which Done or Snooze withdraw. Never
filed again on a resume, never for a fork's inherited deliveries, never with a key or data the
host would refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from dsh_hookspecs import WAKE_MAX_MS, Notice
from dsh_host import LiveHost, Notified
from dsh_schedule import SCHEDULE_CHANGE, format_instant, parse_instant
from dsh_schedule._board import renotify_notices

from .harness import START, Harness, boot_sqlite, settle_quiet
from .test_board import delivered, dispatch_events, rows
from .test_done_snooze import AT_60, delivered_one, deliveries, made

START_MS = parse_instant(START)
MINUTE = 60_000

Filed = tuple[str, str, "Notice | None"]


def record_notices(host: LiveHost) -> list[Filed]:
    """Every notice the Schedule plugin files (or withdraws) from now on:
    ``(session id, key, notice or None)``."""
    filed: list[Filed] = []
    host.sessions.subscribe(
        lambda o: filed.append((o.session.id, o.key, o.notice)) if o.plugin == "schedule" else None,
        Notified,
    )
    return filed


def data(session: Any, schedule_id: str, occurrence_at: str) -> dict[str, str]:
    occurrence = {"id": schedule_id, "occurrence_at": occurrence_at}
    actions = [
        {"action": "done", "title": "Done", "tool": "schedule_ack", "arguments": occurrence},
        {
            "action": "snooze",
            "title": "Snooze 10 min",
            "tool": "schedule_snooze",
            "arguments": {**occurrence, "minutes": 10},
        },
    ]
    return {
        "sessionId": session.id,
        "scheduleId": schedule_id,
        "occurrenceAt": occurrence_at,
        "actions": json.dumps(actions, separators=(",", ":"), ensure_ascii=False),
    }


# ---------------------------------------------------------------------------------------------
# What is never filed


async def test_a_resume_or_a_fork_files_no_notice_again(tmp_path: Path) -> None:
    host, clock = await boot_sqlite(tmp_path / "data", START_MS)
    try:
        agent = await host.create_session()
        value = await agent.execute_tool(
            "schedule_create", {"prompt": "drink water", "after_seconds": 60}
        )
        schedule_id = value["id"]  # type: ignore[index]
        filed = record_notices(host)
        clock.advance(60)
        await settle_quiet(host, timeout=10)
        assert [key for _, key, _ in filed] == [f"{schedule_id}@{AT_60}"]
        acked = await agent.execute_tool(
            "schedule_ack", {"id": schedule_id, "occurrence_at": AT_60}
        )
        assert acked["done"] is True  # type: ignore[index]
        filed.clear()
        child = await host.fork_session(agent.session.id)
        await settle_quiet(host)
        assert filed == []
        assert rows(host, child.session) == {}
        sid = agent.session.id
        wanted = rows(host, agent.session)
        (dispatch,) = dispatch_events(agent.session)
        assert wanted == {
            f"{schedule_id}@{dispatch.seq}": delivered(
                dispatch, "drink water", START_MS + MINUTE, done=True
            )
        }
    finally:
        await host.close()
    host, clock = await boot_sqlite(tmp_path / "data", START_MS + 10 * MINUTE)
    try:
        filed = record_notices(host)
        resumed = await host.resume_session(sid)
        await settle_quiet(host)
        assert rows(host, resumed.session) == wanted  # the done row, as stored
        assert filed == []
    finally:
        await host.close()


async def test_keys_or_data_the_host_would_refuse_are_not_filed(h: Harness) -> None:
    agent = await h.agent()
    session = agent.session
    nul, emoji, long = "n\x00l", "🙂" * 170, "r" * 175  # "@<instant>" adds 25 characters
    for schedule_id, extra in ((nul, {}), (emoji, {}), (long, {"renotifyMinutes": 5})):
        record = {
            "id": schedule_id,
            "kind": "at",
            "prompt": "p",
            "scheduledAt": AT_60,
            **extra,
        }
        session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "create", "schedule": record})
    assert await h.call(agent, "schedule_list", {}) is not None  # folds them, arms the owner
    filed = record_notices(h.host)
    h.clock.advance(60)
    await deliveries(h, agent, 3)
    # The NUL and the oversized data (the emoji id, escaped) are left off; the long id's key
    # fits, its "#1".."#3" would not.
    assert [(key, notice.not_before_ms) for _, key, notice in filed] == [  # type: ignore[union-attr]
        (f"{long}@{AT_60}", None)
    ]
    # Their rows are posted as ever: the delivery happened.
    assert {key.split("@")[0] for key in rows(h.host, session)} == {nul, emoji, long}


async def test_a_refused_notice_is_logged_and_the_delivery_stands(h: Harness) -> None:
    agent = await h.agent()

    def refuse(*_: object) -> None:
        raise ValueError("a notice the host does not take")

    h.host.sessions.notify = refuse  # type: ignore[method-assign]
    with capture_logs() as logs:
        one = await delivered_one(h, agent)
    (refused,) = [e for e in logs if e["event"] == "board.notice_refused"]
    assert refused["key"] == f"{one}@{AT_60}"
    assert h.dispatches(agent) == [one]
    assert h.plugin.owners[agent].faulted is False
    assert await h.call(agent, "schedule_ack", {"id": one, "occurrence_at": AT_60}) == {
        "done": True,
        "id": one,
        "occurrenceAt": AT_60,
    }


async def test_done_of_a_delivery_without_a_row_still_answers(h: Harness) -> None:
    agent = await h.agent()
    long = "x" * 199  # too long for a delivered row's key, and for a notice's
    record = {"id": long, "kind": "at", "prompt": "p", "scheduledAt": AT_60, "renotifyMinutes": 5}
    agent.session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "create", "schedule": record})
    assert await h.call(agent, "schedule_list", {}) is not None  # folds it, arms the owner
    filed = record_notices(h.host)
    h.clock.advance(60)
    await deliveries(h, agent, 1)
    value = await h.call(agent, "schedule_ack", {"id": long, "occurrence_at": AT_60})
    assert value == {"done": True, "id": long, "occurrenceAt": AT_60}
    assert filed == []
    assert rows(h.host, agent.session) == {}


# ---------------------------------------------------------------------------------------------
# The notice of a delivery


async def test_a_delivery_files_its_notice_before_any_flush_stores_its_dispatch(
    h: Harness,
) -> None:
    agent = await h.agent()
    session = agent.session
    stored: list[int] = []  # the log length each flush from now on found
    h.flush.before = lambda _: stored.append(len(session.events))
    before = h.flush.count
    filed: list[tuple[str, Notice | None, int, int]] = []
    h.host.sessions.subscribe(
        lambda o: filed.append((o.key, o.notice, len(o.session.events), h.flush.count)),
        Notified,
    )
    await made(h, agent, "Drink water\nA full glass.", after_seconds=60)
    h.clock.advance(60)
    await deliveries(h, agent, 1)
    (dispatch,) = dispatch_events(session)
    ((key, notice, length, flushes),) = filed
    assert key == f"schedule-1@{AT_60}"
    assert notice == Notice(
        title="Reminder: Drink water",
        body="Drink water\nA full glass.\n\nDue Wed 5 Aug 2026, 12:01 UTC",
        at_ms=START_MS + MINUTE,
        data=data(session, "schedule-1", AT_60),
    )
    # Filed once the dispatch was in the log and before any flush took it: the host stores it
    # in the same batch as the dispatch.
    assert length > dispatch.seq
    assert all(seen <= dispatch.seq for seen in stored[: flushes - before])
    assert any(seen > dispatch.seq for seen in stored[flushes - before :])


async def test_a_repeating_reminders_notice_is_given_up_at_its_next_occurrence(
    h: Harness,
) -> None:
    agent = await h.agent()
    session = agent.session
    await h.call(
        agent,
        "schedule_create",
        {"prompt": "stretch", "title": "Stretch", "every_seconds": 300},
    )
    await h.call(
        agent,
        "schedule_create",
        {"prompt": "stand up", "daily": {"time": "12:10:00", "time_zone": "UTC"}},
    )
    filed = record_notices(h.host)
    h.clock.advance(300)
    await deliveries(h, agent, 1)
    h.clock.advance(300)
    await deliveries(h, agent, 3)  # 12:10: one batch of both
    at_5, at_10 = format_instant(START_MS + 5 * MINUTE), format_instant(START_MS + 10 * MINUTE)
    assert {key: notice for _, key, notice in filed} == {
        f"schedule-1@{at_5}": Notice(
            title="Stretch",
            body="stretch\n\nDue Wed 5 Aug 2026, 12:05 UTC",
            at_ms=START_MS + 5 * MINUTE,
            expires_ms=START_MS + 10 * MINUTE,
            data=data(session, "schedule-1", at_5),
        ),
        f"schedule-1@{at_10}": Notice(
            title="Stretch",
            body="stretch\n\nDue Wed 5 Aug 2026, 12:10 UTC",
            at_ms=START_MS + 10 * MINUTE,
            expires_ms=START_MS + 15 * MINUTE,
            data=data(session, "schedule-1", at_10),
        ),
        # A calendar reminder's occurrence is the one its dispatch froze.
        f"schedule-2@{at_10}": Notice(
            title="Reminder: stand up",
            body="stand up\n\nDue Wed 5 Aug 2026, 12:10 (UTC)",
            at_ms=START_MS + 10 * MINUTE,
            expires_ms=START_MS + 10 * MINUTE + 86_400_000,
            data=data(session, "schedule-2", at_10),
        ),
    }


async def test_titles_and_bodies_are_cut_to_fit(h: Harness) -> None:
    agent = await h.agent()
    first_line = "é" * 300
    prompt = first_line + "\n" + "b" * 3000
    filed = record_notices(h.host)
    await delivered_one(h, agent, prompt)
    ((_, _, notice),) = filed
    assert notice is not None
    assert notice.title == "Reminder: " + "é" * 109 + "…"
    assert len(notice.title) == 120
    due = "\n\nDue Wed 5 Aug 2026, 12:01 UTC"
    assert notice.body == prompt[: 1999 - len(due)] + "…" + due
    assert len(notice.body) == 2000


# ---------------------------------------------------------------------------------------------
# Re-notification until done


def still_due(notice: Notice, k: int, minutes: int, start_ms: int) -> Notice:
    return Notice(
        title="Still due: " + notice.title,
        body=notice.body,
        at_ms=notice.at_ms,
        not_before_ms=start_ms + k * minutes * MINUTE,
        expires_ms=notice.expires_ms,
        data=notice.data,
    )


async def test_renotify_files_three_still_due_notices_and_done_withdraws_them(
    h: Harness,
) -> None:
    agent = await h.agent()
    session = agent.session
    filed = record_notices(h.host)
    one = await delivered_one(h, agent, "take the pills", title="Pills", renotify_minutes=5)
    first = Notice(
        title="Pills",
        body="take the pills\n\nDue Wed 5 Aug 2026, 12:01 UTC",
        at_ms=START_MS + MINUTE,
        data=data(session, one, AT_60),
    )
    key = f"{one}@{AT_60}"
    assert filed == [
        (session.id, key, first),
        *((session.id, f"{key}#{k}", still_due(first, k, 5, START_MS + MINUTE)) for k in (1, 2, 3)),
    ]
    filed.clear()
    await h.call(agent, "schedule_ack", {"id": one, "occurrence_at": AT_60})
    assert filed == [(session.id, f"{key}#{k}", None) for k in (1, 2, 3)]
    # Done again writes nothing and withdraws nothing.
    filed.clear()
    await h.call(agent, "schedule_ack", {"id": one, "occurrence_at": AT_60})
    assert filed == []


async def test_snooze_withdraws_them_and_the_snooze_re_notifies_in_turn(h: Harness) -> None:
    agent = await h.agent()
    session = agent.session
    one = await delivered_one(h, agent, "take the pills", renotify_minutes=10)
    filed = record_notices(h.host)
    value = await h.call(
        agent, "schedule_snooze", {"id": one, "occurrence_at": AT_60, "minutes": 30}
    )
    assert value["renotifyMinutes"] == 10  # type: ignore[index]
    key = f"{one}@{AT_60}"
    assert filed == [(session.id, f"{key}#{k}", None) for k in (1, 2, 3)]
    filed.clear()
    h.clock.advance(30 * 60)
    await deliveries(h, agent, 2)
    snooze_at = value["scheduledAt"]  # type: ignore[index]
    assert [key for _, key, _ in filed] == [
        f"schedule-2@{snooze_at}",
        *(f"schedule-2@{snooze_at}#{k}" for k in (1, 2, 3)),
    ]


async def test_they_stop_at_the_next_occurrence(h: Harness) -> None:
    agent = await h.agent()
    await h.call(
        agent, "schedule_create", {"prompt": "p", "every_seconds": 600, "renotify_minutes": 5}
    )
    filed = record_notices(h.host)
    h.clock.advance(600)
    await deliveries(h, agent, 1)
    at = format_instant(START_MS + 10 * MINUTE)
    # "#2" would be due when the next occurrence gives the notice up.
    assert [(key, n.not_before_ms, n.expires_ms) for _, key, n in filed] == [  # type: ignore[union-attr]
        (f"schedule-1@{at}", None, START_MS + 20 * MINUTE),
        (f"schedule-1@{at}#1", START_MS + 15 * MINUTE, START_MS + 20 * MINUTE),
    ]


async def test_a_late_delivery_spaces_them_from_the_delivery(h: Harness) -> None:
    agent = await h.agent()
    await made(h, agent, "p", after_seconds=60, renotify_minutes=5)
    filed = record_notices(h.host)
    h.clock.suspend(3600)  # asleep past the due time
    h.clock.advance(60)
    await deliveries(h, agent, 1)
    (dispatch,) = dispatch_events(agent.session)
    assert dispatch.time > START_MS + 3600_000
    assert [n.not_before_ms for _, _, n in filed] == [  # type: ignore[union-attr]
        None,
        *(dispatch.time + k * 5 * MINUTE for k in (1, 2, 3)),
    ]
    assert all(n.at_ms == START_MS + MINUTE for _, _, n in filed)  # type: ignore[union-attr]


async def test_the_same_occurrence_delivered_again_once_done_is_not_renotified(
    h: Harness,
) -> None:
    agent = await h.agent()
    session = agent.session
    at = format_instant(START_MS + 3600_000)  # far ahead: the owner delivers none of it itself
    record = {
        "id": "r",
        "kind": "every",
        "prompt": "p",
        "everySeconds": 3600,
        "scheduledAt": at,
        "renotifyMinutes": 5,
    }
    dispatch = {"version": 1, "operation": "dispatch", "id": "r", "acceptedAt": at}
    filed = record_notices(h.host)
    for change in (
        {"version": 1, "operation": "create", "schedule": record},
        dispatch,
        {"version": 1, "operation": "ack", "id": "r", "occurrenceAt": at},
        {"version": 1, "operation": "update", "id": "r", "schedule": record},  # back again
        dispatch,
    ):
        session.append(SCHEDULE_CHANGE, change)
        h.plugin.folds.of(session)
    keys = [(key, notice is None) for _, key, notice in filed]
    assert keys == [
        (f"r@{at}", False),
        *((f"r@{at}#{k}", False) for k in (1, 2, 3)),
        *((f"r@{at}#{k}", True) for k in (1, 2, 3)),
        (f"r@{at}", False),  # the host keeps the stored one: no second notice is sent
    ]


def test_none_is_due_after_the_last_representable_instant() -> None:
    notice = Notice(title="t", at_ms=WAKE_MAX_MS - 7 * MINUTE)
    (only,) = renotify_notices(notice, 5, notice.at_ms)
    assert only.not_before_ms == WAKE_MAX_MS - 2 * MINUTE
    long = Notice(title="x" * 200, at_ms=START_MS)
    assert {len(n.title) for n in renotify_notices(long, 5, START_MS)} == {200}


async def test_a_notice_too_large_for_its_actions_is_filed_without_them(h: Harness) -> None:
    """The actions repeat the id twice; an id of wide characters (each escaped to six bytes)
    leaves room for the notice but not for them: it is filed, and Web Push shows no buttons."""
    agent = await h.agent()
    wide = "提" * 60
    record = {"id": wide, "kind": "at", "prompt": "p", "scheduledAt": AT_60}
    agent.session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "create", "schedule": record})
    assert await h.call(agent, "schedule_list", {}) is not None  # folds it, arms the owner
    filed = record_notices(h.host)
    h.clock.advance(60)
    await deliveries(h, agent, 1)
    [(_, key, notice)] = filed
    assert key == f"{wide}@{AT_60}"
    assert notice is not None
    assert dict(notice.data) == {
        "sessionId": agent.session.id,
        "scheduleId": wide,
        "occurrenceAt": AT_60,
    }


def test_the_due_time_reads_in_the_reminders_own_zone() -> None:
    from dsh_schedule._board import due_text
    from dsh_schedule._codec import AtRecord, DailyRecord

    at = AtRecord(id="r", kind="at", prompt="p", scheduled_at="2026-12-05T17:00:00.000Z")
    assert due_text(at, "2026-12-05T17:00:00.000Z") == "Sat 5 Dec 2026, 17:00 UTC"
    daily = DailyRecord(
        id="d",
        kind="daily",
        prompt="p",
        time="09:00:00",
        time_zone="Asia/Shanghai",
        scheduled_at="2026-12-06T01:00:00.000Z",
    )
    assert due_text(daily, "2026-12-06T01:00:00.000Z") == "Sun 6 Dec 2026, 09:00 (Asia/Shanghai)"
