"""The transcript as chat messages and the context budget (issue 12 item 2), on hand-made logs
with the shapes the host writes: interrupted calls, follow-ups, several calls after a say."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from dsh_hookspecs import Event, JSONValue, ModelSettings
from dsh_host import LiveHost
from dsh_host.models._openai_messages import chat_messages, transcript_messages
from dsh_host.persistence import MemoryBackend

from .conftest import ask, of


def _log(*items: tuple[str, JSONValue]) -> list[Event]:
    return [Event(seq=i, type=kind, time=0, data=data) for i, (kind, data) in enumerate(items)]


def call(call_id: str, arguments: JSONValue = None) -> tuple[str, JSONValue]:
    return ("tool/call", {"callId": call_id, "name": "echo", "arguments": arguments})


def result(call_id: str, value: JSONValue) -> tuple[str, JSONValue]:
    return ("tool/result", {"callId": call_id, "name": "echo", "value": value})


FOLLOW_UP = "[SCHEDULE REMINDER]\nDo not reply with this header.\n\n  drink water  "


def test_a_transcript_maps_to_chat_messages_faithfully() -> None:
    events = _log(
        ("session/start", {}),
        ("turn/start", {"messageId": "m1"}),
        ("user/message", {"text": "hi"}),
        ("assistant/message", {"text": "Checking both."}),
        call("a", {"word": "x"}),
        result("a", {"echoed": "x"}),
        call("b", "not json {"),
        result("b", {"code": "invalid_arguments", "message": "$ must be of type object"}),
        ("turn/end", {"outcome": "ok"}),
        ("schedule/change", {"operation": "create"}),
        ("agent/followup", {"text": FOLLOW_UP}),
        ("turn/start", {"messageId": "m2"}),
        ("user/message", {"text": FOLLOW_UP, "source": {"kind": "plugin", "plugin": "schedule"}}),
        call("gone", {}),  # the process died here: the recovery answered it interrupted
        result("gone", {"code": "interrupted", "message": "the host stopped"}),
        ("turn/end", {"outcome": "interrupted"}),
        ("turn/start", {"messageId": "m3"}),
        ("user/message", {"text": "again"}),
        call("running", {}),  # in flight: no result yet, so not sent
        result("stray", 1),  # a result without its call: not sent either
    )
    assert transcript_messages(events) == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"word":"x"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '"not json {"'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"echoed":"x"}'},
        {
            "role": "tool",
            "tool_call_id": "b",
            "content": '{"code":"invalid_arguments","message":"$ must be of type object"}',
        },
        {"role": "user", "content": FOLLOW_UP},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "gone", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "gone",
            "content": '{"code":"interrupted","message":"the host stopped"}',
        },
        {"role": "user", "content": "again"},
    ]


def test_the_budget_drops_whole_exchanges_oldest_first() -> None:
    exchanges = [
        (
            ("user/message", {"text": f"question {n} " + "q" * 100}),
            call(f"c{n}", {"word": "w" * 100}),
            result(f"c{n}", {"echoed": "w" * 100}),
            ("assistant/message", {"text": f"answer {n}"}),
        )
        for n in range(4)
    ]
    events = _log(("assistant/message", {"text": "before any user"}), *sum(exchanges, ()))
    everything = chat_messages("sys", events, 1_000_000)
    assert len(everything) == 1 + 1 + 4 * 4
    kept: list[int] = []
    for budget in (2_000, 1_200, 700, 1):
        sent = chat_messages("sys", events, budget)
        kept.append(len(sent))
        assert sent[0] == {"role": "system", "content": "sys"}
        assert sent[1]["role"] == "user"  # whole exchanges only: each starts at a user message
        # Every call goes with its result.
        ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls", ())]
        assert ids == [m["tool_call_id"] for m in sent if m["role"] == "tool"]
        assert sent[-1] == {"role": "assistant", "content": "answer 3"}  # the newest stays
        size = sum(len(json.dumps(m, separators=(",", ":"))) for m in sent)
        assert size <= budget or len(sent) == 1 + 4
    # Three, two, then one exchange of four messages fit (after the system message); the newest
    # is sent even when it alone is over the budget.
    assert kept == [1 + 3 * 4, 1 + 2 * 4, 1 + 4, 1 + 4]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_server_ends_the_turn_with_a_plain_error(tmp_path: Path) -> None:
    settings = ModelSettings(
        model_name="m",
        base_url=f"http://127.0.0.1:{_closed_port()}/v1",
        timeout_seconds=2,
        environ={"DSH_MODEL_API_KEY": "sk-unreachable"},
    )
    async with LiveHost(backend=MemoryBackend(), model="openai", model_settings=settings) as host:
        agent: Any = await host.create_session()
        events = await ask(host, agent, "hi")
    [end] = of(events, "turn/end")
    assert end["outcome"] == "error"
    assert end["error"].startswith("could not reach the model server: ")
    assert "sk-unreachable" not in end["error"]
