# ruff: noqa: RUF001  (Chinese replies use Chinese punctuation)
"""The host's scripted model knows no plugin: it speaks the phrases plugins offer it.

A toy plugin offers an ``echo`` phrase (and a tool for it); the Schedule plugin offers the
reminder phrases. The model tries ``/tool NAME {json}`` first, then each offered phrase.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Host as HostProtocol
from dsh_hookspecs import JSONValue, Tool, ToolCall, hookimpl, hookspecs
from dsh_host import LiveAgent, LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until

SCHEDULE_HELP_EXAMPLES = (
    '"remind me in 10 minutes to stretch", "remind me tomorrow morning to water the plants" '
    'or "remind me to call mom at 5pm"'
)
DEMO_HELP = f"I did not understand that. Try {SCHEDULE_HELP_EXAMPLES}."


async def shout(call: ToolCall) -> JSONValue:
    return str(call.arguments.get("word", "")).upper()


class EchoPlugin:
    """Offers ``say WORD`` (calls its global ``shout`` tool) and a tool-less ``ping``."""

    @hookimpl
    def dsh_plugin_start(self, host: HostProtocol, config: Mapping[str, JSONValue]) -> object:
        del config
        return host.tools.register(
            Tool(name="shout", description="Upper-cases a word.", parameters={}, handler=shout)
        )

    @hookimpl
    def dsh_scripted_phrases(self) -> Sequence[hookspecs.ScriptedPhrase]:
        return (
            hookspecs.ScriptedPhrase(
                pattern=re.compile(r"say (?P<word>\w+)$"),
                tool="shout",
                arguments=lambda match: {"word": match["word"]},
                reply=lambda match, value: f"{match['word']} -> {value}",
                example="say hi",
            ),
            # Would also answer "/tool ...", but the model tries its own "/tool" first.
            hookspecs.ScriptedPhrase(
                pattern=re.compile(r"ping|/tool"), reply=lambda match, value: "pong"
            ),
        )


class BrokenPhrases:
    @hookimpl
    def dsh_scripted_phrases(self) -> Sequence[hookspecs.ScriptedPhrase]:
        raise RuntimeError("no phrases today")


class NotAPhrase:
    @hookimpl
    def dsh_scripted_phrases(self) -> Sequence[object]:
        return ["say hi"]


@pytest.fixture
async def host() -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock(), model="scripted") as started:
        yield started


async def reply(agent: LiveAgent, text: str) -> str:
    agent.send(text)
    await agent.when_idle()
    said = [e.data for e in agent.session.events if e.type == "assistant/message"]
    last = said[-1]
    assert isinstance(last, dict)
    return str(last["text"])


async def test_a_plugin_phrase_calls_its_tool_and_words_the_result(host: LiveHost) -> None:
    host.load_plugin("echo", factory=EchoPlugin)
    agent = await host.create_session()
    assert await reply(agent, "say hello") == "hello -> HELLO"
    calls = [e.data for e in agent.session.events if e.type == "tool/call"]
    assert calls == [
        {"callId": calls[0]["callId"], "name": "shout", "arguments": {"word": "hello"}}
    ]  # type: ignore[index]
    assert await reply(agent, "ping") == "pong"  # no tool: answered at once
    assert [e.type for e in agent.session.events].count("tool/call") == 1


async def test_help_quotes_three_fitting_examples_and_tool_comes_first(host: LiveHost) -> None:
    agent = await host.create_session()
    assert await reply(agent, "hello") == 'I am the scripted demo model. Try "/tool NAME {json}".'
    host.load_plugin("schedule")
    assert await reply(agent, "hello") == DEMO_HELP  # offered from the next turn on
    # The examples that share the most words with the message, in its language.
    assert await reply(agent, "how do I cancel something?") == (
        'I did not understand that. Try "cancel the stretch reminder", "cancel all my reminders" '
        'or "remind me in 10 minutes to stretch".'
    )
    assert await reply(agent, "你好") == (
        "我没有听懂。可以试试：“提醒我10分钟后伸展一下”、“明天早上9点提醒我开会”或“下午3点提醒我取快递”。"
    )
    host.load_plugin("echo", factory=EchoPlugin)
    assert await reply(agent, "hello") == (
        'I did not understand that. Try "say hi", "remind me in 10 minutes to stretch" or '
        '"remind me tomorrow morning to water the plants".'
    )
    assert await reply(agent, '/tool shout {"word": "x"}') == '"X"'
    await host.unload_plugin("echo")
    assert await reply(agent, "say hello") == DEMO_HELP  # its phrase left with it


async def test_a_failing_or_malformed_offer_is_logged_and_skipped(host: LiveHost) -> None:
    host.load_plugin("schedule")
    host.load_plugin("broken", factory=BrokenPhrases)
    host.load_plugin("odd", factory=NotAPhrase)
    agent = await host.create_session()
    with capture_logs() as logs:
        assert await reply(agent, "hello") == DEMO_HELP
    failed = [e for e in logs if e["event"] == "plugin.hook_failed"]
    assert [(e["plugin"], e["hook"]) for e in failed] == [("broken", "dsh_scripted_phrases")]
    assert [e["plugin"] for e in logs if e["event"] == "plugin.bad_scripted_phrase"] == ["odd"]


async def test_the_schedule_demo_phrases_through_the_host(host: LiveHost) -> None:
    host.load_plugin("schedule")
    agent = await host.create_session()
    created = await reply(agent, "remind me in 10 seconds to stretch")
    assert created == 'Reminder set: "stretch", today at 12:00 UTC, in 10 seconds.', created
    assert await reply(agent, "list reminders") == (
        'You have 1 reminder:\n- "stretch", today at 12:00 UTC, in 10 seconds'
    )
    assert await reply(agent, "cancel the stretch reminder") == (
        'Cancelled "stretch" (it was today at 12:00 UTC).'
    )
    assert await reply(agent, "cancel the stretch reminder") == (
        'You have no reminder that says "stretch". Ask "what reminders do I have?" to see them all.'
    )


# --------------------------------------------------------------------------------------------
# End to end: the zone the browser sent, the tool's answer in people's words, delivery


@pytest.fixture
async def timed_host(clock: ManualClock) -> AsyncIterator[LiveHost]:
    """The Schedule plugin on the shared manual clock: 2026-08-05T12:00Z, 20:00 in Shanghai."""
    async with LiveHost(backend=MemoryBackend(), clock=clock, model="scripted") as started:
        started.load_plugin("schedule")
        yield started


def said(agent: LiveAgent) -> list[str]:
    messages = [e.data for e in agent.session.events if e.type == "assistant/message"]
    return [str(data["text"]) for data in messages]  # type: ignore[index]


async def reply_in(agent: LiveAgent, text: str, time_zone: str | None) -> str:
    """The reply to ``text`` sent with the browser's ``time_zone``."""
    agent.send(text, time_zone=time_zone)
    await agent.when_idle()
    return said(agent)[-1]


def calls(agent: LiveAgent) -> list[tuple[str, JSONValue]]:
    found = [e.data for e in agent.session.events if e.type == "tool/call"]
    return [(c["name"], c["arguments"]) for c in found]  # type: ignore[index]


def last_call(agent: LiveAgent) -> JSONValue:
    return calls(agent)[-1][1]


def results(agent: LiveAgent) -> list[JSONValue]:
    return [e.data["value"] for e in agent.session.events if e.type == "tool/result"]  # type: ignore[index]


async def test_tomorrow_at_9am_in_the_browsers_zone_is_created_and_delivered(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    created = await reply_in(agent, "remind me tomorrow at 9am to call mom", "Asia/Shanghai")
    assert last_call(agent) == {
        "prompt": "call mom",
        "at": {"date": "2026-08-06", "time": "09:00:00", "time_zone": "Asia/Shanghai"},
    }
    assert created == 'Reminder set: "call mom", tomorrow at 09:00, in 13 hours.'
    # The model-facing result keeps its contract: the id and the UTC instant are there.
    assert results(agent)[-1] == {
        "id": "schedule-1",
        "kind": "at",
        "prompt": "call mom",
        "scheduledAt": "2026-08-06T01:00:00.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    # The zone was request-local: only the tool call's arguments name it, not the record.
    assert "Asia/Shanghai" not in str(
        [e.data for e in agent.session.events if e.type != "tool/call"]
    )
    clock.advance(13 * 3600)  # 01:00Z on the 6th
    await wait_until(lambda: "Reminder: call mom" in said(agent))


async def test_what_the_assistant_says_names_no_id_instant_or_code(timed_host: LiveHost) -> None:
    agent = await timed_host.create_session()
    for text in (
        "remind me at 18:30 to stretch",
        "remind me at 18:30 America/New_York to eat",
        "remind me at 18:30 Mars/Olympus_Mons to wave",
        "every 30 minutes remind me to drink water",
        "remind me every 1 minute to blink",
        "what reminders do I have?",
        "cancel the eat reminder",
        "cancel all my reminders",
        "yes, cancel all",
    ):
        await reply_in(agent, text, "Asia/Shanghai")
    for line in said(agent):
        assert not re.search(r"schedule-\d|\d{4}-\d\d-\d\dT|_[a-z]+_|[a-z]+_[a-z]+", line), line


async def test_at_a_time_without_a_zone_reads_utc_and_a_named_zone_wins(
    timed_host: LiveHost,
) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "remind me at 18:30 to stretch", None) == (
        'Reminder set: "stretch", today at 18:30 UTC, in 6 hours 30 minutes.'
    )
    # 18:30 in New York is 22:30Z, 06:30 tomorrow in Shanghai where the browser is
    assert await reply_in(agent, "remind me at 18:30 America/New_York to eat", "Asia/Shanghai") == (
        'Reminder set: "eat", tomorrow at 06:30, in 11 hours.'
    )
    assert results(agent)[-1]["scheduledAt"] == "2026-08-05T22:30:00.000Z"  # type: ignore[index]
    refused = await reply_in(agent, "remind me at 18:30 Mars/Olympus_Mons to wave", None)
    assert refused == (
        "I could not set that reminder: I do not know that time zone; use a name like "
        "Europe/Paris or UTC."
    )
    assert results(agent)[-1]["code"] == "invalid_time_zone"  # type: ignore[index]
    calls_before = len(calls(agent))
    assert await reply_in(agent, "remind me tomorrow at 13pm to x", None) == (
        'I could not read "13pm" as a time. Try "5pm", "17:30" or "in 10 minutes".'
    )
    assert len(calls(agent)) == calls_before  # a question: no tool was called


async def test_every_30_minutes_repeats_and_too_often_is_refused_in_words(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "every 30 minutes remind me to drink water", None) == (
        'Reminder set: "drink water", every 30 minutes; the first is today at 12:30 UTC, '
        "in 30 minutes."
    )
    assert last_call(agent) == {"prompt": "drink water", "every_seconds": 1800}
    assert await reply_in(agent, "remind me every 1 minute to blink", None) == (
        "I could not set that reminder: a reminder can repeat at most every 5 minutes."
    )
    assert await reply_in(agent, "remind me to stretch in 10 minutes", None) == (
        'Reminder set: "stretch", today at 12:10 UTC, in 10 minutes.'
    )
    assert await reply_in(agent, "list reminders", None) == (
        "You have 2 reminders:\n"
        '- "drink water", every 30 minutes, next today at 12:30 UTC, in 30 minutes\n'
        '- "stretch", today at 12:10 UTC, in 10 minutes'
    )
    clock.advance(10 * 60)
    await wait_until(lambda: said(agent)[-1] == "Reminder: stretch")
    clock.advance(20 * 60)  # 12:30: the first occurrence, in a batch of one
    await wait_until(lambda: said(agent)[-1] == "Reminder: drink water")


async def test_fixed_rate_reminders_due_together_are_presented_together(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    await reply_in(agent, "every 5 minutes remind me to drink water", None)
    await reply_in(agent, "every 10 minutes remind me to stretch", None)
    clock.advance(5 * 60 + 1)
    await wait_until(lambda: said(agent)[-1] == "Reminder: drink water")
    clock.advance(5 * 60)  # 12:10:01: both are due
    await wait_until(lambda: said(agent)[-1] == "Reminders: drink water; stretch")
    followups = [e.data for e in agent.session.events if e.type == "agent/followup"]
    assert len(followups) == 2


# --------------------------------------------------------------------------------------------
# Questions back: a second reminder like the first, cancelling everything


async def test_the_same_reminder_at_the_same_time_asks_before_adding(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    await reply_in(agent, "remind me in 3 hours to stretch", "Asia/Shanghai")
    clock.advance(20)  # 20 s later: the same minute
    assert await reply_in(agent, "Remind me to Stretch in 3 hours!", "Asia/Shanghai") == (
        'You already have "stretch" today at 23:00, in 3 hours. Add another? Say "yes, add it".'
    )
    # the check reads the Session's own log: no schedule_list row before the question
    assert [name for name, _ in calls(agent)] == ["schedule_create"]
    clock.advance(40)
    assert await reply_in(agent, "yes, add it", "Asia/Shanghai") == (
        'Reminder set: "Stretch", today at 23:00, in 2 hours 59 minutes.'
    )
    # as first asked: three hours from the question, not from the confirmation
    assert last_call(agent) == {"prompt": "Stretch", "after_seconds": 3 * 3600 - 40}
    assert await reply_in(agent, "yes, add it", "Asia/Shanghai") == (
        "There is no reminder waiting to be added."
    )
    # a different time is no duplicate
    assert await reply_in(agent, "remind me in 4 hours to stretch", "Asia/Shanghai") == (
        'Reminder set: "stretch", tomorrow at 00:01, in 4 hours.'
    )


async def test_a_create_calls_only_schedule_create(timed_host: LiveHost) -> None:
    agent = await timed_host.create_session()
    for text in ("remind me in 3 hours to stretch", "every 30 minutes remind me to drink water"):
        await reply_in(agent, text, None)
    assert [name for name, _ in calls(agent)] == ["schedule_create", "schedule_create"]


async def test_a_forks_inherited_reminders_are_no_duplicates_but_its_own_are(
    timed_host: LiveHost,
) -> None:
    parent = await timed_host.create_session()
    await reply_in(parent, "remind me in 3 hours to stretch", None)
    child = await timed_host.fork_session(parent.session.id)
    # a fork of a fresh fork: its seed already ends with the child's session/end-seed
    grandchild = await timed_host.fork_session(child.session.id)
    seeded = grandchild.session.events
    assert seeded[-1].type == "session/end-seed"
    assert len(seeded) == grandchild.session.header.seed_length  # no second one was written
    for agent in (child, grandchild):
        # it does not have the reminder it inherited, so it is not asked about
        assert await reply_in(agent, "remind me in 3 hours to stretch", None) == (
            'Reminder set: "stretch", today at 15:00 UTC, in 3 hours.'
        )
        assert await reply_in(agent, "remind me in 3 hours to stretch", None) == (
            'You already have "stretch" today at 15:00 UTC, in 3 hours. Add another? '
            'Say "yes, add it".'
        )


async def test_a_chinese_duplicate_asks_in_chinese(timed_host: LiveHost) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "明天早上9点提醒我开会", "Asia/Shanghai") == (
        "好的，已设置提醒“开会”：明天 09:00（13小时后）。"
    )
    assert await reply_in(agent, "提醒我明天上午9点开会。", "Asia/Shanghai") == (
        "你已经有“开会”，明天 09:00（13小时后）。还要再加一个吗？请说“是的，添加”。"
    )
    assert await reply_in(agent, "是的，添加", "Asia/Shanghai") == (
        "好的，已设置提醒“开会”：明天 09:00（13小时后）。"
    )
    assert await reply_in(agent, "我有哪些提醒？", "Asia/Shanghai") == (
        "你有 2 个提醒：\n- “开会”，明天 09:00（13小时后）\n- “开会”，明天 09:00（13小时后）"
    )


async def test_cancel_all_asks_first_and_yes_cancels_every_reminder(timed_host: LiveHost) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "cancel all my reminders", None) == (
        "You have no reminders to cancel."
    )
    for text in ("in 10 minutes remind me to stretch", "remind me in 1 hour to eat"):
        await reply_in(agent, text, None)
    assert await reply_in(agent, "yes, cancel all", None) == (
        'Cancel all 2 reminders? Say "yes, cancel all".'
    )  # no question was pending: it asks first
    assert await reply_in(agent, "yes, cancel all", None) == "Cancelled 2 reminders."
    assert await reply_in(agent, "what reminders do I have?", None) == (
        "You have no reminders in this conversation."
    )
    await reply_in(agent, "提醒我半小时后出门", None)
    assert await reply_in(agent, "取消所有提醒", None) == (
        "要取消全部 1 个提醒吗？请说“是的，全部取消”。"
    )
    assert await reply_in(agent, "是的，全部取消", None) == "已取消 1 个提醒。"
    await reply_in(agent, "remind me in 10 minutes to stretch", None)
    assert await reply_in(agent, "cancel all reminders", None) == (
        'Cancel your only reminder, "stretch"? Say "yes, cancel all".'
    )
    await reply_in(agent, "hello", None)  # something else was said in between
    assert await reply_in(agent, "yes, cancel all", None) == (
        'Cancel your only reminder, "stretch"? Say "yes, cancel all".'
    )


async def test_cancel_by_what_the_reminder_says(timed_host: LiveHost) -> None:
    agent = await timed_host.create_session()
    for text in (
        "remind me in 10 minutes to check the oven",
        "remind me in 20 minutes to take the oven tray out",
        "remind me in 30 minutes to call mom",
    ):
        await reply_in(agent, text, None)
    assert await reply_in(agent, "cancel the oven reminder", None) == (
        '2 reminders match: "check the oven" today at 12:10 UTC, in 10 minutes; '
        '"take the oven tray out" today at 12:20 UTC, in 20 minutes. Say the whole text of '
        'one, or "cancel all oven reminders".'
    )
    assert await reply_in(agent, "cancel the check the oven reminder", None) == (
        'Cancelled "check the oven" (it was today at 12:10 UTC).'
    )
    assert await reply_in(agent, "delete call mom", None) == (
        'Cancelled "call mom" (it was today at 12:30 UTC).'
    )
    assert await reply_in(agent, "cancel all oven reminders", None) == "Cancelled 1 reminder."
    assert await reply_in(agent, "cancel it", None) == (
        'Which reminder? Say what it says, for example "cancel the stretch reminder".'
    )


async def test_one_hour_and_30_minutes_is_never_one_hour_titled_and_30_minutes(
    timed_host: LiveHost,
) -> None:
    # Issue 25: this set a one-hour reminder titled "and 30 minutes to leave".
    agent = await timed_host.create_session()
    assert await reply_in(agent, "remind me in 1 hour and 30 minutes to leave", None) == (
        'Reminder set: "leave", today at 13:30 UTC, in 1 hour 30 minutes.'
    )
    assert last_call(agent) == {"prompt": "leave", "after_seconds": 5400}
    before = len(calls(agent))
    assert await reply_in(agent, "remind me in 1 hour plus 30 minutes to leave", None) == (
        'I understood "in 1 hour" but not "plus 30 minutes". When should I remind you? '
        'For example "in 1 hour and 30 minutes".'
    )
    assert len(calls(agent)) == before


async def test_snooze_after_a_reminder_came_up_reminds_again_later(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    await reply_in(agent, "remind me in 1 minute to stretch", "Asia/Shanghai")
    clock.advance(60)
    await wait_until(lambda: "Reminder: stretch" in said(agent))
    assert await reply_in(agent, "snooze 10 minutes", "Asia/Shanghai") == (
        'Snoozed: I will remind you of "stretch" again today at 20:11, in 10 minutes.'
    )
    assert calls(agent)[-1] == (
        "schedule_snooze",
        {"id": "schedule-1", "occurrence_at": "2026-08-05T12:01:00.000Z", "minutes": 10},
    )
    clock.advance(10 * 60)
    await wait_until(lambda: said(agent).count("Reminder: stretch") == 2)
    # the same occurrence is snoozed once; the snooze's own delivery is the one that came last
    assert await reply_in(agent, "snooze 10 minutes", "Asia/Shanghai") == (
        'Snoozed: I will remind you of "stretch" again today at 20:21, in 10 minutes.'
    )
    assert last_call(agent) == {
        "id": "schedule-2",
        "occurrence_at": "2026-08-05T12:11:00.000Z",
        "minutes": 10,
    }
