"""The ``dsh`` command as a person meets it (issue 25 item 7): the built-in overlay when none is
given and ``--overlay none``, ``dsh --help`` opening with what dsh is, the line Ctrl-C prints
(real processes and SIGINT), refusals that name the way out and create no data folder, and
``dsh sessions`` with each Session's name and pending reminders."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from dsh_host._overlay import Overlay
from dsh_host.cli._main import _parser, overlay_of, stopped_line
from tests.procs import DSH, LISTENING, ROOT, DshProcess, run_dsh

EXAMPLE = ROOT / "examples" / "web-schedule" / "overlay.toml"
NO_KEY = {"DSH_MODEL_API_KEY": "", "OPENAI_API_KEY": ""}


def test_the_built_in_overlay_is_the_example_overlay():
    # Fails before issue 25 item 7: there was no built-in overlay (no overlay: no plugin).
    built_in = Overlay.default()
    assert [entry.name for entry in built_in.plugins] == ["schedule", "ui-schedule"]
    assert built_in.plugins == Overlay.load(EXAMPLE).plugins
    assert built_in.evict_idle_seconds == Overlay.load(EXAMPLE).evict_idle_seconds is None
    for command in ("serve", "reindex", "sessions"):
        assert overlay_of(_parser().parse_args([command]).overlay) == built_in
        chosen = overlay_of(_parser().parse_args([command, "--overlay", "none"]).overlay)
        assert chosen.plugins == ()
    # A file that happens to be called "none" is still reachable as a path.
    assert _parser().parse_args(["serve", "--overlay", "./none"]).overlay == Path("none")


def test_help_says_what_dsh_is_and_what_to_try_first_before_the_commands():
    # Fails before issue 25 item 7: the description was "a pluggy-based LLM agent host ...".
    result = run_dsh(["--help"])
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    first = said.index("dsh is a chat assistant you run on your own computer")
    assert first < said.index("positional arguments") < said.index("serve start dsh")
    intro = said[first : said.index("positional arguments")]
    assert "keeps reminders for you" in intro
    assert "run 'dsh serve', then open the address it prints" in intro
    assert "pluggy" not in said
    assert said.endswith("Each command explains its options: dsh COMMAND --help.")


def test_stopped_line_words():
    assert stopped_line(0) == "stopped; no reminders are pending"
    assert stopped_line(1) == "stopped; 1 reminder is pending and fires when dsh runs again"
    assert stopped_line(3) == "stopped; 3 reminders are pending and fire when dsh runs again"
    assert stopped_line(None).startswith("stopped; the pending reminders could not be counted")


def _say(client: httpx.Client, sid: str, text: str) -> None:
    """Send ``text`` and wait until its turn ended (each stream line within the read timeout)."""
    with client.stream("GET", f"/api/sessions/{sid}/events") as events:
        sent = client.post(f"/api/sessions/{sid}/messages", json={"text": text})
        assert sent.status_code == 202, sent.text
        for line in events.iter_lines():
            if line.startswith("data:") and '"type":"turn/end"' in line:
                return


def _listed(data: Path) -> tuple[list[str], dict[str, dict[str, object]]]:
    text = run_dsh(["sessions", "--data", str(data)])
    assert text.returncode == 0, text.stderr
    rows = run_dsh(["sessions", "--data", str(data), "--json"])
    assert rows.returncode == 0, rows.stderr
    by_id = {row["id"]: row for row in map(json.loads, rows.stdout.splitlines())}
    return text.stdout.splitlines(), by_id


def test_ctrl_c_says_how_many_reminders_are_pending_and_sessions_lists_them(tmp_path):
    # Fails before issue 25 item 7: Ctrl-C printed nothing a person reads, `dsh serve` without
    # --overlay loaded no plugin (so no reminder could be set), and `dsh sessions` showed
    # neither names nor pending reminders.
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            busy = client.post("/api/sessions", json={}).json()["id"]
            _say(client, busy, "remind me in 10 minutes to stretch")
            _say(client, busy, "remind me in 20 minutes to drink water")
            idle = client.post("/api/sessions", json={}).json()["id"]
            _say(client, idle, "hello")
            web_rows = {row["id"]: row for row in client.get("/api/sessions").json()["sessions"]}
            # While the server holds the folder, `dsh sessions` reads it read-only and shows
            # what the page's list shows.
            lines, rows = _listed(data)
        assert web_rows[busy]["badges"] == {"schedule.reminders": 2}
        for sid in (busy, idle):
            assert rows[sid].get("name") == web_rows[sid].get("name")
            assert rows[sid].get("badges") == web_rows[sid].get("badges")
        assert (rows[busy]["pendingReminders"], rows[idle]["pendingReminders"]) == (2, 0)
        assert "badges" not in rows[idle]
        [busy_line] = [line for line in lines if line.startswith(busy)]
        assert "  2 reminders pending" in busy_line
        if "name" in web_rows[busy]:
            assert busy_line.endswith(f'  "{web_rows[busy]["name"]}"')
        [idle_line] = [line for line in lines if line.startswith(idle)]
        assert "  no reminders pending" in idle_line
        assert server.interrupt() == 0
        assert server.plain_stderr() == [
            "stopped; 2 reminders are pending and fire when dsh runs again"
        ]
    finally:
        server.close()
    assert _listed(data)[1] == rows  # and the same once the server stopped
    # After a restart both Sessions are cold: the wake index finds the pending ones.
    again = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        again.wait_for_line(LISTENING)
        assert again.interrupt() == 0
        assert again.plain_stderr() == [
            "stopped; 2 reminders are pending and fire when dsh runs again"
        ]
    finally:
        again.close()
    # `dsh reindex` uses the built-in overlay too: the Schedule plugin files the busy one's wake.
    result = run_dsh(["reindex", "--data", str(data)])
    assert (result.returncode, result.stdout) == (0, "reindexed 2 sessions: 1 wake entries\n")
    # With no plugin nothing is counted, and the line does not pretend otherwise.
    bare = DshProcess(["serve", "--data", str(data), "--port", "0", "--overlay", "none"])
    try:
        bare.wait_for_line(LISTENING)
        assert bare.interrupt() == 0
        assert bare.plain_stderr() == ["stopped"]
    finally:
        bare.close()


def test_ctrl_c_with_nothing_pending(tmp_path):
    server = DshProcess(["serve", "--data", str(tmp_path / "data"), "--port", "0"])
    try:
        server.wait_for_line(LISTENING)
        assert server.interrupt() == 0
        assert server.plain_stderr() == ["stopped; no reminders are pending"]
    finally:
        server.close()


def _dsh(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``dsh`` expected to refuse (a server that starts instead runs into the time-out)."""
    return subprocess.run(
        [*DSH, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, **(env or {})},
    )


def _plain(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("{")]


@pytest.mark.parametrize("command", ["serve", "reindex", "sessions"])
def test_a_data_path_that_is_a_file_gets_the_same_plain_message(tmp_path, command):
    # Fails before issue 25 item 7 for serve and reindex: SQLite's own error (serve) and a
    # traceback-free but technical refusal, not the sentence `dsh sessions` gives.
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    extra = ["--port", "0"] if command == "serve" else []
    result = _dsh([command, "--data", str(a_file), *extra])
    assert (result.returncode, result.stdout) == (2, "")
    assert _plain(result.stderr) == [f"dsh: {a_file} is not a dsh data folder: it is a file"]
    assert a_file.read_text() == "hello\n"


def test_reindex_never_creates_a_data_folder(tmp_path):
    missing = tmp_path / "missing"
    result = _dsh(["reindex", "--data", str(missing)])
    assert result.returncode == 2
    assert _plain(result.stderr) == [
        f"dsh: no data folder at {missing}: nothing is stored there (dsh serve creates it)"
    ]
    assert not missing.exists()


def test_a_port_in_use_is_said_plainly_with_the_ways_out_and_creates_no_folder(tmp_path):
    # Fails before issue 25 item 7: "cannot listen on ...: [Errno 98] Address already in use",
    # after the data folder had been created.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = tmp_path / "new" / "data"
        result = _dsh(["serve", "--data", str(data), "--port", str(port)])
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = _plain(result.stderr)
    assert line.startswith(f"dsh: port {port} on 127.0.0.1 is already in use")
    assert f"dsh serve --port {port + 1}" in line
    assert f"make run PORT={port + 1}" in line
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("base_url", [None, "https://api.example.com/v1"])
def test_openai_without_a_key_refuses_to_start_and_names_the_variable(tmp_path, base_url):
    # Fails before issue 25 item 7: it started, and every turn then failed with a 401.
    data = tmp_path / "data"
    args = ["serve", "--data", str(data), "--port", "0", "--model", "openai"]
    args += ["--model-name", "gpt-4o-mini"]
    if base_url is not None:
        args += ["--base-url", base_url]
    result = _dsh(args, NO_KEY)
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = _plain(result.stderr)
    assert line.startswith("dsh: --model openai needs an API key: set DSH_MODEL_API_KEY")
    assert "keyless local server" in line
    assert not data.exists()


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:9/v1", "http://localhost:11434/v1"])
def test_openai_without_a_key_starts_for_a_server_on_this_machine(tmp_path, base_url):
    args = ["serve", "--data", str(tmp_path / "data"), "--port", "0", "--model", "openai"]
    server = DshProcess([*args, "--model-name", "qwen2.5:7b", "--base-url", base_url], env=NO_KEY)
    try:
        server.wait_for_line(LISTENING)
        assert server.terminate(timeout=10) == 0
    finally:
        server.close()


def test_a_start_that_fails_after_opening_storage_leaves_no_folder_behind(tmp_path):
    # Fails before issue 25 item 7: the plugin was refused, but the data folder (with an empty
    # store in it) stayed, as did the folders above it that the start had created.
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[plugins.no-such-plugin]\n")
    data = tmp_path / "new" / "deeper" / "data"
    result = _dsh(["serve", "--data", str(data), "--port", "0", "--overlay", str(overlay)])
    assert result.returncode == 1
    assert "plugin 'no-such-plugin': no such plugin" in result.stderr
    assert not (tmp_path / "new").exists()
    # A folder that existed before is never removed.
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep\n")
    result = _dsh(["serve", "--data", str(existing), "--port", "0", "--overlay", str(overlay)])
    assert result.returncode == 1
    assert (existing / "mine.txt").read_text() == "keep\n"
