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
from dsh_host import Host, LiveAgent
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock

SCHEDULE_EXAMPLES = (
    '"remind me in 10 seconds to stretch", "remind me to stretch in 10 minutes", '
    '"remind me at 18:30 Europe/Paris to join the call", '
    '"remind me tomorrow at 9am to call mom", "every 30 minutes remind me to drink water", '
    '"remind me every 2 hours to stand up", "list reminders", "delete schedule-1"'
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
async def host() -> AsyncIterator[Host]:
    async with Host(backend=MemoryBackend(), clock=ManualClock(), model="scripted") as started:
        yield started


async def reply(agent: LiveAgent, text: str) -> str:
    agent.send(text)
    await agent.when_idle()
    said = [e.data for e in agent.session.events if e.type == "assistant/message"]
    last = said[-1]
    assert isinstance(last, dict)
    return str(last["text"])


async def test_a_plugin_phrase_calls_its_tool_and_words_the_result(host: Host) -> None:
    host.load_plugin("echo", factory=EchoPlugin)
    agent = await host.create_session()
    assert await reply(agent, "say hello") == "hello -> HELLO"
    calls = [e.data for e in agent.session.events if e.type == "tool/call"]
    assert calls == [
        {"callId": calls[0]["callId"], "name": "shout", "arguments": {"word": "hello"}}
    ]  # type: ignore[index]
    assert await reply(agent, "ping") == "pong"  # no tool: answered at once
    assert [e.type for e in agent.session.events].count("tool/call") == 1


async def test_help_quotes_every_offered_example_and_tool_comes_first(host: Host) -> None:
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


async def test_a_failing_or_malformed_offer_is_logged_and_skipped(host: Host) -> None:
    host.load_plugin("schedule")
    host.load_plugin("broken", factory=BrokenPhrases)
    host.load_plugin("odd", factory=NotAPhrase)
    agent = await host.create_session()
    with capture_logs() as logs:
        assert await reply(agent, "hello") == DEMO_HELP
    failed = [e for e in logs if e["event"] == "plugin.hook_failed"]
    assert [(e["plugin"], e["hook"]) for e in failed] == [("broken", "dsh_scripted_phrases")]
    assert [e["plugin"] for e in logs if e["event"] == "plugin.bad_scripted_phrase"] == ["odd"]


async def test_the_schedule_demo_phrases_through_the_host(host: Host) -> None:
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
