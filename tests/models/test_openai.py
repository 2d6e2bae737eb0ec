"""The ``openai`` adapter through a real host against the fake server (issue 12 item 2):
streaming, tool calls, the step bound, retries, failures, the context budget, follow-ups."""

from __future__ import annotations

import json

from structlog.testing import capture_logs

from dsh_host.testing import wait_until

from .conftest import SECRET, MakeHost, ask, of, streams
from .fake_openai import FakeOpenAI, Reply, error, text, tool_calls


async def test_a_plain_answer_streams_in_pieces_and_lands_as_one_durable_message(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(text("Hel", "lo ", "there"))
    host = await make_host()
    pieces = streams(host)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert pieces == ["Hel", "lo ", "there"]
    assert of(events, "assistant/message") == [{"text": "Hello there"}]
    assert of(events, "turn/end") == [{"outcome": "ok"}]
    [request] = fake.requests
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    body = request.body
    assert body["model"] == "fake"
    assert body["stream"] is True
    system, user = body["messages"]
    assert system["role"] == "system"
    assert "dsh Session" in system["content"]
    assert "Current time: " in system["content"]
    assert "(UTC)" in system["content"]
    assert user == {"role": "user", "content": "hi"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Says the word back.",
                "parameters": {
                    "type": "object",
                    "properties": {"word": {"type": "string"}},
                    "required": ["word"],
                    "additionalProperties": False,
                },
            },
        }
    ]


async def test_the_users_zone_reaches_the_system_message(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(text("ok"))
    host = await make_host()
    agent = await host.create_session()
    agent.send("hi", time_zone="Asia/Shanghai")
    await wait_until(lambda: fake.requests and agent.phase == "idle", timeout=10)
    system = fake.requests[0].body["messages"][0]["content"]
    assert "The user's time zone is Asia/Shanghai; their local time is " in system


async def test_a_tool_call_whose_arguments_arrive_in_pieces_runs_and_the_model_sees_its_result(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        tool_calls(("call_a", "echo", ['{"wo', 'rd": "', 'hi"}']), said=("Let me ", "check.")),
        text("It said hi."),
    )
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "echo hi")
    assert [event.type for event in events] == [
        "turn/start",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    assert of(events, "tool/call") == [
        {"callId": "call_a", "name": "echo", "arguments": {"word": "hi"}}
    ]
    assert of(events, "tool/result")[0]["value"] == {"echoed": "hi"}
    assert [m["text"] for m in of(events, "assistant/message")] == ["Let me check.", "It said hi."]
    second = fake.requests[1].body["messages"]
    assert second[1:] == [
        {"role": "user", "content": "echo hi"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"word":"hi"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"echoed":"hi"}'},
    ]


async def test_two_tool_calls_in_one_reply_run_in_order_and_pair_by_id(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        tool_calls(("c1", "echo", ['{"word": "one"}']), ("c2", "echo", ['{"word":', '"two"}'])),
        text("Both done."),
    )
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "two please")
    assert [(c["callId"], c["arguments"]) for c in of(events, "tool/call")] == [
        ("c1", {"word": "one"}),
        ("c2", {"word": "two"}),
    ]
    assert [e.type for e in events if e.type.startswith("tool/")] == [
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
    ]
    messages = fake.requests[1].body["messages"]
    [assistant] = [m for m in messages if m.get("tool_calls")]
    assert assistant["content"] is None
    assert [call["id"] for call in assistant["tool_calls"]] == ["c1", "c2"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert tools == [
        {"role": "tool", "tool_call_id": "c1", "content": '{"echoed":"one"}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"echoed":"two"}'},
    ]
    assert messages.index(assistant) + 1 == messages.index(tools[0])
    assert of(events, "assistant/message") == [{"text": "Both done."}]


async def test_invalid_tool_arguments_are_answered_and_the_model_recovers(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        tool_calls(("bad", "echo", ['{"word": "hi"'])),  # not JSON: the closing brace is missing
        tool_calls(("good", "echo", ['{"word": "hi"}'])),
        text("Fixed it."),
    )
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "echo")
    results = of(events, "tool/result")
    assert results[0]["callId"] == "bad"
    assert results[0]["value"]["code"] == "invalid_arguments"
    assert results[1] == {"callId": "good", "name": "echo", "value": {"echoed": "hi"}}
    # The raw text the model sent is kept in the log and shown back to it, with the answer.
    assert of(events, "tool/call")[0]["arguments"] == '{"word": "hi"'
    second = fake.requests[1].body["messages"]
    [call] = second[-2]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == '{"word": "hi"'
    assert second[-1]["tool_call_id"] == "bad"
    assert json.loads(second[-1]["content"])["code"] == "invalid_arguments"
    assert of(events, "assistant/message") == [{"text": "Fixed it."}]
    assert of(events, "turn/end") == [{"outcome": "ok"}]


async def test_the_step_bound_ends_the_turn_with_a_visible_note(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        tool_calls(("s1", "echo", ['{"word": "a"}'])),
        tool_calls(("s2", "echo", ['{"word": "b"}'])),
        text("never asked for"),
    )
    host = await make_host(max_steps=2)
    agent = await host.create_session()
    events = await ask(host, agent, "loop")
    assert len(fake.requests) == 2
    assert [c["callId"] for c in of(events, "tool/call")] == ["s1", "s2"]
    assert of(events, "assistant/message") == [
        {"text": "I stopped after 2 model steps without finishing; ask me to continue."}
    ]
    assert of(events, "turn/end") == [{"outcome": "ok"}]


async def test_429_is_retried_after_the_retry_after_the_server_asked_for(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(error(429, "slow down", {"Retry-After": "1"}), text("Now then."))
    host = await make_host()
    agent = await host.create_session()
    with capture_logs() as logs:
        events = await ask(host, agent, "hi")
    first, second = fake.requests
    assert second.at - first.at >= 1.0
    assert second.body == first.body
    assert of(events, "assistant/message") == [{"text": "Now then."}]
    retries = [e for e in logs if e["event"] == "model.retry"]
    assert [(e["status"], e["attempt"], e["wait_seconds"]) for e in retries] == [(429, 1, 1.0)]


async def test_a_5xx_is_retried_with_back_off_and_gives_up_after_four_tries(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(error(500, "oops"), text("Recovered."))
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert len(fake.requests) == 2
    assert of(events, "assistant/message") == [{"text": "Recovered."}]
    fake.script(*(error(503, "down", {"Retry-After": "0"}) for _ in range(5)))
    events = await ask(host, agent, "again")
    assert len(fake.requests) == 2 + 4
    assert of(events, "turn/end") == [
        {"outcome": "error", "error": "the model server failed the request (503) 4 times: down"}
    ]
    assert of(events, "assistant/message") == []


async def test_a_400_ends_the_turn_at_once_with_a_plain_error(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(error(400, "messages: bad   shape"), text("not reached"))
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert len(fake.requests) == 1
    assert of(events, "turn/end") == [
        {
            "outcome": "error",
            "error": "the model server refused the request (400): messages: bad shape",
        }
    ]
    assert of(events, "assistant/message") == []


async def test_a_stalled_server_times_out_visibly(fake: FakeOpenAI, make_host: MakeHost) -> None:
    fake.script(Reply(chunks=[{"content": "late"}], hold=30))
    host = await make_host(timeout_seconds=0.5)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert of(events, "turn/end") == [
        {"outcome": "error", "error": "the model server did not answer within 0.5 s (time-out)"}
    ]
    assert len(fake.requests) == 1  # a time-out is not retried


async def test_a_stream_that_stalls_mid_way_times_out_without_a_half_message(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(Reply(chunks=[{"content": "Half "}, {"content": "done"}], hold=30, hold_at=1))
    host = await make_host(timeout_seconds=0.5)
    pieces = streams(host)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert pieces == ["Half "]
    assert of(events, "assistant/message") == []
    assert of(events, "turn/end") == [
        {"outcome": "error", "error": "the model server stopped sending within 0.5 s (time-out)"}
    ]


async def test_a_stream_cut_mid_way_ends_the_turn_without_a_half_message(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    cut = text("The answer ", "is ", "forty-two")
    cut.cut_after = 2
    fake.script(cut)
    host = await make_host()
    pieces = streams(host)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert pieces == ["The answer ", "is "]
    assert of(events, "assistant/message") == []
    [end] = of(events, "turn/end")
    assert end["outcome"] == "error"
    assert end["error"].startswith("the model server's reply broke off")
    assert end["error"].endswith("nothing of it was kept")


async def test_a_stream_without_its_finish_is_incomplete(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(Reply(chunks=[{"content": "Trunc"}], finish=None))
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert of(events, "assistant/message") == []
    assert of(events, "turn/end") == [
        {
            "outcome": "error",
            "error": (
                "the model server's reply ended before it was complete; nothing of it was kept"
            ),
        }
    ]


async def test_the_context_budget_drops_the_oldest_whole_exchanges(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        tool_calls(("old", "echo", ['{"word": "first"}'])),
        text("A" * 400),
        text("B" * 400),
        text("C"),
    )
    host = await make_host(context_chars=2_500)
    agent = await host.create_session()
    await ask(host, agent, "first " + "x" * 400)
    await ask(host, agent, "second " + "y" * 400)
    await ask(host, agent, "third")
    sent = fake.requests[-1].body["messages"]
    size = sum(len(json.dumps(m, separators=(",", ":"), ensure_ascii=False)) for m in sent)
    assert size <= 2_500
    assert sent[0]["role"] == "system"
    assert sent[1]["role"] == "user"
    assert sent[1]["content"].startswith("second ")
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    # With room for everything, the first exchange, its call and result go whole.
    everything = fake.requests[2].body["messages"]
    assert [m["role"] for m in everything[1:]] == ["user", "assistant", "tool", "assistant", "user"]


async def test_an_exchange_that_alone_overflows_the_budget_is_still_sent(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(text("one"), text("two"))
    host = await make_host(context_chars=10)
    agent = await host.create_session()
    await ask(host, agent, "old")
    await ask(host, agent, "new")
    assert [m.get("content") for m in fake.requests[-1].body["messages"][1:]] == ["new"]


async def test_a_call_without_arguments_gets_an_empty_object(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(tool_calls(("bare", "echo", [])), text("It needs a word."))
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "echo nothing")
    assert of(events, "tool/call") == [{"callId": "bare", "name": "echo", "arguments": {}}]
    assert of(events, "tool/result")[0]["value"]["code"] == "invalid_arguments"
    assert of(events, "assistant/message") == [{"text": "It needs a word."}]


async def test_a_plain_text_gateway_error_is_quoted_after_the_last_try(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    page = "<html>502 Bad Gateway\n  upstream gone</html>"
    fake.script(*(Reply(status=502, error=page, headers={"Retry-After": "0"}) for _ in range(4)))
    host = await make_host()
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert len(fake.requests) == 4
    assert of(events, "turn/end") == [
        {
            "outcome": "error",
            "error": (
                "the model server failed the request (502) 4 times: "
                "<html>502 Bad Gateway upstream gone</html>"
            ),
        }
    ]
