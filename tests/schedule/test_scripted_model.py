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

SCHEDULE_EXAMPLES = (
    '"remind me in 10 seconds to stretch", "remind me to stretch in 10 minutes", '
    '"remind me at 18:30 Europe/Paris to join the call", '
    '"remind me tomorrow at 9am to call mom", "every 30 minutes remind me to drink water", '
    '"remind me every 2 hours to stand up", "提醒我10分钟后伸展一下", "30秒后提醒我喝水", '
    '"list reminders", "delete schedule-1"'
)
DEMO_HELP = f'I am the scripted demo model. Try {SCHEDULE_EXAMPLES}, or "/tool NAME {{json}}".'


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


async def test_help_quotes_every_offered_example_and_tool_comes_first(host: LiveHost) -> None:
    agent = await host.create_session()
    assert await reply(agent, "hello") == 'I am the scripted demo model. Try "/tool NAME {json}".'
    host.load_plugin("schedule")
    assert await reply(agent, "hello") == DEMO_HELP  # offered from the next turn on
    host.load_plugin("echo", factory=EchoPlugin)
    assert await reply(agent, "hello") == (
        f'I am the scripted demo model. Try "say hi", {SCHEDULE_EXAMPLES}, '
        'or "/tool NAME {json}".'
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
    assert re.fullmatch(
        r'Done: reminder schedule-1 is due at \S+Z \("stretch"\)\. '
        r"It is delivered in this session only\.",
        created,
    ), created
    assert (await reply(agent, "list reminders")).startswith(
        'Active reminders in this session:\n- schedule-1: "stretch" at '
    )
    assert await reply(agent, "delete schedule-1") == "Deleted reminder schedule-1."
    assert await reply(agent, "delete schedule-1") == "There is no active reminder schedule-1."


# --------------------------------------------------------------------------------------------
# The phrases of issue 12 end to end: the zone the browser sent, the tool's answer, delivery


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


def last_call(agent: LiveAgent) -> JSONValue:
    calls = [e.data for e in agent.session.events if e.type == "tool/call"]
    return calls[-1]["arguments"]  # type: ignore[index]


async def test_tomorrow_at_9am_in_the_browsers_zone_is_created_and_delivered(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    created = await reply_in(agent, "remind me tomorrow at 9am to call mom", "Asia/Shanghai")
    assert last_call(agent) == {
        "prompt": "call mom",
        "at": {"date": "2026-08-06", "time": "09:00:00", "time_zone": "Asia/Shanghai"},
    }
    assert created == (
        'Done: reminder schedule-1 is due at 2026-08-06T01:00:00.000Z ("call mom"). '
        "It is delivered in this session only."
    )
    # The zone was request-local: only the tool call's arguments name it, not the record.
    assert "Asia/Shanghai" not in str(
        [e.data for e in agent.session.events if e.type != "tool/call"]
    )
    clock.advance(13 * 3600)  # 01:00Z on the 6th
    await wait_until(lambda: "Reminder: call mom" in said(agent))


async def test_at_a_time_without_a_zone_reads_utc_and_a_named_zone_wins(
    timed_host: LiveHost,
) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "remind me at 18:30 to stretch", None) == (
        'Done: reminder schedule-1 is due at 2026-08-05T18:30:00.000Z ("stretch"). '
        "It is delivered in this session only."
    )
    assert await reply_in(agent, "remind me at 18:30 America/New_York to eat", "Asia/Shanghai") == (
        'Done: reminder schedule-2 is due at 2026-08-05T22:30:00.000Z ("eat"). '
        "It is delivered in this session only."
    )
    refused = await reply_in(agent, "remind me at 18:30 Mars/Olympus_Mons to wave", None)
    assert refused == (
        "I could not create that reminder (invalid_time_zone: time_zone must be UTC or a valid "
        "IANA Area/Location name.)."
    )
    assert await reply_in(agent, "remind me tomorrow at 13pm to x", None) == (
        "I could not create that reminder (invalid_rule: The local at value must be a real ISO "
        "calendar date and time.)."
    )


async def test_every_30_minutes_repeats_and_too_often_is_refused_in_words(
    timed_host: LiveHost, clock: ManualClock
) -> None:
    agent = await timed_host.create_session()
    assert await reply_in(agent, "every 30 minutes remind me to drink water", None) == (
        "Done: reminder schedule-1 repeats every 30 minutes, next at 2026-08-05T12:30:00.000Z "
        '("drink water"). It is delivered in this session only.'
    )
    assert last_call(agent) == {"prompt": "drink water", "every_seconds": 1800}
    assert await reply_in(agent, "remind me every 1 minute to blink", None) == (
        "I could not create that reminder (frequency_too_high: every_seconds must be at least "
        "300.). A reminder can repeat at most every 5 minutes."
    )
    assert await reply_in(agent, "remind me to stretch in 10 minutes", None) == (
        'Done: reminder schedule-2 is due at 2026-08-05T12:10:00.000Z ("stretch"). '
        "It is delivered in this session only."
    )
    listed = await reply_in(agent, "list reminders", None)
    assert listed.splitlines()[1:] == [
        (
            '- schedule-1: "drink water" every 30 minutes, next at 2026-08-05T12:30:00.000Z '
            "(scheduled)"
        ),
        '- schedule-2: "stretch" at 2026-08-05T12:10:00.000Z (scheduled)',
    ]
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
