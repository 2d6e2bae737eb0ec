"""A real ``dsh serve --model openai`` process against the fake server (issue 12 item 2): the
key in its environment authenticates the requests and appears in no stderr line, no history
entry and no page or stream the server serves; nor does any fragment of it left by a cut quote
(issue 23 item 1), in the database file either."""

from __future__ import annotations

from pathlib import Path

import httpx

from dsh_host.models._openai import QUOTE_CHARS
from tests.procs import LISTENING, DshProcess

from .conftest import KEY, SECRET, fragments
from .fake_openai import FakeOpenAI, error, text, tool_calls

OVERLAY = "examples/web-schedule/overlay.toml"


def test_dsh_serve_talks_to_the_model_and_never_shows_the_key(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls(("list-1", "schedule_list", ["{", "}"])),
        text("You have ", "no reminders."),
        error(401, f"Incorrect API key provided: {SECRET}"),
    )
    args = ["serve", "--data", str(tmp_path / "data"), "--port", "0", "--overlay", OVERLAY]
    args += ["--model", "openai", "--model-name", "fake", "--base-url", fake.url]
    args += ["--log-level", "debug"]
    server = DshProcess(args, env={"DSH_MODEL_API_KEY": SECRET, "OPENAI_API_KEY": ""})
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            served: list[str] = []
            with client.stream("GET", f"/api/sessions/{sid}/events") as events:
                lines = events.iter_lines()
                for message in ("what is scheduled?", "and now?"):
                    sent = client.post(f"/api/sessions/{sid}/messages", json={"text": message})
                    assert sent.status_code == 202
                    # The stream is the bounded wait: each line within the client's read timeout.
                    for line in lines:
                        served.append(line)
                        if line.startswith("data:") and '"type":"turn/end"' in line:
                            break

            page = client.get(f"/api/sessions/{sid}/history", params={"maxMessages": 500})
            history = page.json()["entries"]
            served += [page.text, *(client.get(path).text for path in ("/", "/api/sessions"))]
        events_seen = [entry["event"] for entry in history]
        said = [e["data"]["text"] for e in events_seen if e["type"] == "assistant/message"]
        assert said == ["You have no reminders."]
        ends = [e["data"] for e in events_seen if e["type"] == "turn/end"]
        assert ends[-1] == {
            "outcome": "error",
            "error": "the model server refused the request (401): Incorrect API key provided: "
            "[redacted]",
        }
        assert any("event: stream" in line for line in served)  # the pieces streamed live
        assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in fake.requests)
        assert server.terminate(timeout=10) == 0
    finally:
        server.close()
    assert server.logged("agent.turn_failed")
    assert SECRET not in server.stderr
    assert SECRET not in repr(history)
    assert not [page for page in served if SECRET in page]


def test_dsh_serve_keeps_no_fragment_of_a_key_that_straddles_the_quote_cut(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    # Fails before issue 23's fix: 25 of the key's 50 characters came through the cut quote.
    filler = "x" * (QUOTE_CHARS - 25)
    fake.script(text("Hello ", "there."), error(401, f"{filler}{KEY} was rejected"))
    data = tmp_path / "data"
    args = ["serve", "--data", str(data), "--port", "0", "--overlay", OVERLAY]
    args += ["--model", "openai", "--model-name", "fake", "--base-url", fake.url]
    args += ["--log-level", "debug"]
    server = DshProcess(args, env={"DSH_MODEL_API_KEY": KEY, "OPENAI_API_KEY": ""})
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            frames: list[str] = []
            with client.stream("GET", f"/api/sessions/{sid}/events") as events:
                lines = events.iter_lines()
                for message in ("hi", "and again"):
                    sent = client.post(f"/api/sessions/{sid}/messages", json={"text": message})
                    assert sent.status_code == 202
                    for line in lines:  # each line within the client's read timeout
                        frames.append(line)
                        if line.startswith("data:") and '"type":"turn/end"' in line:
                            break
            page = client.get(f"/api/sessions/{sid}/history", params={"maxMessages": 500})
        ends = [
            entry["event"]["data"]
            for entry in page.json()["entries"]
            if entry["event"]["type"] == "turn/end"
        ]
        assert ends[-1] == {
            "outcome": "error",
            "error": f"the model server refused the request (401): {filler}[redacted] was rejected",
        }
        assert server.terminate(timeout=10) == 0
    finally:
        server.close()
    stored = b"".join(path.read_bytes() for path in sorted(data.rglob("*")) if path.is_file())
    assert b"refused the request (401)" in stored  # the database holds the error as text
    assert server.logged("agent.turn_failed")
    for where, seen in (
        ("the database", stored.decode("utf-8", "replace")),
        ("the history", page.text),
        ("the event stream", "\n".join(frames)),
        ("the server log", server.stderr),
    ):
        assert fragments(seen) == [], where
