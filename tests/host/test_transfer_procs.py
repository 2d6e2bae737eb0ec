"""``dsh export``, ``dsh import`` and ``dsh migrate`` as real processes (issue 29 item 5): a store
whose reminders fall due seconds later moves from SQLite to PostgreSQL and a ``dsh serve`` there
fires each exactly once (the old store none); an export taken while a ``dsh serve`` writes the
store imports cleanly; a SIGKILLed ``dsh import`` leaves its target as it was; a migration or an
import refuses a store a running server holds (the folder lock, a live lease)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import threading
from pathlib import Path

import httpx
import pytest

from dsh_host import LiveHost
from dsh_host.cli._transfer import export
from dsh_host.persistence import PostgresBackend, SQLiteBackend, opened
from tests.api import wait_for
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster
from tests.procs import LISTENING, DshProcess, run_dsh, serve_command

pytestmark = pytest.mark.slow


def _body(backend) -> bytes:
    """A store's export without its first line (which says when it was written)."""

    async def read() -> bytes:
        out = io.BytesIO()
        if isinstance(backend, PostgresBackend):
            async with opened(backend):
                await export(backend, out)
        else:
            await export(backend, out)
        return out.getvalue().split(b"\n", 1)[1]

    return asyncio.run(read())


def _digest(backend) -> str:
    return hashlib.sha256(_body(backend)).hexdigest()


def _dispatches(backend) -> dict[str, list[str]]:
    """Per Session, the reminder ids its stored log dispatched, in order."""
    out: dict[str, list[str]] = {}
    for line in _body(backend).splitlines():
        row = json.loads(line)
        if "session" in row:
            sid = row["session"]["id"]
            out[sid] = []
        elif "event" in row:
            event = row["event"]
            if event["type"] == "schedule/change" and event["data"]["operation"] == "dispatch":
                out[sid].append(event["data"]["id"])
    return out


async def _reminders_due_soon(data: Path, seconds: list[int]) -> dict[str, list[str]]:
    """Sessions (one per entry of ``seconds``) each with a reminder due that many seconds from
    now, written by a host with the built-in plugins on the real clock; their reminder ids."""
    host = LiveHost(backend=SQLiteBackend(data), model="none")
    await host.start()
    made: dict[str, list[str]] = {}
    try:
        host.load_plugin("schedule", {"cold_delivery": True})
        for after in seconds:
            agent = await host.create_session()
            value = await agent.execute_tool(
                "schedule_create", {"prompt": f"in {after} s", "after_seconds": after}
            )
            assert isinstance(value, dict)
            made[agent.session.id] = [str(value["id"])]
    finally:
        await host.close()
    return made


def test_a_store_migrated_to_postgresql_fires_each_reminder_there_exactly_once(
    tmp_path: Path,
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    old = tmp_path / "old"
    made = asyncio.run(_reminders_due_soon(old, [6, 7, 8]))
    url = pg_cluster.new_database()
    moved = run_dsh(["migrate", "--from", str(old), "--to", url])
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith("migrated 3 Sessions (")
    assert "every log's sha256 is equal" in moved.stdout
    assert _dispatches(PostgresBackend(url)) == {sid: [] for sid in made}
    server = DshProcess(serve_command(url))
    try:
        server.wait_for_line(LISTENING)
        # Cold delivery on the new store resumes each Session when its reminder is due.
        wait_for(lambda: all(_dispatches(PostgresBackend(url)).values()), timeout=60)
        assert server.interrupt() == 0
    finally:
        server.close()
    assert _dispatches(PostgresBackend(url)) == made  # each exactly once, after the stop too
    assert _dispatches(SQLiteBackend(old)) == {sid: [] for sid in made}  # never on the old


def test_an_export_taken_while_a_server_writes_imports_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = DshProcess(serve_command(data))
    stop = threading.Event()
    written = [0]
    try:
        url = server.wait_for_line(LISTENING).group(1)

        def write() -> None:
            with httpx.Client(base_url=url, timeout=10) as client:
                while not stop.is_set():
                    sid = client.post("/api/sessions", json={}).json()["id"]
                    text = f"remind me in {10 + written[0] % 50} minutes to stretch"
                    sent = client.post(f"/api/sessions/{sid}/messages", json={"text": text})
                    assert sent.status_code == 202, sent.text
                    written[0] += 1

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        wait_for(lambda: written[0] >= 5, timeout=30)
        files = []
        for n in range(3):
            out = tmp_path / f"export-{n}.jsonl"
            done = run_dsh(["export", "--data", str(data), "--output", str(out)])
            assert done.returncode == 0, done.stderr
            files.append(out)
        stop.set()
        writer.join(timeout=30)
        assert server.interrupt() == 0
    finally:
        stop.set()
        server.close()
    for n, path in enumerate(files):
        end = json.loads(path.read_bytes().splitlines()[-1])
        assert end["end"] is True
        target = tmp_path / f"target-{n}"
        done = run_dsh(["import", str(path), "--data", str(target)])
        assert done.returncode == 0, done.stderr
        assert done.stdout == (
            f"imported {end['sessions']:,} Sessions ({end['events']:,} events), 0 already present\n"
        )
        again = _body(SQLiteBackend(target))
        assert again == path.read_bytes().split(b"\n", 1)[1]


def _big_file(path: Path, sessions: int, events: int, prefix: str = "s") -> None:
    with path.open("w") as file:
        file.write('{"format":"dsh-export","version":1,"exportedAt":"2026-08-05T12:00:00.000Z"}\n')
        for n in range(sessions):
            file.write(
                f'{{"session":{{"version":1,"id":"{prefix}{n:07}",'
                f'"createdAt":{1_785_931_200_000 + n},"delegationDepth":0}},"events":{events}}}\n'
            )
            file.writelines(
                f'{{"event":{{"seq":{seq},"type":"note","time":1785931200000,'
                f'"data":{{"text":"line {seq} of a long conversation"}}}}}}\n'
                for seq in range(events)
            )
        file.write(f'{{"end":true,"sessions":{sessions},"events":{sessions * events}}}\n')


def test_a_sigkilled_import_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    data = tmp_path / "data"
    small = tmp_path / "small.jsonl"
    _big_file(small, 3, 2, prefix="kept-")
    assert run_dsh(["import", str(small), "--data", str(data)]).returncode == 0
    before = _digest(SQLiteBackend(data))
    big = tmp_path / "big.jsonl"
    _big_file(big, 40_000, 10)
    importer = DshProcess(["import", str(big), "--data", str(data)])
    wal = data / "dsh.sqlite3-wal"
    try:
        # The second pass writes inside its one transaction: the WAL grows while it runs.
        def writing() -> bool:
            assert importer.proc.poll() is None, importer.stderr
            return wal.exists() and wal.stat().st_size > 8_000_000

        wait_for(writing, timeout=120)
        importer.kill()
    finally:
        importer.close()
    assert _digest(SQLiteBackend(data)) == before
    # The store opens as before (nothing acknowledged was lost) and takes the import again.
    again = run_dsh(["import", str(small), "--data", str(data)])
    assert (again.returncode, again.stdout) == (
        0,
        "imported 0 Sessions (0 events), 3 already present\n",
    )


def test_migrate_and_import_refuse_a_folder_a_server_holds(tmp_path: Path) -> None:
    data = tmp_path / "data"
    small = tmp_path / "small.jsonl"
    _big_file(small, 2, 1)
    assert run_dsh(["import", str(small), "--data", str(data)]).returncode == 0
    server = DshProcess(serve_command(data))
    try:
        server.wait_for_line(LISTENING)
        pid = server.proc.pid
        moved = run_dsh(["migrate", "--from", str(data), "--to", str(tmp_path / "new")])
        assert (moved.returncode, moved.stdout) == (1, "")
        assert moved.stderr == (
            f"dsh: data folder {data.absolute()} is already in use by another dsh process "
            f"(pid {pid}); stop it before migrating\n"
        )
        assert not (tmp_path / "new").exists()
        into = run_dsh(["import", str(small), "--data", str(data)])
        assert into.returncode == 1
        assert into.stderr == (
            f"dsh: data folder {data.absolute()} is already in use by another dsh process "
            f"(pid {pid})\n"
        )
        # An export reads beside it.
        assert run_dsh(["export", "--data", str(data)]).returncode == 0
        assert server.interrupt() == 0
    finally:
        server.close()


def test_migrate_and_import_refuse_a_database_a_server_holds_a_lease_on(
    tmp_path: Path,
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    url = pg_cluster.new_database()
    small = tmp_path / "small.jsonl"
    _big_file(small, 2, 1)
    server = DshProcess(serve_command(url))
    try:
        base = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=base, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]  # live: leased
        moved = run_dsh(["migrate", "--from", url, "--to", str(tmp_path / "new")])
        assert moved.returncode == 1
        assert moved.stderr.startswith(f"dsh: session {sid} is live on another host (")
        assert moved.stderr.endswith(f"stop every dsh serve on {url} before migrating\n")
        assert not (tmp_path / "new").exists()
        into = run_dsh(["import", str(small), "--data", url])
        assert into.returncode == 1
        assert into.stderr.startswith(f"dsh: session {sid} is live on another host (")
        assert "nothing was imported" in into.stderr
        assert server.interrupt() == 0
    finally:
        server.close()
    # Stopped, the server released its leases: the database moves.
    moved = run_dsh(["migrate", "--from", url, "--to", str(tmp_path / "new")])
    assert moved.returncode == 0, moved.stderr
