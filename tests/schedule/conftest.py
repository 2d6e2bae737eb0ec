from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .harness import Harness, make_harness


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    harness = await make_harness()
    try:
        yield harness
    finally:
        harness.flush.mode = "ok"
        harness.flush.once.clear()
        harness.flush.gate.set()
        await harness.host.close()


class GatedScripted:
    """Scripted turns that wait for the test to release them (keeps an Agent busy)."""

    name = "gated-scripted"

    def __init__(self) -> None:
        import asyncio

        from dsh_host import ScriptedModel
        from dsh_schedule import SchedulePlugin

        self._asyncio = asyncio
        self._scripted = ScriptedModel(SchedulePlugin().dsh_scripted_phrases)
        self.started: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.free = False

    def gate(self, text: str):
        return self.gates.setdefault(text, self._asyncio.Event())

    def release_all(self) -> None:
        self.free = True
        for gate in self.gates.values():
            gate.set()

    async def run_turn(self, turn) -> None:
        self.started.append(turn.message.text)
        if not self.free:
            key = "reminder" if turn.message.text.startswith("[SCHEDULE") else turn.message.text
            await self.gate(key).wait()
        await self._scripted.run_turn(turn)


@pytest.fixture
async def clock_model_harness():
    model = GatedScripted()
    harness = await make_harness(model=model)
    try:
        yield harness, model
    finally:
        model.release_all()
        harness.flush.mode = "ok"
        harness.flush.gate.set()
        await harness.host.close()
