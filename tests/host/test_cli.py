"""The ``dsh`` CLI as real processes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from dsh_hookspecs import SessionHeader
from dsh_host.persistence import SQLiteBackend, Write, opened
from tests.procs import DSH, LISTENING, ROOT, DshProcess, run_dsh


def test_help_lists_the_commands():
    result = run_dsh(["--help"])
    assert result.returncode == 0
    assert "serve" in result.stdout
    assert "sessions" in result.stdout
    serve = run_dsh(["serve", "--help"])
    for flag in ("--overlay", "--data", "--host", "--port", "--model", "--token"):
        assert flag in serve.stdout


def test_reindex_rebuilds_the_wake_index_of_a_data_folder(tmp_path):
    data = tmp_path / "data"

    async def store() -> None:
        async with opened(SQLiteBackend(data)) as backend:
            header = SessionHeader(version=1, id="s1", created_at=1_700_000_000_000)
            await backend.append(Write("s1", 0, [], header, wakes={"gone": 1_785_931_260_000}))

    async def earliest() -> int | None:
        async with opened(SQLiteBackend(data)) as backend:
            return await backend.earliest_wake()

    asyncio.run(store())
    assert "reindex" in run_dsh(["--help"]).stdout
    # No plugin (--overlay none): none files an entry again, so the stale one is cleared.
    result = run_dsh(["reindex", "--data", str(data), "--overlay", "none"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "reindexed 1 sessions: 0 wake entries"
    assert asyncio.run(earliest()) is None


def test_serve_refuses_a_bad_overlay_with_one_clear_message(tmp_path):
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[plugins.no-such-plugin]\n")
    result = run_dsh(
        ["serve", "--data", str(tmp_path / "d"), "--port", "0", "--overlay", str(overlay)]
    )
    assert result.returncode == 1
    assert "plugin 'no-such-plugin': no such plugin" in result.stderr


def test_serve_exits_zero_on_sigterm_and_a_second_process_is_refused(tmp_path):
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        server.wait_for_line(r"listening on|ready")
        second = run_dsh(["serve", "--data", str(data), "--port", "0"])
        assert second.returncode == 1
        assert "already in use by another dsh process" in second.stderr
        started = time.monotonic()
        assert server.terminate(timeout=5) == 0
        assert time.monotonic() - started < 5
    finally:
        server.close()


def _rows(data) -> dict[str, dict]:
    result = run_dsh(["sessions", "--data", str(data), "--json"])
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return {row["id"]: row for row in rows}


def test_serve_answers_http_and_commits_everything_on_sigterm(tmp_path):
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
        with httpx.Client(base_url=url, timeout=10) as client:
            created = client.post("/api/sessions", json={})
            assert created.status_code == 201
            sid = created.json()["id"]
            with client.stream("GET", f"/api/sessions/{sid}/events") as events:
                assert events.headers["content-type"] == "text/event-stream"
                sent = client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
                assert sent.status_code == 202
                # The stream is the bounded wait: each line within the client's read timeout.
                for line in events.iter_lines():
                    if line.startswith("data:") and '"type":"turn/end"' in line:
                        break
                flushed = client.post(f"/api/sessions/{sid}/flush").json()
                assert flushed["durable"] is True
                # `dsh sessions` reads the folder the server holds (read-only).
                assert _rows(data)[sid]["length"] == flushed["throughSeq"]
                # SIGTERM with the stream still open: a prompt, clean exit.
                started = time.monotonic()
                assert server.terminate(timeout=5) == 0
                assert time.monotonic() - started < 5
    finally:
        server.close()
    assert _rows(data)[sid]["length"] == flushed["throughSeq"] >= 4


def test_serve_refuses_a_public_address_without_a_token(tmp_path):
    data = tmp_path / "data"
    result = run_dsh(["serve", "--data", str(data), "--host", "0.0.0.0", "--port", "0"])
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without --token" in result.stderr
    assert "make one with: dsh token" in result.stderr
    assert result.stdout == ""
    assert not data.exists()  # refused before storage was touched
    result = run_dsh(["serve", "--data", str(data), "--port", "70000"])
    assert result.returncode == 2


def test_serve_with_a_token_requires_it_on_the_api(tmp_path):
    server = DshProcess(
        [
            "serve",
            "--data",
            str(tmp_path / "d"),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--token",
            "t0k-of-16-chars!",
        ]
    )
    try:
        url = server.wait_for_line(LISTENING).group(1)
        port = url.rsplit(":", 1)[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            assert client.get("/api/sessions").status_code == 401
            authorized = client.get(
                "/api/sessions", headers={"Authorization": "Bearer t0k-of-16-chars!"}
            )
            assert authorized.json() == {"sessions": [], "next": None}
            assert client.get("/").status_code == 200
        server.proc.send_signal(signal.SIGINT)  # Ctrl+C: the same orderly stop as SIGTERM
        assert server.proc.wait(timeout=5) == 0
    finally:
        server.close()


def test_serve_takes_the_token_from_a_file_or_the_environment(tmp_path):
    # Fails before this fix: --token-file and DSH_TOKEN were unknown (the token could only be
    # given on the command line, visible to every local user through the process list).
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-from-file\n", encoding="utf-8")
    for args, env, token in (
        (["--token-file", str(token_file)], None, "s3cret-from-file"),
        ([], {"DSH_TOKEN": "s3cret-from-env!"}, "s3cret-from-env!"),
    ):
        server = DshProcess(
            ["serve", "--data", str(tmp_path / "d"), "--host", "0.0.0.0", "--port", "0", *args],
            env=env,
        )
        try:
            url = server.wait_for_line(LISTENING).group(1)
            port = url.rsplit(":", 1)[1]
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
                assert client.get("/api/sessions").status_code == 401
                ok = client.get("/api/sessions", headers={"Authorization": f"Bearer {token}"})
                assert ok.status_code == 200
            server.proc.send_signal(signal.SIGINT)
            assert server.proc.wait(timeout=5) == 0
        finally:
            server.close()


def test_serve_refuses_a_bad_token_source_in_one_line(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    cases = [
        (["--token", "a", "--token-file", str(empty)], "give the token one way only"),
        (["--token-file", str(empty)], "holds no token; make one with: dsh token"),
        (["--token-file", str(tmp_path / "missing")], "cannot read --token-file"),
    ]
    for args, fragment in cases:
        result = run_dsh(["serve", "--data", str(tmp_path / "d"), "--port", "0", *args])
        assert result.returncode == 2, result.stderr
        assert fragment in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr
    monkeypatch.setenv("DSH_TOKEN", "x")
    result = run_dsh(["serve", "--data", str(tmp_path / "d"), "--port", "0", "--token", "y"])
    assert result.returncode == 2
    assert "not --token and DSH_TOKEN" in result.stderr
    assert not (tmp_path / "d").exists()


# -- tokens that protect (issue 23 item 5) ------------------------------------------------------

_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")


def _dsh(args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``run_dsh`` with ``env`` instead of this process's ``DSH_TOKEN`` (if any)."""
    environ = {k: v for k, v in os.environ.items() if k != "DSH_TOKEN"}
    return subprocess.run(
        [*DSH, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**environ, **env},
    )


def test_dsh_token_prints_a_fresh_url_safe_token_and_is_listed_in_help():
    listed = run_dsh(["--help"]).stdout
    assert re.search(r"^\s+token\s+print a new random token", listed, re.MULTILINE)
    made = [run_dsh(["token"]) for _ in range(3)]
    for result in made:
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        assert result.stdout.endswith("\n")
        assert _TOKEN_SHAPE.fullmatch(result.stdout[:-1]), result.stdout
    assert len({result.stdout for result in made}) == 3


@pytest.mark.parametrize(
    ("host", "args", "env", "said"),
    [
        ("127.0.0.1", ["--token", ""], {}, "--token is empty"),
        ("127.0.0.1", ["--token", " "], {}, "--token has spaces around it"),
        ("127.0.0.1", ["--token", "a-good-long-token\n"], {}, "--token has spaces around it"),
        ("127.0.0.1", [], {"DSH_TOKEN": ""}, "DSH_TOKEN is empty"),
        ("127.0.0.1", [], {"DSH_TOKEN": " a-good-long-token "}, "DSH_TOKEN has spaces around"),
        ("0.0.0.0", ["--token", "\ta-good-long-token"], {}, "--token has spaces around it"),
        (
            "0.0.0.0",
            ["--token", "1"],
            {},
            (
                "--token must be at least 16 characters with no surrounding spaces to listen "
                "on 0.0.0.0 (it has 1)"
            ),
        ),
        ("::", [], {"DSH_TOKEN": "x" * 15}, "DSH_TOKEN must be at least 16 characters"),
        ("127.0.0.1", ["--token", "mot-de-passe-été"], {}, "--token may hold only visible ASCII"),
        ("0.0.0.0", ["--token-file", "short"], {}, "the token in --token-file"),
        ("0.0.0.0", ["--token-file", "blank"], {}, "holds no token"),
    ],
)
def test_serve_refuses_a_token_nobody_could_sign_in_with_or_easy_to_guess(
    tmp_path, host, args, env, said
):
    # Fails before issue 23 item 5: all but the empty ones started (an empty --token-file or
    # DSH_TOKEN was refused without saying how to make a good one).
    (tmp_path / "short").write_text("  fifteen-chars!  \n", encoding="utf-8")
    (tmp_path / "blank").write_text(" \t \n", encoding="utf-8")
    args = [str(tmp_path / a) if a in ("short", "blank") else a for a in args]
    data = tmp_path / "data"
    result = _dsh(["serve", "--data", str(data), "--host", host, "--port", "0", *args], env)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dsh: ")
    assert said in lines[0]
    assert lines[0].endswith("; make one with: dsh token")
    assert not data.exists()  # refused before storage was touched


@pytest.mark.parametrize(
    ("host", "source"),
    [
        ("127.0.0.1", "short"),  # any token that is not blank guards a loopback server
        ("0.0.0.0", "exactly-16"),
        ("0.0.0.0", "made"),  # what `dsh token` prints
        ("0.0.0.0", "file"),  # --token-file: its first line without the spaces around it
    ],
)
def test_serve_accepts_a_token_that_protects(tmp_path, host, source):
    token = {
        "short": "1",
        "exactly-16": "sixteen-chars-ok",
        "made": run_dsh(["token"]).stdout.strip(),
        "file": "from-a-file-16ch",
    }[source]
    assert source == "short" or len(token) >= 16
    args = ["--token", token]
    if source == "file":
        (tmp_path / "token").write_text(f"  {token} \r\nsecond line\n", encoding="utf-8")
        args = ["--token-file", str(tmp_path / "token")]
    server = DshProcess(
        ["serve", "--data", str(tmp_path / "d"), "--host", host, "--port", "0", *args]
    )
    try:
        port = server.wait_for_line(LISTENING).group(1).rsplit(":", 1)[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            assert client.get("/api/sessions").status_code == 401
            ok = client.get("/api/sessions", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200
        assert server.terminate(timeout=5) == 0
    finally:
        server.close()


# -- storage start-up refusals (issue 9 items 5 and 6) ------------------------------------------


def _store_with_sessions(data: Path, *ids: str) -> None:
    """A closed store in ``data`` holding one empty Session per id."""

    async def write() -> None:
        async with opened(SQLiteBackend(data)) as backend:
            for n, sid in enumerate(ids):
                header = SessionHeader(version=1, id=sid, created_at=1_700_000_000_000 + n)
                await backend.append(Write(sid, 0, [], header))

    asyncio.run(write())


def _plain_lines(stderr: str) -> list[str]:
    """stderr without the JSON log lines: what a person reads."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("{")]


def _assert_refused_in_one_line(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "listening" not in result.stdout
    assert "Traceback" not in result.stderr
    lines = _plain_lines(result.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("dsh: ")
    assert fragment in lines[0], lines[0]


def _serve_once(args: list[str], *, prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """``dsh serve`` expected to refuse: a server that starts instead runs into the time-out."""
    try:
        return subprocess.run(
            [*prefix, *DSH, "serve", "--port", "0", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"dsh serve started instead of refusing; stdout: {exc.stdout!r}"
        ) from None


def test_serve_refuses_a_store_whose_header_forbids_writes(tmp_path):
    # Fails before this fix: the server printed "listening" and answered every write 503.
    data = tmp_path / "data"
    _store_with_sessions(data, "s1")
    db = data / "dsh.sqlite3"
    with db.open("r+b") as f:
        f.seek(18)
        f.write(bytes([3]))  # a write version SQLite does not know: no one may write, not root
    before = db.read_bytes()
    result = _serve_once(["--data", str(data)])
    _assert_refused_in_one_line(result, f"database file {db} is not writable")
    assert db.read_bytes() == before
    # `dsh sessions` still lists a store it cannot write.
    listed = run_dsh(["sessions", "--data", str(data)])
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("s1  ")


def test_serve_refuses_a_read_only_database_file(tmp_path):
    # Fails before this fix: as for the header case. Root ignores file modes, so a root test
    # process runs the server without CAP_DAC_OVERRIDE (setpriv drops it from the bounding
    # set): then root too is held to the file's mode bits. As another user it runs as is.
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            # util-linux (essential on Debian) ships it: its absence is a broken machine.
            pytest.fail("running as root without setpriv: a file mode cannot be enforced")
        prefix = [setpriv, "--bounding-set=-dac_override"]
    data = tmp_path / "data"
    _store_with_sessions(data, "s1")
    db = data / "dsh.sqlite3"
    db.chmod(0o444)
    before = db.read_bytes()
    result = _serve_once(["--data", str(data)], prefix=prefix)
    _assert_refused_in_one_line(result, f"database file {db} is not writable")
    assert db.read_bytes() == before


def _damage_header(data: Path, sid: str) -> None:
    """Make one stored Session header undecodable, as a torn or hand-edited row would be."""
    outside = sqlite3.connect(data / "dsh.sqlite3", isolation_level=None)
    try:
        outside.execute("UPDATE sessions SET header = '{not json' WHERE id = ?", (sid,))
    finally:
        outside.close()


CREATED = 1_700_000_000_000  # the createdAt of _store_with_sessions' first Session


def _assert_listed_with_s2_damaged(data: Path) -> None:
    text = run_dsh(["sessions", "--data", str(data)])
    assert text.returncode == 0, text.stderr
    assert "Traceback" not in text.stderr
    lines = text.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["s3", "s2", "s1"]  # the newest first
    assert "DAMAGED" not in lines[0] + lines[2]
    assert lines[1].startswith("s2  2023-11-14T22:13:20Z  DAMAGED: the stored header is invalid")
    rows = _rows(data)
    assert list(rows) == ["s3", "s2", "s1"]
    assert "damaged" not in rows["s1"]
    assert rows["s1"]["length"] == 0
    damaged = rows["s2"]
    assert damaged.pop("error").startswith("the stored header is invalid")
    assert damaged == {"id": "s2", "createdAt": CREATED + 1, "damaged": True}


def test_sessions_lists_a_damaged_row_marked_beside_the_others(tmp_path):
    # Fails before this fix: one undecodable header made `dsh sessions` fail for every row.
    data = tmp_path / "data"
    _store_with_sessions(data, "s1", "s2", "s3")
    _damage_header(data, "s2")
    _assert_listed_with_s2_damaged(data)


def test_serve_lists_a_damaged_session_and_refuses_to_open_it_cleanly(tmp_path):
    # Fails before this fix: GET /api/sessions answered 503 for all because of one row.
    data = tmp_path / "data"
    _store_with_sessions(data, "s1", "s2", "s3")
    _damage_header(data, "s2")
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            listed = client.get("/api/sessions")
            assert listed.status_code == 200, listed.text
            rows = {row["id"]: row for row in listed.json()["sessions"]}
            assert list(rows) == ["s3", "s2", "s1"]  # the newest first
            assert rows["s1"] == {"id": "s1", "createdAt": CREATED, "live": False}
            damaged = rows["s2"]
            assert damaged.pop("error").startswith("the stored header is invalid")
            assert damaged == {"id": "s2", "createdAt": CREATED + 1, "live": False, "damaged": True}
            # Opening the damaged Session is a clear error, every way in; nothing crashes.
            for method, path, body in (
                ("POST", "/api/sessions/s2/resume", None),
                ("POST", "/api/sessions/s2/messages", {"text": "hello"}),
                ("POST", "/api/sessions/s2/fork", {}),
                ("POST", "/api/sessions/s2/flush", None),
                ("GET", "/api/sessions/s2/history", None),
                ("GET", "/api/sessions/s2/events", None),
            ):
                answer = client.request(method, path, json=body)
                assert answer.status_code == 503, (method, path, answer.text)
                assert answer.json()["error"]["code"] == "storage_unavailable"
            # The others still open, and the listing is unchanged by the refusals.
            assert client.post("/api/sessions/s1/resume").json() == {"id": "s1", "live": True}
            again = {row["id"]: row for row in client.get("/api/sessions").json()["sessions"]}
            assert again["s1"]["live"] is True
            assert again["s2"]["damaged"] is True
            # `dsh sessions` beside the running server (the read-only path) marks it too.
            _assert_listed_with_s2_damaged(data)
        assert server.terminate(timeout=5) == 0
    finally:
        server.close()


def _flushed_session_then_sigkill(data: Path) -> tuple[str, int]:
    """A real server: one Session with a finished turn, flushed (acknowledged), then SIGKILL."""
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with client.stream("GET", f"/api/sessions/{sid}/events") as events:
                sent = client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
                assert sent.status_code == 202
                for line in events.iter_lines():  # bounded by the client's read timeout
                    if line.startswith("data:") and '"type":"turn/end"' in line:
                        break
            flushed = client.post(f"/api/sessions/{sid}/flush").json()
            assert flushed["durable"] is True
        assert server.kill() == -signal.SIGKILL
    finally:
        server.close()
    return sid, flushed["throughSeq"]


def _starts_and_lists(data: Path, *extra: str) -> list[dict[str, object]]:
    server = DshProcess(["serve", "--data", str(data), "--port", "0", *extra])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            listed = client.get("/api/sessions")
            assert listed.status_code == 200, listed.text
            rows: list[dict[str, object]] = listed.json()["sessions"]
        assert server.terminate(timeout=5) == 0
    finally:
        server.close()
    return rows


def test_serve_refuses_a_store_that_lost_acknowledged_commits_unless_accepted(tmp_path):
    # Fails before this fix: with its -wal file gone the store started as if nothing had been
    # acknowledged, and the flushed Session was silently lost.
    data = tmp_path / "data"
    _flushed_session_then_sigkill(data)
    wal = data / "dsh.sqlite3-wal"
    assert wal.stat().st_size > 32  # the acknowledged commits live in the WAL
    wal.unlink()
    refused = _serve_once(["--data", str(data)])
    _assert_refused_in_one_line(refused, "acknowledged commits are missing")
    assert "dsh serve --accept-data-loss" in refused.stderr
    # `dsh sessions` still lists what the store holds, with the same warning.
    listed = run_dsh(["sessions", "--data", str(data)])
    assert listed.returncode == 0, listed.stderr
    assert "dsh: warning: " in listed.stderr
    assert "acknowledged commits are missing" in listed.stderr
    # The documented override starts with what is there; then a plain start raises no alarm.
    assert _starts_and_lists(data, "--accept-data-loss") == []
    assert _starts_and_lists(data) == []


def test_serve_refuses_an_emptied_database_after_acknowledged_commits(tmp_path):
    # Fails before this fix: a 0-byte database started as an empty store.
    data = tmp_path / "data"
    _store_with_sessions(data, "s1", "s2")
    (data / "dsh.sqlite3").write_bytes(b"")
    refused = _serve_once(["--data", str(data)])
    _assert_refused_in_one_line(refused, "is missing or empty, but 2 sessions and 0 events")
    assert (data / "dsh.sqlite3").read_bytes() == b""  # nothing was written


def test_serve_starts_after_a_plain_sigkill_with_no_false_alarm(tmp_path):
    data = tmp_path / "data"
    assert _starts_and_lists(data) == []  # a fresh folder starts
    sid, through_seq = _flushed_session_then_sigkill(data)
    rows = _starts_and_lists(data)  # a SIGKILL without tampering: no alarm
    assert [row["id"] for row in rows] == [sid]
    assert _rows(data)[sid]["length"] == through_seq
    assert [row["id"] for row in _starts_and_lists(data)] == [sid]  # and a clean restart


def test_serve_refuses_a_model_nobody_offers_naming_the_offered_ones(tmp_path):
    result = run_dsh(["serve", "--data", str(tmp_path / "d"), "--port", "0", "--model", "gpt"])
    assert result.returncode == 1
    assert "dsh: unknown model adapter 'gpt' (offered: " in result.stderr
    assert "none" in result.stderr
    assert "scripted" in result.stderr
    assert "listening on" not in result.stdout


@pytest.mark.parametrize(
    ("flag", "value", "problem"),
    [
        ("--model-max-steps", "0", "must be >= 1, not 0"),
        ("--model-max-steps", "many", "not a whole number: 'many'"),
        ("--model-timeout", "-1", "must be > 0, not -1"),
        ("--model-timeout", "nan", "must be > 0, not nan"),
        ("--model-context-chars", "1.5", "not a whole number: '1.5'"),
    ],
)
def test_serve_refuses_bad_model_settings_in_one_line(tmp_path, flag, value, problem):
    result = run_dsh(["serve", "--data", str(tmp_path / "d"), flag, value])
    assert result.returncode == 2
    assert problem in result.stderr
    assert not (tmp_path / "d").exists()


def test_a_made_token_never_starts_with_a_dash(monkeypatch):
    # `dsh serve --token $(dsh token)` would read a token beginning with "-" as an option (one
    # made token in 64 did, and the serve refused it).
    from dsh_host.cli import _main as _cli

    drawn = iter(
        [
            "-starts-with-a-dash-xxxxxxxxxxxxxxxxxxxxxxxx",
            "Fine-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ]
    )
    monkeypatch.setattr(_cli.secrets, "token_urlsafe", lambda n: next(drawn))
    assert _cli.new_token() == "Fine-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
