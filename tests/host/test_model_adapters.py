"""Model adapters as a hook (issue 12 item 1): a plugin offers one, ``model=NAME`` picks it, and
the turn it runs sees the transcript, the Agent's tools, the time context and the stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import (
    ModelAdapterSpec,
    ModelSettings,
    TimeContext,
    Tool,
    Turn,
    TurnInput,
    hookimpl,
    hookspecs,
)
from dsh_host import LiveHost, Overlay, PluginEntry, Streamed, UnknownModelError, choose_model
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until

SEEN: list[dict[str, object]] = []


class EchoModel:
    """Records what its turns see, streams two pieces, then says the message back."""

    name = "echo"

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings

    async def run_turn(self, turn: Turn) -> None:
        value = await turn.call_tool("clock_read", {}, call_id="call-1")
        SEEN.append(
            {
                "input": turn.input,
                "time": turn.time,
                "tools": [tool.name for tool in turn.tools()],
                "types": [event.type for event in turn.transcript()],
                "value": value,
                "model_name": self.settings.model_name,
            }
        )
        turn.stream("ec")
        turn.stream("")  # nothing to send: no payload
        turn.stream("ho")
        turn.say(f"echo: {turn.input.text}")


class AdapterPlugin:
    """Offers ``echo``, a second ``scripted`` (refused: the host's comes first) and junk."""

    @hookimpl
    def dsh_model_adapters(self) -> list[object]:
        return [
            ModelAdapterSpec(name="echo", create=EchoModel, description="says it back"),
            ModelAdapterSpec(name="scripted", create=EchoModel),
            "not a spec",
        ]

    @hookimpl
    def dsh_plugin_start(self, host, config):
        async def read(call):
            return {"now": host.clock.now_ms()}

        return host.tools.register(
            Tool(name="clock_read", description="", parameters={"type": "object"}, handler=read)
        )


class RefusingPlugin:
    @hookimpl
    def dsh_model_adapters(self) -> list[object]:
        def create(settings: ModelSettings) -> EchoModel:
            raise ValueError("--model-name is required")

        return [ModelAdapterSpec(name="picky", create=create)]


def _publish(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Overlay:
    """Publish the two plugins as real entry points and name them in an overlay."""
    info = folder / "dshadapters-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dshadapters\nVersion: 1.0\n")
    module = __name__
    (info / "entry_points.txt").write_text(
        f"[dsh.plugins]\nadapters = {module}:AdapterPlugin\npicky = {module}:RefusingPlugin\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    return Overlay(plugins=(PluginEntry("adapters", {}), PluginEntry("picky", {})))


async def test_hook_dsh_model_adapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    clock = ManualClock()
    overlay = _publish(tmp_path, monkeypatch)
    settings = ModelSettings(model_name="m-1")
    host = LiveHost(
        backend=MemoryBackend(), clock=clock, overlay=overlay, model="echo", model_settings=settings
    )
    streamed: list[tuple[str, dict[str, object]]] = []
    host.sessions.subscribe(lambda o: streamed.append((o.session.id, dict(o.payload))), Streamed)
    with capture_logs() as logs:
        await host.start()
    try:
        assert host.model.name == "echo"
        assert isinstance(host.model, EchoModel)
        assert host.model.settings is settings
        problems = {(e["event"], e.get("adapter")) for e in logs if e["log_level"] == "error"}
        assert ("plugin.duplicate_model_adapter", "scripted") in problems
        assert ("plugin.bad_model_adapter", None) in problems
        agent = await host.create_session()
        message_id = agent.send("hi", time_zone="Europe/Berlin")
        await wait_until(lambda: SEEN and agent.phase == "idle")
        seen = SEEN[0]
        assert seen["input"] == TurnInput(message_id=message_id, text="hi")
        assert seen["time"] == TimeContext(now_ms=clock.now_ms(), time_zone="Europe/Berlin")
        assert seen["tools"] == ["clock_read"]
        assert seen["value"] == {"now": clock.now_ms()}
        assert seen["types"][-4:] == ["turn/start", "user/message", "tool/call", "tool/result"]
        assert seen["model_name"] == "m-1"
        # The streamed pieces reached the stream observers, never the log; the reply did.
        payloads = [p for sid, p in streamed if sid == agent.session.id]
        assert payloads == [
            {"type": "assistant/stream", "messageId": message_id, "text": "ec"},
            {"type": "assistant/stream", "messageId": message_id, "text": "ho"},
        ]
        logged = [(e.type, e.data) for e in agent.session.events]
        assert ("assistant/message", {"text": "echo: hi"}) in logged
        assert [d for t, d in logged if t.startswith("assistant/")] == [{"text": "echo: hi"}]
        call = next(d for t, d in logged if t == "tool/call")
        assert call["callId"] == "call-1"
        # The zone went to that turn only: nothing in the log names it.
        assert "Europe/Berlin" not in repr(logged)
    finally:
        await host.close()


async def test_an_unknown_adapter_name_stops_the_start_naming_the_offered_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = _publish(tmp_path, monkeypatch)
    host = LiveHost(backend=MemoryBackend(), clock=ManualClock(), overlay=overlay, model="gpt")
    with pytest.raises(
        UnknownModelError, match=r"'gpt' \(offered: echo, none, openai, picky, scripted\)"
    ):
        await host.start()
    assert not host.agents.all()


async def test_an_adapter_refusing_its_settings_stops_the_start_with_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = _publish(tmp_path, monkeypatch)
    host = LiveHost(backend=MemoryBackend(), clock=ManualClock(), overlay=overlay, model="picky")
    with pytest.raises(UnknownModelError, match="model adapter 'picky': --model-name is required"):
        await host.start()


def test_the_host_offers_its_own_adapters_by_name() -> None:
    assert choose_model("scripted").name == "scripted"
    assert choose_model("none").name == "none"
    with pytest.raises(UnknownModelError, match="offered: none, openai, scripted"):
        choose_model("echo")


async def test_a_stream_observer_failure_is_contained_and_a_cold_session_streams_nothing(
    host: LiveHost,
) -> None:
    calls: list[str] = []

    def broken(session, payload):
        calls.append("broken")
        raise RuntimeError("viewer gone")

    host.sessions.subscribe(lambda o: broken(o.session, o.payload), Streamed)
    agent = await host.create_session()
    with capture_logs() as logs:
        agent.stream_text("m", "piece")
    assert calls == ["broken"]
    assert [e["event"] for e in logs] == ["session.stream_observer_failed"]
    await host.close_session(agent.session.id)
    agent.stream_text("m", "late")
    assert calls == ["broken"]


async def test_scripted_phrases_with_timed_arguments_get_the_turn_time(
    host: LiveHost, clock: ManualClock
) -> None:
    received: list[TimeContext] = []

    def arguments(match, time: TimeContext):
        received.append(time)
        return {"zone": time.time_zone or "UTC"}

    async def handler(call):
        return call.arguments

    class Phrases:
        @hookimpl
        def dsh_scripted_phrases(self):
            return [
                hookspecs.ScriptedPhrase(
                    pattern=__import__("re").compile("when"),
                    tool="zone_echo",
                    timed_arguments=arguments,
                    reply=lambda match, value: f"zone {value['zone']}",
                )
            ]

    host.load_plugin("phrases", factory=Phrases)
    host.tools.register(
        Tool(name="zone_echo", description="", parameters={"type": "object"}, handler=handler)
    )
    agent = await host.create_session()
    agent.send("when", time_zone="Asia/Shanghai")
    agent.send("when")
    await wait_until(lambda: len(received) == 2 and agent.phase == "idle")
    assert received == [
        TimeContext(now_ms=clock.now_ms(), time_zone="Asia/Shanghai"),
        TimeContext(now_ms=clock.now_ms(), time_zone=None),
    ]
    said = [e.data["text"] for e in agent.session.events if e.type == "assistant/message"]
    assert said == ["zone Asia/Shanghai", "zone UTC"]


def test_the_time_context_tells_the_utc_instant_and_the_users_local_time() -> None:
    instant = 1_780_000_000_000  # 2026-05-28T20:26:40Z, summer time in Berlin
    utc_only = TimeContext(now_ms=instant).describe()
    assert utc_only.splitlines() == [
        "Current time: 2026-05-28T20:26:40Z (UTC).",
        (
            "The user's time zone is unknown for this turn: read and write times in UTC, or "
            "ask the user which zone they mean."
        ),
    ]
    berlin = TimeContext(now_ms=instant, time_zone="Europe/Berlin")
    assert berlin.local().isoformat() == "2026-05-28T22:26:40+02:00"
    assert berlin.describe().splitlines()[1] == (
        "The user's time zone is Europe/Berlin; their local time is 2026-05-28T22:26:40+02:00 "
        "(Thursday). Interpret dates and times the user gives without a zone in this zone."
    )
