"""A test-only dsh plugin offering the ``gated-stream`` model adapter (``dsh_model_adapters``).

Published by a generated ``*.dist-info`` on the server's ``PYTHONPATH`` (see
``tests/browser/test_streaming.py``) and selected with ``dsh serve --model gated-stream``;
nothing in ``src/`` knows about it. Its overlay table names a control folder. Each turn appends
``{"messageId", "timeZone"}`` to ``turns.jsonl`` there (what the turn was told), streams
:data:`FIRST`, then polls (bounded) for the file ``release-<messageId>`` the test creates,
streams the rest and says the whole text. Not released in time, the turn fails visibly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

from dsh_hookspecs import JSONValue, ModelAdapterSpec, ModelSettings, Turn, hookimpl

FIRST = "The first piece arrives, "
REST = ("then the second ", "and the last.")
FULL = FIRST + "".join(REST)
NAME = "gated-stream"
#: Seconds a turn waits for its release file, and how often it looks.
RELEASE_BOUND = 30.0
POLL = 0.05


class GatedStream:
    """The ``gated-stream`` adapter (see the module docstring)."""

    name = NAME

    def __init__(self, control: Path) -> None:
        self.control = control

    async def run_turn(self, turn: Turn) -> None:
        message_id = turn.input.message_id
        record = {"messageId": message_id, "timeZone": turn.time.time_zone}
        with (self.control / "turns.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        turn.stream(FIRST)
        release = self.control / f"release-{message_id}"
        async with asyncio.timeout(RELEASE_BOUND):
            while not release.exists():
                await asyncio.sleep(POLL)
        for piece in REST:
            turn.stream(piece)
        turn.say(FULL)


class StreamingPlugin:
    """Offers :class:`GatedStream`, built with the control folder of its overlay table."""

    def __init__(self) -> None:
        self.control: Path | None = None

    @hookimpl
    def dsh_plugin_start(self, host: object, config: Mapping[str, JSONValue]) -> None:
        del host
        self.control = Path(str(config["control"]))

    @hookimpl
    def dsh_model_adapters(self) -> list[ModelAdapterSpec]:
        return [ModelAdapterSpec(name=NAME, create=self._create, description="test only")]

    def _create(self, settings: ModelSettings) -> GatedStream:
        del settings
        if self.control is None:
            raise ValueError("the streamtest plugin has no control folder")
        return GatedStream(self.control)
