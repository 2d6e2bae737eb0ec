"""Controllable model adapters for host tests."""

from __future__ import annotations

import asyncio

from dsh_host import LiveTurn


class GatedModel:
    """Each turn records its message and waits until the test releases it."""

    name = "gated"

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    def gate(self, text: str) -> asyncio.Event:
        return self.release.setdefault(text, asyncio.Event())

    async def run_turn(self, turn: LiveTurn) -> None:
        self.started.append(turn.message.text)
        await self.gate(turn.message.text).wait()
        turn.say(f"done: {turn.message.text}")
