"""``dsh backup`` (issue 29 item 4): a consistent copy of a SQLite store while a real ``dsh serve``
keeps writing it, that passes SQLite's integrity check and the verification, that ``dsh
sessions`` lists once restored, and that serves and delivers a pending reminder; and the
refusals, each one plain line that leaves nothing behind."""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from dsh_hookspecs import Event, SessionHeader
from dsh_host.cli._args import add_backup_parser
from dsh_host.cli._backup import (
    BackupError,
    backup,
    compare_stores,
    run_backup,
)
from dsh_host.persistence import SQLiteBackend, Write, opened
from tests.procs import LISTENING, ROOT, DshProcess, run_dsh

CREATED = 1_700_000_000_000
STORE = "dsh.sqlite3"


def _dsh_backup(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``dsh backup ARGV`` through the command's own parser and runner: status, out, err."""
    top = argparse.ArgumentParser(prog="dsh")
    add_backup_parser(top.add_subparsers(dest="command", required=True))
    capsys.readouterr()  # what came before (the log lines of a store being built)
    status = run_backup(top.parse_args(["backup", *argv]))
    out, err = capsys.readouterr()
    return status, out, err


def _store(data: Path, sessions: int, events: int = 3) -> None:
    """A closed store of ``sessions`` Sessions ``s000``.. of ``events`` events each."""

    async def write() -> None:
        async with opened(SQLiteBackend(data)) as backend:
            await asyncio.gather(
                *(
                    backend.append(
                        Write(
                            f"s{n:03d}",
                            0,
                            [
                                Event(
                                    seq=i, type="note", time=CREATED + i, data={"n": n, "text": "x"}
                                )
                                for i in range(events)
                            ],
                            SessionHeader(version=1, id=f"s{n:03d}", created_at=CREATED + n),
                            name=f"session {n}",
                        ),
                    )
                    for n in range(sessions)
                )
            )

    asyncio.run(write())


def _say(client: httpx.Client, sid: str, text: str) -> None:
    """Send ``text`` and return once its turn ended (each stream line within the client's
    read time-out, so a server held by the backup fails the test)."""
    with client.stream("GET", f"/api/sessions/{sid}/events") as events:
        sent = client.post(f"/api/sessions/{sid}/messages", json={"text": text})
        assert sent.status_code == 202, sent.text
        for line in events.iter_lines():
            if line.startswith("data:") and '"type":"turn/end"' in line:
                return
    raise AssertionError("the event stream ended before the turn did")


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Each Session's event rows, read from a store file at rest."""
    conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple[object, ...]]] = {
            sid: [] for (sid,) in conn.execute("SELECT id FROM sessions")
        }
        for sid, *row in conn.execute(
            "SELECT session_id, seq, type, time, data FROM events ORDER BY session_id, seq"
        ):
            out[sid].append(tuple(row))
        return out
    finally:
        conn.close()


def _single_file(copy: Path) -> None:
    """The copy is one self-contained database: journal mode DELETE in its header (bytes 18
    and 19 are 1, not WAL's 2), nothing beside it, no temporary file left in its folder."""
    assert copy.read_bytes()[18:20] == b"\x01\x01"
    assert sorted(p.name for p in copy.parent.iterdir()) == [copy.name]


def _listed(data: Path) -> dict[str, dict[str, object]]:
    result = run_dsh(["sessions", "--data", str(data), "--json", "--all"])
    assert result.returncode == 0, result.stderr
    return {row["id"]: row for row in map(json.loads, result.stdout.splitlines())}


def _dispatched(client: httpx.Client, sid: str, prompt: str) -> bool:
    entries = client.get(f"/api/sessions/{sid}/history").json()["entries"]
    return any(
        entry["event"]["type"] == "schedule/change"
        and entry["event"]["data"].get("operation") == "dispatch"
        and entry.get("view", {}).get("view", {}).get("prompt") == prompt
        for entry in entries
    )


# -- refusals first ---------------------------------------------------------------------------


def test_nothing_to_copy_is_refused_in_one_line_and_creates_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    to = out / "copy.sqlite3"
    missing = tmp_path / "missing"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    expected = {
        str(missing): f"dsh: no data folder at {missing}: nothing is stored there\n",
        str(a_file): f"dsh: {a_file} is not a dsh data folder: it is a file\n",
        str(empty): f"dsh: {empty} is not a dsh data folder: it holds no {STORE}\n",
        "postgresql://dsh@localhost/dsh": "dsh: dsh backup copies a SQLite data folder; for a "
        "PostgreSQL database use pg_dump (for example: pg_dump --format=custom "
        "--file=dsh.dump DBNAME)\n",
    }
    for data, said in expected.items():
        assert _dsh_backup(["--data", data, "--to", str(to)], capsys) == (2, "", said)
    assert list(out.iterdir()) == []
    assert not missing.exists()
    assert list(empty.iterdir()) == []


def test_an_existing_target_or_a_missing_folder_is_refused_and_left_alone(tmp_path, capsys):
    data = tmp_path / "data"
    _store(data, 2)
    taken = tmp_path / "taken.sqlite3"
    taken.write_bytes(b"mine")
    status, out, err = _dsh_backup(["--data", str(data), "--to", str(taken)], capsys)
    assert (status, out) == (2, "")
    assert err == (
        f"dsh: {taken} already exists: dsh backup never overwrites a file; name a new one\n"
    )
    assert taken.read_bytes() == b"mine"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    status, _, err = _dsh_backup(["--data", str(data), "--to", str(dangling)], capsys)
    assert status == 2
    assert "already exists" in err
    assert not (tmp_path / "nowhere").exists()
    nowhere = tmp_path / "no-folder" / "copy.sqlite3"
    status, _, err = _dsh_backup(["--data", str(data), "--to", str(nowhere)], capsys)
    assert (status, err) == (2, f"dsh: cannot write {nowhere}: no folder {nowhere.parent}\n")
    assert not nowhere.parent.exists()
    # --to is required.
    with pytest.raises(SystemExit) as exited:
        _dsh_backup(["--data", str(data)], capsys)
    assert exited.value.code == 2


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is not a database, just some text" * 200, "file is not a database"),
        (b"", "holds no dsh store yet: nothing was ever written to it"),
        (None, "is not a dsh store this dsh knows (schema version 0)"),
    ],
    ids=["not-sqlite", "empty-file", "foreign-schema"],
)
def test_a_file_that_is_not_a_dsh_store_is_refused_and_leaves_no_copy(
    tmp_path, capsys, content, said
):
    data = tmp_path / "data"
    data.mkdir()
    if content is None:
        foreign = sqlite3.connect(data / STORE)
        foreign.execute("CREATE TABLE things (id INTEGER PRIMARY KEY)")
        foreign.commit()
        foreign.close()
    else:
        (data / STORE).write_bytes(content)
    before = (data / STORE).read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    status, stdout, err = _dsh_backup(
        ["--data", str(data), "--to", str(out / "copy.sqlite3")], capsys
    )
    assert (status, stdout) == (1, "")
    assert err.startswith("dsh: ")
    assert said in err
    assert err.count("\n") == 1
    assert list(out.iterdir()) == []
    assert (data / STORE).read_bytes() == before


def test_a_disk_that_fills_up_mid_copy_is_one_line_and_leaves_nothing(tmp_path):
    # The copy runs in a child whose files may not grow past 64 KiB (RLIMIT_FSIZE, with
    # SIGXFSZ ignored so the write fails instead of killing it), as on a full disk.
    data = tmp_path / "data"
    _store(data, 400, events=5)
    assert (data / STORE).stat().st_size > 3 * 65536
    out = tmp_path / "out"
    out.mkdir()
    code = (
        "import argparse, sys\n"
        "from dsh_host.cli._args import add_backup_parser\n"
        "from dsh_host.cli._backup import run_backup\n"
        "top = argparse.ArgumentParser(prog='dsh')\n"
        "add_backup_parser(top.add_subparsers(dest='command'))\n"
        "sys.exit(run_backup(top.parse_args(sys.argv[1:])))\n"
    )

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

    to = out / "copy.sqlite3"
    result = subprocess.run(
        [sys.executable, "-c", code, "backup", "--data", str(data), "--to", str(to)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=small_disk,
    )
    assert (result.returncode, result.stdout) == (1, "")
    [line] = result.stderr.splitlines()
    assert line.startswith(f"dsh: cannot copy {(data / STORE).absolute()} to {to}: ")
    assert list(out.iterdir()) == []


def test_verification_names_the_first_difference(tmp_path):
    data = tmp_path / "data"
    _store(data, 3)
    good = tmp_path / "good.sqlite3"
    report = backup(data, good, verify=True)
    assert (report.sessions, report.events, report.verified) == (3, 9, True)
    assert compare_stores(data / STORE, good) is None

    def tampered(name: str, sql: str) -> Path:
        bad = tmp_path / name
        bad.write_bytes(good.read_bytes())
        conn = sqlite3.connect(bad)
        conn.execute(sql)
        conn.commit()
        conn.close()
        return bad

    changed = tampered("changed", "UPDATE events SET data = '{}' WHERE session_id = 's001'")
    assert compare_stores(data / STORE, changed) == "session s001 differs"
    header = tampered("header", "UPDATE sessions SET length = 7 WHERE id = 's002'")
    assert compare_stores(data / STORE, header) == "session s002 differs"
    fewer = tampered("fewer", "DELETE FROM events WHERE session_id = 's000' AND seq = 2")
    assert compare_stores(data / STORE, fewer) == "the store holds 9 events, the copy 8"
    renamed = tampered("renamed", "UPDATE names SET name = 'other' WHERE session_id = 's000'")
    assert compare_stores(data / STORE, renamed) == "table names differs"
    with pytest.raises(ValueError, match="pages"):
        backup(data, tmp_path / "never", pages=0)
    with pytest.raises(ValueError, match="pause"):
        backup(data, tmp_path / "never", pause=-1)
    assert not (tmp_path / "never").exists()
    with pytest.raises(BackupError, match="already exists"):
        backup(data, good)


def test_relative_paths_as_a_person_types_them(tmp_path, monkeypatch, capsys):
    _store(tmp_path / ".dsh-data", 2)
    monkeypatch.chdir(tmp_path)
    status, out, err = _dsh_backup(["--to", "backup.sqlite3", "--verify"], capsys)
    assert (status, err) == (0, "")
    assert out.startswith("backed up 2 sessions and 6 events (")
    assert " to backup.sqlite3 in " in out
    assert compare_stores(tmp_path / ".dsh-data" / STORE, tmp_path / "backup.sqlite3") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dsh-data", "backup.sqlite3"]


# -- while a real server writes ---------------------------------------------------------------


def test_a_backup_while_dsh_serve_writes_is_one_consistent_snapshot_that_restores(tmp_path):
    # Fails before issue 29 item 4: there was no backup at all (copying the file and its -wal
    # while the server writes is not one).
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            busy = client.post("/api/sessions", json={}).json()["id"]
            _say(client, busy, "remind me in 1 hour to stretch")
            idle = client.post("/api/sessions", json={}).json()["id"]
            _say(client, idle, "hello")
            during: list[str] = []
            seen: list[tuple[int, int]] = []

            def write_while_copying(copied: int, total: int) -> None:
                # Between steps, in the middle of the copy: the server takes a reminder and
                # a new Session and ends their turns (each stream line within the time-out).
                seen.append((copied, total))
                if copied < total and len(during) < 2:
                    _say(client, busy, f"remind me in 2 hours to drink water {len(during)}")
                    during.append(client.post("/api/sessions", json={}).json()["id"])

            copy = tmp_path / "backups" / "first.sqlite3"
            copy.parent.mkdir()
            report = backup(data, copy, pages=1, pause=0, verify=True, progress=write_while_copying)
            assert len(during) == 2  # both writes happened in the middle of the copy
            assert report.verified
            assert report.steps == len(seen) == report.pages > 2
            # Only afterwards, the next backup sees them: the server went on writing.
            later = tmp_path / "later" / "second.sqlite3"
            later.parent.mkdir()
            second = backup(data, later, verify=True)
        assert server.interrupt() == 0
    finally:
        server.close()
    _single_file(copy)
    _single_file(later)
    snapshot = _rows(copy)
    final = _rows(data / STORE)
    # The copy is the store as of one moment: the Sessions before the backup, each with a
    # prefix of its final log, and none of what the server wrote during the copy.
    assert set(snapshot) == {busy, idle}
    assert (report.sessions, report.events) == (2, sum(map(len, snapshot.values())))
    for sid, rows in snapshot.items():
        assert final[sid][: len(rows)] == rows
    assert len(snapshot[busy]) < len(final[busy])
    assert set(_rows(later)) == {busy, idle, *during} == set(final)
    assert _rows(later) == final
    assert (second.sessions, second.events) == (4, sum(map(len, final.values())))
    # Restored: the copy as dsh.sqlite3 in an empty folder is a store `dsh sessions` lists.
    restored = tmp_path / "restored"
    restored.mkdir()
    copy.rename(restored / STORE)
    rows = _listed(restored)
    assert set(rows) == {busy, idle}
    assert (rows[busy]["pendingReminders"], rows[idle]["pendingReminders"]) == (1, 0)
    assert rows[busy]["length"] == len(snapshot[busy])


def test_a_restored_copy_serves_and_delivers_its_pending_reminder(tmp_path, capsys):
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            _say(client, sid, "remind me in 3 seconds to stretch")
            copy = tmp_path / "copy.sqlite3"
            status, out, err = _dsh_backup(
                ["--data", str(data), "--to", str(copy), "--verify"], capsys
            )
        server.kill()  # the original is gone: only the copy is left to deliver it
    finally:
        server.close()
    assert (status, err) == (0, "")
    assert out.startswith("backed up 1 session and ")
    assert out.endswith("; verified: integrity ok, counts and digests match the snapshot\n")
    restored = tmp_path / "restored"
    restored.mkdir()
    copy.rename(restored / STORE)
    assert _listed(restored)[sid]["pendingReminders"] == 1
    again = DshProcess(["serve", "--data", str(restored), "--port", "0"])
    try:
        url = again.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            deadline = time.monotonic() + 30
            while not _dispatched(client, sid, "stretch"):
                assert time.monotonic() < deadline, client.get(f"/api/sessions/{sid}/history").text
                assert again.proc.poll() is None, again.stderr
                time.sleep(0.2)  # polling interval of a bounded wait on the condition above
        assert again.interrupt() == 0
        assert again.plain_stderr() == ["stopped; no reminders are pending"]
    finally:
        again.close()
