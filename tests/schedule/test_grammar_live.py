# ruff: noqa: RUF001  (Chinese replies use Chinese punctuation)
"""Routines asked in words through a real host's scripted model: the tool call the grammar
makes, the record it leaves, and what the assistant says (rules in words, never an id, an
instant or a code). The clock: 2026-08-05T12:00Z, a Wednesday, 20:00 in Shanghai."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from dsh_host import LiveAgent, LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until


@pytest.fixture
async def host(clock: ManualClock) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=MemoryBackend(), clock=clock, model="scripted") as started:
        started.load_plugin("schedule")
        yield started


def said(agent: LiveAgent) -> list[str]:
    return [
        str(e.data["text"])  # type: ignore[index]
        for e in agent.session.events
        if e.type == "assistant/message"
    ]


def calls(agent: LiveAgent) -> list[tuple[str, object]]:
    found = [e.data for e in agent.session.events if e.type == "tool/call"]
    return [(c["name"], c["arguments"]) for c in found]  # type: ignore[index]


async def reply(agent: LiveAgent, text: str, time_zone: str | None = "Asia/Shanghai") -> str:
    agent.send(text, time_zone=time_zone)
    await agent.when_idle()
    return said(agent)[-1]


async def test_a_weekday_routine_is_set_listed_asked_about_twice_and_cancelled(
    host: LiveHost,
) -> None:
    agent = await host.create_session()
    assert await reply(agent, "every weekday at 9 remind me to stand up") == (
        'Reminder set: "stand up", every weekday at 09:00; next tomorrow at 09:00.'
    )
    assert calls(agent)[-1] == (
        "schedule_create",
        {
            "prompt": "stand up",
            "weekly": {
                "time": "09:00:00",
                "time_zone": "Asia/Shanghai",
                "weekdays": [1, 2, 3, 4, 5],
            },
        },
    )
    assert await reply(agent, "on the 1st of every month at 9 remind me to pay rent") == (
        'Reminder set: "pay rent", on the 1st of every month at 09:00; next on 1 September at '
        "09:00."
    )
    assert await reply(agent, "what reminders do I have?") == (
        "You have 2 reminders:\n"
        '- "stand up", every weekday at 09:00, next tomorrow at 09:00, in 13 hours\n'
        '- "pay rent", on the 1st of every month at 09:00, next on 1 September at 09:00, in 27 '
        "days"
    )
    count = len(calls(agent))
    assert await reply(agent, "remind me to stand up every weekday at 9am") == (
        'You already have "stand up" every weekday at 09:00. Add another? Say "yes, add it".'
    )
    assert len(calls(agent)) == count  # the check calls no tool
    assert await reply(agent, "yes, add it") == (
        'Reminder set: "stand up", every weekday at 09:00; next tomorrow at 09:00.'
    )
    assert await reply(agent, "cancel all stand up reminders") == "Cancelled 2 reminders."
    assert await reply(agent, "cancel the rent reminder") == (
        'Cancelled "pay rent" (on the 1st of every month at 09:00).'
    )
    for line in said(agent):
        assert not re.search(r"schedule-\d|\d{4}-\d\d-\d\dT|_[a-z]+_|[a-z]+_[a-z]+", line), line


async def test_a_chinese_routine_in_another_zone_says_its_zone(host: LiveHost) -> None:
    agent = await host.create_session()
    assert await reply(agent, "每天晚上10点提醒我睡觉") == (
        "好的，已设置提醒“睡觉”：每天 22:00；下次 今天 22:00。"
    )
    assert await reply(agent, "巴黎时间每周一上午10点提醒我开周会") == (
        "好的，已设置提醒“开周会”：每周一 10:00（Europe/Paris）；下次 周一 16:00。"
    )
    assert calls(agent)[-1] == (
        "schedule_create",
        {
            "prompt": "开周会",
            "weekly": {"time": "10:00:00", "time_zone": "Europe/Paris", "weekdays": [1]},
        },
    )


async def test_a_daily_routine_is_delivered_at_its_time(host: LiveHost, clock: ManualClock) -> None:
    agent = await host.create_session()
    await reply(agent, "every day at 22:00 remind me to sleep")
    clock.advance(2 * 3600)  # 14:00Z: 22:00 in Shanghai
    await wait_until(lambda: "Reminder: sleep" in said(agent))


async def test_a_reminder_is_moved_renamed_and_given_a_new_rule_in_words(
    host: LiveHost, clock: ManualClock
) -> None:
    agent = await host.create_session()
    await reply(agent, "every weekday at 9 remind me to stand up")
    assert await reply(agent, "move my 9am reminder to 10") == (
        'Moved "stand up" to 10:00 every weekday.'
    )
    assert calls(agent)[-2:] == [
        ("schedule_list", {}),
        (
            "schedule_update",
            {
                "id": "schedule-1",
                "weekly": {
                    "time": "10:00:00",
                    "time_zone": "Asia/Shanghai",
                    "weekdays": [1, 2, 3, 4, 5],
                },
            },
        ),
    ]
    assert await reply(agent, "把站会提醒改成10点") == (
        "没有找到“站会”这个提醒。问“我有哪些提醒”可以看到全部。"
    )
    assert await reply(agent, "rename the stand up reminder to daily stand-up") == (
        'Renamed "stand up" to "daily stand-up".'
    )
    assert await reply(agent, "move the daily stand-up reminder to 10am") == (
        'Nothing to change: "daily stand-up" is already every weekday at 10:00.'
    )
    assert await reply(agent, "change the daily stand-up reminder to every monday at 10am") == (
        'Changed "daily stand-up" to every Monday at 10:00; next on Monday at 10:00.'
    )
    await reply(agent, "remind me tomorrow at 9am to call mom")
    assert await reply(agent, "move the call mom reminder to 10pm") == (
        'Moved "call mom" to today at 22:00, in 2 hours.'
    )
    assert await reply(agent, "what reminders do I have?") == (
        "You have 2 reminders:\n"
        '- "daily stand-up", every Monday at 10:00, next on Monday at 10:00, in 5 days\n'
        '- "call mom", today at 22:00, in 2 hours'
    )
    clock.advance(2 * 3600)  # 22:00 in Shanghai: the moved one-shot fires
    await wait_until(lambda: "Reminder: call mom" in said(agent))
    for line in said(agent):
        assert not re.search(r"schedule-\d|\d{4}-\d\d-\d\dT|_[a-z]+_|[a-z]+_[a-z]+", line), line
