"""The ``openai`` adapter's bounds (issue 23 items 1-3): no fragment of the key reaches an error
or a log line whatever cuts it; a whole model step has a deadline; a reply's text and a tool
call's arguments have a size limit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import ModelSettings
from dsh_host import Overlay
from dsh_host.cli._args import parser
from dsh_host.cli._main import model_settings
from dsh_host.models._openai import QUOTE_CHARS, TRIES, OpenAIModel
from dsh_host.testing import wait_until
from tests.web.support import serve

from .conftest import KEY, MakeHost, ask, fragments, of, streams
from .fake_openai import FakeOpenAI, Reply, error, text, tool_calls

OVERLAY = Path(__file__).resolve().parents[2] / "examples" / "web-schedule" / "overlay.toml"
DEADLINE_ERROR = (
    "the model server did not finish its reply within {:g} s (step deadline); "
    "nothing of it was kept"
)


def test_the_key_is_fifty_characters_and_fragments_finds_its_runs_of_eight() -> None:
    assert len(KEY) == 50
    assert len(fragments(KEY)) == 43
    assert fragments(KEY[:7] + " " + KEY[7:14]) == []


# -- 1. The key never leaks, in any length ------------------------------------------------------


def test_redact_hides_every_run_of_eight_characters_of_the_key() -> None:
    model = OpenAIModel(ModelSettings(model_name="m", environ={"DSH_MODEL_API_KEY": KEY}))
    assert model.redact(f"a {KEY} b") == "a [redacted] b"
    assert model.redact(f"a {KEY[:8]} b") == "a [redacted] b"
    assert model.redact(f"cut: {KEY[31:]}") == "cut: [redacted]"
    assert model.redact(f"a {KEY[:7]} b") == f"a {KEY[:7]} b"  # seven characters could be anything
    # Overlapping or touching stretches become one; those apart stay apart.
    assert model.redact(f"{KEY[10:30]}{KEY[5:14]}!") == "[redacted]!"
    assert model.redact(f"{KEY[3:12]} and {KEY[40:]}") == "[redacted] and [redacted]"
    assert model.redact("nothing secret") == "nothing secret"


def test_a_key_shorter_than_eight_is_redacted_only_where_it_is_whole() -> None:
    model = OpenAIModel(ModelSettings(model_name="m", environ={"OPENAI_API_KEY": "abc12\n"}))
    assert model.redact("abc12 abc1 xabc12x") == "[redacted] abc1 x[redacted]x"


def test_a_blank_key_redacts_nothing_but_authorization_values() -> None:
    model = OpenAIModel(ModelSettings(model_name="m", environ={"DSH_MODEL_API_KEY": "   "}))
    assert model.redact("a   b, Bearer tok-1") == "a   b, Bearer [redacted]"


@pytest.mark.parametrize("status", [401, 500])
async def test_no_fragment_of_the_key_reaches_the_error_at_any_offset_around_the_cut(
    fake: FakeOpenAI, make_host: MakeHost, status: int
) -> None:
    # Fails before the fix: the quote was cut before the key was removed.
    offsets = range(QUOTE_CHARS - 60, QUOTE_CHARS + 6)
    tries = 1 if status == 401 else TRIES  # a 500 is retried until the tries are used up
    for offset in offsets:
        message = "x" * offset + KEY + " was refused"
        fake.script(*(error(status, message, {"Retry-After": "0"}) for _ in range(tries)))
    with capture_logs() as logs:
        host = await make_host(environ={"DSH_MODEL_API_KEY": KEY})
        agent = await host.create_session()
        for offset in offsets:
            [end] = of(await ask(host, agent, f"try {offset}"), "turn/end")
            assert end["outcome"] == "error"
            assert end["error"].startswith("the model server ")
            assert fragments(end["error"]) == [], offset
    assert len(fake.requests) == tries * len(offsets)
    assert fragments(repr(logs)) == []


async def test_a_fragment_the_server_cut_is_redacted_in_a_refusal_and_a_broken_stream(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        error(401, f"bad key {KEY[:20]}"),  # the server itself cut the key short
        Reply(chunks=[{"content": "Hal"}], stream_error={"message": f"upstream: {KEY[25:]}"}),
    )
    with capture_logs() as logs:
        host = await make_host(environ={"DSH_MODEL_API_KEY": KEY})
        agent = await host.create_session()
        refused = await ask(host, agent, "one")
        broken = await ask(host, agent, "two")
    assert of(refused, "turn/end") == [
        {
            "outcome": "error",
            "error": "the model server refused the request (401): bad key [redacted]",
        }
    ]
    assert of(broken, "turn/end") == [
        {
            "outcome": "error",
            "error": (
                "the model server's reply broke off (upstream: [redacted]); nothing of it was kept"
            ),
        }
    ]
    assert of(broken, "assistant/message") == []
    assert fragments(repr(logs)) == []
    assert fragments(repr([event.to_json() for event in agent.session.events])) == []


async def test_an_unexpected_sdk_failure_is_redacted_too(
    fake: FakeOpenAI, make_host: MakeHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever else the SDK raises while a step runs ends the turn with its text redacted.
    async def broken(self: OpenAIModel, turn: Any, stream: Any) -> Any:
        raise ValueError(f"could not decode the event {KEY[3:40]!r}")

    monkeypatch.setattr(OpenAIModel, "_read", broken)
    fake.script(text("never read"))
    host = await make_host(environ={"DSH_MODEL_API_KEY": KEY})
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert of(events, "turn/end") == [
        {"outcome": "error", "error": "could not decode the event '[redacted]'"}
    ]


# -- 2. A model step has a whole-step deadline --------------------------------------------------


async def test_a_reply_that_drips_ends_at_the_step_deadline_and_keeps_nothing(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    # Each piece comes well within the read time-out; only the step deadline can end this.
    fake.script(Reply(chunks=[{"content": "drip "}] * 100, drip=0.2))
    host = await make_host(step_timeout_seconds=1.0, timeout_seconds=5.0)
    pieces = streams(host)
    agent = await host.create_session()
    started = time.monotonic()
    events = await ask(host, agent, "hi", timeout=10)
    assert 1.0 <= time.monotonic() - started < 4.0
    assert pieces  # the pieces streamed while the step ran
    assert of(events, "assistant/message") == []
    assert of(events, "turn/end") == [{"outcome": "error", "error": DEADLINE_ERROR.format(1)}]


async def test_retry_waits_count_toward_the_step_deadline(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(error(503, "busy", {"Retry-After": "20"}), text("too late"))
    host = await make_host(step_timeout_seconds=1.0)
    agent = await host.create_session()
    started = time.monotonic()
    events = await ask(host, agent, "hi", timeout=10)
    assert time.monotonic() - started < 4.0
    assert len(fake.requests) == 1
    assert of(events, "turn/end") == [{"outcome": "error", "error": DEADLINE_ERROR.format(1)}]


async def test_a_queued_user_action_runs_promptly_once_a_dripping_step_hits_its_deadline(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(Reply(chunks=[{"content": "drip "}] * 300, drip=0.2))
    host = await make_host(overlay=Overlay.load(OVERLAY), step_timeout_seconds=1.5)
    async with serve(host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        sent = await client.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
        assert sent.status_code == 202
        await wait_until(lambda: len(fake.requests) == 1, timeout=5)
        started = time.monotonic()
        # Queued behind the dripping turn: it runs once the deadline ends that turn.
        answer = await client.post(
            f"/api/sessions/{sid}/tools/schedule_list", json={"arguments": {}}, timeout=10
        )
        assert time.monotonic() - started < 1.5 + 3
        assert answer.status_code == 200, answer.text
        assert answer.json()["value"] == []
        history = (await client.get(f"/api/sessions/{sid}/history")).json()["entries"]
    events = [entry["event"] for entry in history]
    kinds = [event["type"] for event in events]
    assert "assistant/message" not in kinds
    [end] = [event["data"] for event in events if event["type"] == "turn/end"]
    assert end == {"outcome": "error", "error": DEADLINE_ERROR.format(1.5)}
    assert kinds.index("turn/end") < kinds.index("tool/call")


# -- 3. A reply has a size limit ----------------------------------------------------------------


async def test_a_reply_past_the_limit_is_cut_there_and_says_so(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    # 60 pieces of 700: the 15th passes 10,000; then the server would hold the rest for 30 s,
    # so a turn that kept reading would time out instead of ending at once.
    reply = text(*["abcdefghij" * 70] * 60)
    reply.hold, reply.hold_at = 30, 16
    fake.script(reply, text("not asked for"))
    host = await make_host(max_reply_chars=10_000)
    pieces = streams(host)
    agent = await host.create_session()
    started = time.monotonic()
    events = await ask(host, agent, "tell me everything")
    assert time.monotonic() - started < 3.0
    kept = "abcdefghij" * 1000
    assert "".join(pieces) == kept  # the live pieces stop at the limit
    assert of(events, "assistant/message") == [
        {"text": kept + "\n\n[This reply was cut at 10,000 characters.]"}
    ]
    assert of(events, "turn/end") == [{"outcome": "ok"}]
    assert len(fake.requests) == 1


async def test_a_reply_of_exactly_the_limit_is_whole(fake: FakeOpenAI, make_host: MakeHost) -> None:
    fake.script(text("a" * 6_000, "b" * 4_000))
    host = await make_host(max_reply_chars=10_000)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert of(events, "assistant/message") == [{"text": "a" * 6_000 + "b" * 4_000}]


async def test_a_five_megabyte_reply_is_cut_at_the_default_limit(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    limit = ModelSettings().max_reply_chars
    assert limit == 200_000
    fake.script(text(*["y" * 10_000] * 500))
    host = await make_host()
    pieces = streams(host)
    agent = await host.create_session()
    events = await ask(host, agent, "flood me", timeout=30)
    note = "\n\n[This reply was cut at 200,000 characters.]"
    [said] = of(events, "assistant/message")
    assert said["text"] == "y" * limit + note
    assert sum(map(len, pieces)) == limit
    assert of(events, "turn/end") == [{"outcome": "ok"}]


async def test_a_tool_call_whose_arguments_pass_the_limit_is_not_run(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    huge = ['{"word": "', *["w" * 1_000] * 30, '"}']
    fake.script(
        tool_calls(
            ("small", "echo", ['{"word": "hi"}']), ("huge", "echo", huge), said=("Let me.",)
        ),
        text("not asked for"),
    )
    host = await make_host(max_reply_chars=10_000)
    agent = await host.create_session()
    events = await ask(host, agent, "echo a lot")
    assert of(events, "tool/call") == []  # a cut step runs none of its calls
    assert of(events, "assistant/message") == [
        {
            "text": "Let me.\n\nThe model's call of echo was not run: its arguments passed "
            "10,000 characters."
        }
    ]
    assert of(events, "turn/end") == [{"outcome": "ok"}]
    assert len(fake.requests) == 1


async def test_a_nameless_call_past_the_limit_is_named_as_a_tool(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    piece: dict[str, Any] = {"tool_calls": [{"index": 0, "function": {"arguments": "x" * 600}}]}
    fake.script(Reply(chunks=[piece] * 3, finish="tool_calls"))
    host = await make_host(max_reply_chars=1_000)
    agent = await host.create_session()
    events = await ask(host, agent, "hi")
    assert of(events, "tool/call") == []
    assert of(events, "assistant/message") == [
        {"text": "The model's call of a tool was not run: its arguments passed 1,000 characters."}
    ]


async def test_many_calls_each_under_the_limit_cannot_pass_it_together(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    # One reply holds at most the limit, however its characters are spread over calls.
    each = ['{"word": "', "w" * 700, '"}']
    calls = [(f"call-{n}", "echo", each) for n in range(5)]
    fake.script(tool_calls(*calls, said=("Many.",)), text("not asked for"))
    host = await make_host(max_reply_chars=2_000)
    agent = await host.create_session()
    events = await ask(host, agent, "echo many")
    assert of(events, "tool/call") == []
    assert of(events, "assistant/message") == [
        {
            "text": "Many.\n\nThe model's call of echo was not run: the reply passed "
            "2,000 characters."
        }
    ]
    assert len(fake.requests) == 1


# -- The flags -----------------------------------------------------------------------------------


def test_serve_flags_set_the_step_deadline_and_the_reply_limit() -> None:
    given = parser().parse_args(
        ["serve", "--model-step-timeout", "2.5", "--model-max-reply-chars", "5000"]
    )
    settings = model_settings(given)
    assert (settings.step_timeout_seconds, settings.max_reply_chars) == (2.5, 5_000)
    defaults = model_settings(parser().parse_args(["serve"]))
    assert (defaults.step_timeout_seconds, defaults.max_reply_chars) == (120.0, 200_000)


def test_serve_help_names_the_new_flags_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--model-step-timeout SECONDS" in shown
    assert "whole streamed reply together (default: 120)" in shown
    assert "--model-max-reply-chars N" in shown
    assert "(a longer call is not run) (default: 200000)" in shown


@pytest.mark.parametrize(
    ("flag", "value", "problem"),
    [
        ("--model-step-timeout", "0", "must be > 0, not 0"),
        ("--model-step-timeout", "inf", "must be > 0, not inf"),
        ("--model-step-timeout", "soon", "not a number of seconds: 'soon'"),
        ("--model-max-reply-chars", "0", "must be >= 1, not 0"),
        ("--model-max-reply-chars", "2e5", "not a whole number: '2e5'"),
    ],
)
def test_serve_refuses_a_bad_step_deadline_or_reply_limit(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, problem: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        parser().parse_args(["serve", flag, value])
    assert exited.value.code == 2
    assert problem in capsys.readouterr().err
