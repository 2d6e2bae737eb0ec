"""Adapter overhead: the ``openai`` model adapter's client-side cost per turn, beside the raw
HTTP round trip of the same requests.

A real LiveHost (in-memory backend, real clock, logs at warning level) runs with ``--model openai``
against the test suite's fake OpenAI-compatible server (``tests/models/fake_openai.py``,
uvicorn on loopback in a thread of the same process). Each turn has one tool call: the first
model step streams a tool call whose arguments arrive in three pieces, the adapter runs it
through the Agent's tool pipeline (``tool/call`` and ``tool/result`` appended, arguments
validated against the schema), and the second step streams a three-piece answer that the
adapter streams to the viewers and says (durable). Each turn runs in a fresh Session, so every
turn sends the same two request bodies. The adapter's time is measured around its
``run_turn`` (time.perf_counter): building the messages from the transcript, the SDK's two
streamed requests and their parsing, the tool call and the appends.

The raw round trip replays the very two request bodies that turn sent, with ``httpx`` directly
(one ``AsyncClient`` kept open, as the SDK keeps its own), reading each SSE stream to its end
without parsing it; the fake server answers it with the same two scripted replies. Adapter turns
and raw pairs alternate one by one after a warm-up of each, so drift on a shared machine hits
both alike. The ratio is adapter / raw at p50 and p90; the overhead is their difference.

Run: ``.venv/bin/python bench/adapter.py`` (or ``make bench``). Prints a table, writes JSON.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from dsh_hookspecs import ModelSettings
from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import wait_until

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
import _common
from _common import latency_summary, publish, ratio
from tests.models.fake_openai import ECHO, FakeOpenAI, text, tool_calls

TURNS = int(os.environ.get("ADAPTER_TURNS", "400"))
WARMUP = 30
SETTLE = 30.0  # seconds: the bound of every wait for a turn to end


def _script(fake: FakeOpenAI) -> None:
    """One turn's two replies: a tool call in pieces, then an answer in pieces."""
    fake.script(
        tool_calls(("call-1", "echo", ['{"wo', 'rd": "be', 'nch"}'])),
        text("The tool ", "said ", "bench."),
    )


async def _adapter_turn(host: LiveHost, fake: FakeOpenAI) -> list[dict[str, Any]]:
    """One measured turn in a fresh Session; the two request bodies it sent."""
    agent = await host.create_session()
    before = len(fake.requests)
    _script(fake)
    agent.send("echo bench")
    await wait_until(
        lambda: agent.phase == "idle" and agent.session.events[-1].type == "turn/end",
        timeout=SETTLE,
    )
    end = agent.session.events[-1].data
    assert end == {"outcome": "ok"}, end
    await host.close_session(agent.session.id)
    bodies = [request.body for request in fake.requests[before:]]
    assert len(bodies) == 2, len(bodies)
    return bodies


async def _raw_pair(client: httpx.AsyncClient, fake: FakeOpenAI, bodies: list[Any]) -> float:
    """The same two streamed requests straight through httpx; seconds for both."""
    _script(fake)
    started = time.perf_counter()
    for body in bodies:
        async with client.stream("POST", "/chat/completions", json=body) as response:
            response.raise_for_status()
            async for _ in response.aiter_bytes():
                pass
    return time.perf_counter() - started


async def measure() -> dict[str, list[float]]:
    fake = FakeOpenAI()
    fake.start()
    settings = ModelSettings(
        model_name="fake", base_url=fake.url, environ={"DSH_MODEL_API_KEY": "sk-bench"}
    )
    adapter: list[float] = []
    raw: list[float] = []
    try:
        async with (
            LiveHost(backend=MemoryBackend(), model="openai", model_settings=settings) as host,
            httpx.AsyncClient(
                base_url=fake.url, headers={"Authorization": "Bearer sk-bench"}, timeout=30
            ) as client,
        ):
            host.tools.register(ECHO)
            model: Any = host.model
            run_turn = model.run_turn
            took: list[float] = []

            async def timed(turn: Any) -> None:
                started = time.perf_counter()
                await run_turn(turn)
                took.append(time.perf_counter() - started)

            model.run_turn = timed
            for index in range(WARMUP + TURNS):
                bodies = await _adapter_turn(host, fake)
                raw_seconds = await _raw_pair(client, fake, bodies)
                fake.requests.clear()
                if index >= WARMUP:
                    adapter.append(took[-1])
                    raw.append(raw_seconds)
    finally:
        fake.stop()
    return {"adapter": adapter, "raw": raw}


def main() -> dict[str, Any]:
    _common.quiet_logs()
    runs = asyncio.run(measure())
    adapter = latency_summary(runs["adapter"])
    raw = latency_summary(runs["raw"])
    header = ["", "turns", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"]
    keys = ["n", "min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms"]
    overhead_p50 = round(adapter["p50_ms"] - raw["p50_ms"], 2)
    result: dict[str, Any] = {
        "name": "adapter",
        "title": (
            f"openai adapter: client-side ms per turn with one tool call (two streamed model "
            f"steps), {TURNS} turns, beside the raw HTTP round trip of the same two requests"
        ),
        "machine": _common.machine(),
        "adapter": adapter,
        "raw_http": raw,
        "tables": [
            {
                "title": "Per turn (two streamed requests), fake server on loopback",
                "header": header,
                "rows": [
                    ["openai adapter run_turn", *(adapter[key] for key in keys)],
                    ["raw httpx, same two requests", *(raw[key] for key in keys)],
                ],
            }
        ],
        "ratios": {
            "adapter_over_raw_p50": ratio(adapter["p50_ms"], raw["p50_ms"]),
            "adapter_over_raw_p90": ratio(adapter["p90_ms"], raw["p90_ms"]),
        },
        "notes": [
            (
                f"the adapter adds {overhead_p50} ms per turn at p50 "
                f"({round(overhead_p50 / 2, 2)} ms per model step) over the raw round trip: "
                "message building, the SDK's request and chunk parsing, the tool pipeline and "
                "the durable appends"
            ),
        ],
        "targets": [],
        "met": True,
    }
    return publish(result)


if __name__ == "__main__":
    main()
