"""Both delivery paths agree, for Sessions Hypothesis builds: one-shots, ``at``, ``every``,
``daily``/``weekly``/``cron`` in zones with DST transitions near the start, edits, snoozes,
acks, deletes and forks. The plan (``dsh_wake_due``) of what storage holds is compared with what
a resume with the live owner then appends, posts, files and asks to be woken for."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dsh_hookspecs import BoardEntry
from dsh_host.persistence import MemoryBackend, StoredSession
from dsh_schedule._cold import plan_wake

from .harness import Harness, make_harness, settle_quiet
from .test_cold_plan import (
    PLUGIN,
    live_delivery,
    live_events,
    plan_events,
    rows,
    until_a_turn_ended,
    wake_of,
)

#: Starts a day or two before a DST change in Europe or the US (and one in August).
STARTS = [
    "2026-03-07T12:00:00Z",
    "2026-03-28T12:00:00Z",
    "2026-08-05T12:00:00Z",
    "2026-10-24T12:00:00Z",
    "2026-10-31T12:00:00Z",
]
ZONES = ["Europe/Berlin", "America/New_York", "Asia/Shanghai", "UTC"]
TIMES = ["01:30:00", "02:30:00", "09:00:00", "23:59:00"]


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat().replace("+00:00", "Z")


def _ms(iso: str) -> int:
    return round(dt.datetime.fromisoformat(iso).timestamp() * 1000)


selectors = st.one_of(
    st.builds(lambda s: {"after_seconds": s}, st.integers(60, 2 * 86_400)),
    st.builds(lambda h: {"at_hours": h}, st.integers(1, 72)),
    st.builds(lambda s: {"every_seconds": s}, st.sampled_from([3600, 7200, 86_400])),
    st.builds(
        lambda t, z: {"daily": {"time": t, "time_zone": z}},
        st.sampled_from(TIMES),
        st.sampled_from(ZONES),
    ),
    st.builds(
        lambda t, z, d: {"weekly": {"time": t, "time_zone": z, "weekdays": sorted(d)}},
        st.sampled_from(TIMES),
        st.sampled_from(ZONES),
        st.sets(st.integers(1, 7), min_size=1, max_size=3),
    ),
    st.builds(
        lambda e, z: {"cron": {"expression": e, "time_zone": z}},
        st.sampled_from(["0 9 * * *", "30 2 * * 0", "*/30 * * * *", "0 0 1 * *"]),
        st.sampled_from(ZONES),
    ),
)
creates = st.builds(
    lambda when, renotify: ("create", {**when, **renotify}),
    selectors,
    st.sampled_from([{}, {"renotify_minutes": 10}]),
)
steps = st.one_of(
    creates,
    st.tuples(st.just("edit"), st.integers(1, 3), st.integers(60, 86_400)),
    st.tuples(st.just("delete"), st.integers(1, 3)),
    st.tuples(st.just("deliver"), st.sampled_from(["keep", "snooze", "ack"])),
    st.tuples(st.just("fork")),
)
sessions = st.tuples(st.sampled_from(STARTS), creates, st.lists(steps, max_size=4)).map(
    lambda t: (t[0], [t[1], *t[2]])
)


async def _call(h: Harness, sid: str, tool: str, arguments: dict[str, Any]) -> Any:
    agent = await h.host.resume_session(sid)
    value = await h.call(agent, tool, arguments)
    await h.settle(agent)
    failed = isinstance(value, dict) and "error" in value
    event(f"{tool}: {value['error'] if failed else 'ok'}")  # type: ignore[index]
    return value


async def _deliver_once(h: Harness, memory: MemoryBackend, sid: str, then: str) -> None:
    """The earliest reminder delivered the live way; then kept, snoozed or acked."""
    before = await memory.load(sid)
    assert before is not None
    due = before.wakes.get(PLUGIN)
    if due is None:
        return
    h.clock.advance(max(0, due - h.clock.now_ms()) / 1000)
    await until_a_turn_ended(h, memory, sid, before)
    await h.host.close_session(sid)
    if then == "keep":
        return
    after = await memory.load(sid)
    assert after is not None
    delivered = [
        entry.data
        for (plugin, _), entry in after.board.items()
        if plugin == PLUGIN and isinstance(entry.data, dict) and "occurrenceAt" in entry.data
    ]
    if not delivered:
        return
    data = delivered[-1]
    assert isinstance(data, dict)
    occurrence = {"id": data["id"], "occurrence_at": data["occurrenceAt"]}
    if then == "snooze":
        await _call(h, sid, "schedule_snooze", {**occurrence, "minutes": 30})
    else:
        await _call(h, sid, "schedule_ack", occurrence)
    await h.host.close_session(sid)


async def _build(h: Harness, memory: MemoryBackend, ops: list[tuple[Any, ...]]) -> str:
    agent = await h.agent()
    sid = agent.session.id
    await h.host.close_session(sid)
    for op in ops:
        kind = op[0]
        if kind == "create":
            arguments = dict(op[1])
            if "at_hours" in arguments:
                arguments["at"] = _iso(h.clock.now_ms() + arguments.pop("at_hours") * 3_600_000)
            await _call(h, sid, "schedule_create", {"prompt": "p", **arguments})
        elif kind == "edit":
            await _call(h, sid, "schedule_update", {"id": f"schedule-{op[1]}", "prompt": "edited"})
            await _call(
                h, sid, "schedule_update", {"id": f"schedule-{op[1]}", "after_seconds": op[2]}
            )
        elif kind == "delete":
            await _call(h, sid, "schedule_delete", {"id": f"schedule-{op[1]}"})
        elif kind == "deliver":
            await _deliver_once(h, memory, sid, op[1])
        else:  # fork: what follows is compared in the fork
            forked = await h.host.fork_session(sid)
            sid = forked.session.id
            await settle_quiet(h.host)
        await h.host.close_session(sid)
    return sid


def _standing(stored: StoredSession) -> dict[str, BoardEntry]:
    return {k: e for (p, k), e in stored.board.items() if p == PLUGIN and e is not None}


async def _agree(start: str, ops: list[tuple[Any, ...]]) -> None:
    memory = MemoryBackend()
    h = await make_harness(config={"cold_delivery": True}, backend=memory, cold_plans=False)
    try:
        h.clock.set_wall(_ms(start))
        sid = await _build(h, memory, ops)
        before = await memory.load(sid)
        assert before is not None
        due = before.wakes.get(PLUGIN)
        event("nothing stands" if due is None else "a wake is due")
        if due is None:  # nothing stands: the plugin has no wake to answer
            idle = plan_wake(wake_of(before, h.clock.now_ms()), PLUGIN)
            assert idle is not None
            assert (list(idle.followups), list(idle.notices), idle.wake_at_ms) == ([], [], None)
            return
        plan = plan_wake(wake_of(before, max(due, h.clock.now_ms())), PLUGIN)
        assert plan is not None
        appended, after, notified = await live_delivery(h, memory, sid, before, due)
        firsts = [i for i, e in enumerate(appended) if e.type == "agent/followup"]
        event(f"the live owner drove {len(firsts)} follow-up(s)")
        first_drive = appended[: firsts[1]] if len(firsts) > 1 else appended
        assert plan_events(plan) == live_events(first_drive)
        planned = rows({k: e for k, e in {**_standing(before), **plan.board}.items() if e})
        if len(firsts) <= 1:
            assert planned == rows(_standing(after))
            assert plan.wake_at_ms == after.wakes.get(PLUGIN)
            assert list(plan.notices) == notified
        else:  # another one-shot waits for the turn: still due, as the plan says
            assert plan.wake_at_ms == due
    finally:
        await h.host.close()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sessions)
def test_the_cold_plan_and_the_live_owner_agree(session: tuple[str, list[tuple[Any, ...]]]) -> None:
    start, ops = session
    asyncio.run(_agree(start, ops))
