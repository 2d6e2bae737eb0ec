"""The host's own model adapters come from a default plugin (issue 24 item 3): ``dsh.models``
offers ``scripted``, ``none`` and ``openai`` through ``dsh_model_adapters`` like any plugin, and
the scripted adapter gathers the ``dsh_scripted_phrases`` itself (the ``Turn`` carries none)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from structlog.testing import capture_logs

from dsh_hookspecs import (
    JSONValue,
    ModelAdapterSpec,
    ModelSettings,
    ScriptedPhrase,
    TimeContext,
    Tool,
    Turn,
    TurnInput,
    hookimpl,
)
from dsh_host import LiveHost
from dsh_host.models import DEFAULT_MODELS, DefaultModels, ScriptedModel, choose_model
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until

HELLO = ScriptedPhrase(pattern=re.compile("hello"), reply=lambda match, value: "hi there")


class BareTurn:
    """Only what :class:`dsh_hookspecs.Turn` promises: no host objects, no phrases."""

    def __init__(self, text: str) -> None:
        self.said: list[str] = []
        self._input = TurnInput(message_id="m-1", text=text)

    @property
    def input(self) -> TurnInput:
        return self._input

    @property
    def time(self) -> TimeContext:
        return TimeContext(now_ms=0)

    def transcript(self) -> Sequence[object]:
        return ()

    def tools(self) -> Sequence[Tool]:
        return ()

    async def call_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue:
        raise AssertionError("no tool is called")

    def say(self, text: str) -> None:
        self.said.append(text)

    def stream(self, text: str) -> None:
        pass


def test_the_turn_contract_carries_no_scripted_phrases() -> None:
    assert not hasattr(Turn, "scripted_phrases")


async def test_the_default_plugins_scripted_adapter_asks_its_phrase_source_on_each_turn() -> None:
    offered: list[ScriptedPhrase] = []
    specs = {spec.name: spec for spec in DefaultModels(lambda: offered).dsh_model_adapters()}
    assert list(specs) == ["scripted", "none", "openai"]
    model = specs["scripted"].create(ModelSettings())
    before = BareTurn("hello")
    await model.run_turn(before)  # type: ignore[arg-type]
    assert before.said == ['I am the scripted demo model. Try "/tool NAME {json}".']
    offered.append(HELLO)  # a plugin loaded later teaches the same adapter
    after = BareTurn("hello")
    await model.run_turn(after)  # type: ignore[arg-type]
    assert after.said == ["hi there"]


class Greeter:
    @hookimpl
    def dsh_scripted_phrases(self) -> list[ScriptedPhrase]:
        return [HELLO]


class Quiet:
    name = "quiet"

    async def run_turn(self, turn: Turn) -> None:
        pass


class Impostor:
    """Offers a second ``scripted``: refused, the default plugin's comes first."""

    @hookimpl
    def dsh_model_adapters(self) -> list[ModelAdapterSpec]:
        return [ModelAdapterSpec(name="scripted", create=lambda settings: Quiet())]


class Offers:
    @hookimpl
    def dsh_model_adapters(self) -> list[ModelAdapterSpec]:
        return [ModelAdapterSpec(name="quiet", create=lambda settings: Quiet())]


async def test_the_host_loads_the_default_plugin_first_and_offers_its_adapters_by_the_hook() -> (
    None
):
    host = LiveHost(backend=MemoryBackend(), clock=ManualClock())
    assert host.plugins.default_names == [DEFAULT_MODELS]
    assert host.plugins.names == []
    assert isinstance(host.plugins.pm.get_plugin(DEFAULT_MODELS), DefaultModels)
    async with host:
        host.load_plugin("offers", factory=Offers)
        host.load_plugin("impostor", factory=Impostor)
        with capture_logs() as logs:
            model = choose_model("scripted", ModelSettings(), host.plugins.model_adapters())
        assert isinstance(model, ScriptedModel)
        assert [(e["event"], e["plugin"], e["adapter"]) for e in logs] == [
            ("plugin.duplicate_model_adapter", "impostor", "scripted")
        ]
        await host.unload_plugin("impostor")
        assert [(plugin, spec.name) for plugin, spec in host.plugins.model_adapters()] == [
            (DEFAULT_MODELS, "scripted"),
            (DEFAULT_MODELS, "none"),
            (DEFAULT_MODELS, "openai"),
            ("offers", "quiet"),
        ]
        assert host.plugins.names == ["offers"]
    assert host.plugins.default_names == []  # closing unloads it last


async def test_the_scripted_model_a_host_chose_answers_with_a_plugins_phrase() -> None:
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock(), model="scripted") as host:
        host.load_plugin("greeter", factory=Greeter)
        agent = await host.create_session()
        agent.send("hello")
        await wait_until(lambda: agent.phase == "idle" and _said(agent.session.events))
        assert _said(agent.session.events) == ["hi there"]


def _said(events: Sequence[object]) -> list[str]:
    return [
        str(event.data["text"])  # type: ignore[attr-defined]
        for event in events
        if event.type == "assistant/message"  # type: ignore[attr-defined]
    ]
