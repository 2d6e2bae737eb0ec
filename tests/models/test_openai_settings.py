"""The ``openai`` adapter's settings, retry waits and redaction (issue 12 item 2)."""

from __future__ import annotations

import email.utils
import subprocess
import sys

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import ModelSettings
from dsh_host import LiveHost, UnknownModelError, choose_model
from dsh_host.models._openai import MAX_WAIT, NO_KEY, OpenAIModel, retry_wait
from dsh_host.persistence import MemoryBackend

from .conftest import SECRET, MakeHost, ask, of
from .fake_openai import FakeOpenAI, error, text


def test_the_openai_adapter_needs_a_model_name() -> None:
    with pytest.raises(
        UnknownModelError,
        match="model adapter 'openai': --model-name is required for the openai adapter",
    ):
        choose_model("openai", ModelSettings())


def test_the_sdk_loads_only_when_the_openai_adapter_is_chosen() -> None:
    code = (
        "import sys; import dsh_host; from dsh_host import choose_model; "
        "assert 'openai' not in sys.modules; choose_model('scripted'); "
        "assert 'openai' not in sys.modules; "
        "from dsh_hookspecs import ModelSettings; "
        "m = choose_model('openai', ModelSettings(model_name='x')); "
        "assert m.name == 'openai' and 'openai' in sys.modules"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("environ", "sent"),
    [
        ({}, NO_KEY),
        ({"OPENAI_API_KEY": "sk-fallback"}, "sk-fallback"),
        ({"OPENAI_API_KEY": "sk-fallback", "DSH_MODEL_API_KEY": "sk-first"}, "sk-first"),
    ],
)
async def test_the_key_comes_from_the_environment_or_a_placeholder(
    fake: FakeOpenAI, environ: dict[str, str], sent: str
) -> None:
    fake.script(text("ok"))
    settings = ModelSettings(model_name="fake", base_url=fake.url, environ=environ)
    async with LiveHost(backend=MemoryBackend(), model="openai", model_settings=settings) as host:
        agent = await host.create_session()
        await ask(host, agent, "hi")
    assert fake.requests[0].headers["authorization"] == f"Bearer {sent}"


def test_retry_wait_honours_the_servers_ask_and_caps_it() -> None:
    now = 1_800_000_000.0
    assert retry_wait({"retry-after": "2"}, 1, now) == 2.0
    assert retry_wait({"retry-after": "0.25"}, 3, now) == 0.25
    assert retry_wait({"retry-after-ms": "1500", "retry-after": "9"}, 1, now) == 1.5
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert retry_wait({"retry-after": date}, 1, now) == 7.0
    past = email.utils.formatdate(now - 60, usegmt=True)
    assert retry_wait({"retry-after": past}, 1, now) == 0.0
    assert retry_wait({"retry-after": "3600"}, 1, now) == MAX_WAIT
    # Without a readable ask: 0.5 s, doubling per retry, capped.
    assert [retry_wait({}, attempt, now) for attempt in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert retry_wait({"retry-after": "soon", "retry-after-ms": "x"}, 2, now) == 1.0
    assert retry_wait({"retry-after": "nan"}, 1, now) == 0.5
    assert retry_wait({}, 30, now) == MAX_WAIT


def test_redact_removes_the_key_and_authorization_values() -> None:
    model = OpenAIModel(ModelSettings(model_name="m", environ={"DSH_MODEL_API_KEY": SECRET}))
    said = model.redact(
        f"bad key {SECRET}; Authorization: Bearer sk-other-123, 'authorization'='token-9' "
        "bearer abc.def"
    )
    assert SECRET not in said
    assert "sk-other-123" not in said
    assert "token-9" not in said
    assert "abc.def" not in said
    assert said.startswith("bad key [redacted]; Authorization: Bearer [redacted],")


async def test_the_key_never_reaches_an_error_a_log_line_or_the_transcript(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    fake.script(
        error(401, f"Incorrect API key provided: {SECRET}. Authorization: Bearer {SECRET}"),
        error(429, f"quota of {SECRET} used up", {"Retry-After": "0"}),
        text("fine"),
    )
    with capture_logs() as logs:
        host = await make_host()
        agent = await host.create_session()
        refused = await ask(host, agent, f"my key is not {SECRET[:6]}")
        answered = await ask(host, agent, "again")
    [end] = of(refused, "turn/end")
    assert end == {
        "outcome": "error",
        "error": (
            "the model server refused the request (401): Incorrect API key provided: "
            "[redacted]. Authorization: Bearer [redacted]"
        ),
    }
    assert of(answered, "assistant/message") == [{"text": "fine"}]
    assert any(entry["event"] == "agent.turn_failed" for entry in logs)
    assert SECRET not in repr(logs)
    assert SECRET not in repr([event.to_json() for event in agent.session.events])
