"""SQLite-specific promises: pragmas, group commit, the data-folder lock, corruption, crashes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shutil
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dsh_host.conformance import assert_stored, make_event, make_events, make_header
from dsh_host.persistence import (
    DataDirLock,
    DataDirLockedError,
    SQLiteBackend,
    StorageBehindError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StoredSummary,
    Write,
    damaged_sessions,
    list_sessions_read_only,
    read_only_page,
)
from dsh_host.persistence.sqlite import SCHEMA_VERSION

DB = "dsh.sqlite3"
BOUND = 30.0  # seconds: the most any wait on a condition may take before the test fails


@contextlib.asynccontextmanager
async def opened(folder: Path, *, accept_data_loss: bool = False) -> AsyncIterator[SQLiteBackend]:
    """An open backend on ``folder``, closed when the block ends, however it ends."""
    backend = SQLiteBackend(folder, accept_data_loss=accept_data_loss)
    await backend.open()
    try:
        yield backend
    finally:
        await backend.close()


def run_sql(db: Path, *statements: str) -> None:
    """Change the store behind dsh's back, as another program would."""
    outside = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in statements:
            outside.execute(statement)
    finally:
        outside.close()


async def _assert_released(folder: Path, backend: SQLiteBackend) -> None:
    """After a refused open the folder is free again, and closing the refused backend is a no-op."""
    lock = DataDirLock(folder)
    lock.acquire()
    lock.release()
    await backend.close()


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SQLiteBackend]:
    async with opened(tmp_path) as backend:
        yield backend


async def wait_until(condition: Callable[[], bool]) -> None:
    """Yield to the loop until ``condition`` holds (bounded); never sleeps for a duration."""
    for _ in range(100_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


class BlockedWorker:
    """Holds the backend's worker thread so that appends queue up behind it, deterministically."""

    def __init__(self, backend: SQLiteBackend) -> None:
        self._release = threading.Event()
        self._started = threading.Event()
        assert backend._executor is not None
        self._done = backend._executor.submit(self._block)

    def _block(self) -> None:
        self._started.set()
        self._release.wait(BOUND)

    def release(self) -> None:
        self._release.set()
        self._done.result(BOUND)


def start_creates(backend: SQLiteBackend, count: int, *, length: int) -> list[asyncio.Task[None]]:
    """Appends creating ``s0`` .. ``s<count-1>`` with ``length`` events each, as tasks."""
    return [
        asyncio.create_task(
            backend.append(Write(f"s{i}", 0, make_events(0, length), make_header(f"s{i}")))
        )
        for i in range(count)
    ]


def wal_bytes(db: Path) -> int:
    wal = db.with_name(db.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


# -- connection settings -------------------------------------------------------------------


async def test_database_uses_wal_full_sync_and_foreign_keys(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    outside = sqlite3.connect(tmp_path / DB)
    try:
        assert outside.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert outside.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert outside.execute("SELECT id, length FROM sessions").fetchall() == [("s1", 1)]
    finally:
        outside.close()
    # synchronous, foreign_keys and busy_timeout are per connection: ask the backend's own.
    conn = backend._conn
    assert conn is not None
    pragmas = await backend._call(
        lambda: [
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("synchronous", "foreign_keys", "busy_timeout", "journal_mode")
        ]
    )
    assert pragmas[0] == 2  # FULL
    assert pragmas[1] == 1
    assert pragmas[2] > 0
    assert pragmas[3] == "wal"


async def test_all_sqlite_work_runs_on_one_worker_thread(backend: SQLiteBackend) -> None:
    threads: set[int] = set()
    await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    for _ in range(3):
        threads.add(await backend._call(threading.get_ident))
        await backend.load("s1")
    assert len(threads) == 1
    assert threading.get_ident() not in threads


# -- group commit --------------------------------------------------------------------------


async def test_concurrent_appends_share_one_transaction(backend: SQLiteBackend) -> None:
    before = backend.commits
    blocker = BlockedWorker(backend)
    try:
        tasks = start_creates(backend, 50, length=2)
        await wait_until(lambda: backend.pending == 50)
    finally:
        blocker.release()
    await asyncio.gather(*tasks)
    # At most the first request went alone; everything queued meanwhile shared one COMMIT.
    assert backend.commits - before <= 2
    assert backend.appends == 50
    assert backend.pending == 0
    listed = await backend.list_sessions()
    assert sorted(s.header.id for s in listed) == sorted(f"s{i}" for i in range(50))
    assert {s.length for s in listed} == {2}


async def test_a_conflicting_request_in_a_group_fails_alone(backend: SQLiteBackend) -> None:
    for i in range(5):
        await backend.append(Write(f"s{i}", 0, make_events(0, 1), make_header(f"s{i}")))
    before_commits, before_appends = backend.commits, backend.appends
    blocker = BlockedWorker(backend)
    try:
        calls = {
            "ok-s0": backend.append(Write("s0", 1, make_events(1, 1))),
            "ok-s0-again": backend.append(Write("s0", 2, make_events(2, 2))),  # sees the one above
            "wrong-start-s1": backend.append(Write("s1", 5, make_events(5, 1))),
            "ok-s2": backend.append(Write("s2", 1, make_events(1, 3))),
            "exists-s3": backend.append(Write("s3", 0, make_events(0, 4), make_header("s3", 9))),
            "missing": backend.append(Write("ghost", 0, make_events(0, 1))),
            "ok-new": backend.append(Write("new", 0, make_events(0, 2), make_header("new"))),
            "ok-new-more": backend.append(Write("new", 2, make_events(2, 1))),
        }
        tasks = {name: asyncio.create_task(call) for name, call in calls.items()}
        await wait_until(lambda: backend.pending == len(calls))
    finally:
        blocker.release()
    await asyncio.wait(tasks.values())
    failed = {name for name, task in tasks.items() if task.exception() is not None}
    assert failed == {"wrong-start-s1", "exists-s3", "missing"}
    assert all(isinstance(tasks[name].exception(), StorageConflictError) for name in failed)
    assert backend.commits - before_commits <= 2
    assert backend.appends - before_appends == 5

    assert_stored(await backend.load("s0"), make_header("s0"), make_events(0, 4))
    assert_stored(await backend.load("s1"), make_header("s1"), make_events(0, 1))
    assert_stored(await backend.load("s2"), make_header("s2"), make_events(0, 4))
    assert_stored(await backend.load("s3"), make_header("s3"), make_events(0, 1))
    assert_stored(await backend.load("new"), make_header("new"), make_events(0, 3))
    assert await backend.load("ghost") is None


async def test_a_failed_commit_fails_every_request_of_its_group(backend: SQLiteBackend) -> None:
    await backend.append(Write("s0", 0, make_events(0, 1), make_header("s0")))
    conn = backend._conn
    assert conn is not None

    def deny_commit(action: int, arg1: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_TRANSACTION and arg1 == "COMMIT":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    await backend._call(lambda: conn.set_authorizer(deny_commit))
    blocker = BlockedWorker(backend)
    try:
        tasks = [
            asyncio.create_task(backend.append(Write("s0", 1, make_events(1, 1)))),
            asyncio.create_task(
                backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
            ),
        ]
        await wait_until(lambda: backend.pending == 2)
    finally:
        blocker.release()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(type(r) is StorageError for r in results), results
    assert all(str(backend.path) in str(r) for r in results)

    await backend._call(lambda: conn.set_authorizer(None))
    assert_stored(await backend.load("s0"), make_header("s0"), make_events(0, 1))
    assert await backend.load("s1") is None
    # The backend keeps working after a failed group.
    await backend.append(Write("s0", 1, make_events(1, 1)))
    assert_stored(await backend.load("s0"), make_header("s0"), make_events(0, 2))


async def test_close_waits_for_queued_appends(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path)
    await backend.open()
    blocker = BlockedWorker(backend)
    try:
        tasks = start_creates(backend, 10, length=1)
        await wait_until(lambda: backend.pending == 10)
        closing = asyncio.create_task(backend.close())
        await wait_until(lambda: not backend._writer.accepting)
        with pytest.raises(StorageError, match="not open"):
            await backend.append(Write("late", 0, [], make_header("late")))
    finally:
        blocker.release()
    await closing
    await asyncio.gather(*tasks)
    # Nothing the backend started outlives close(): no writer task, no worker thread.
    assert asyncio.all_tasks() == {asyncio.current_task()}
    assert not [t for t in threading.enumerate() if t.name.startswith("dsh-sqlite")]

    async with opened(tmp_path) as again:
        assert len(await again.list_sessions()) == 10


# -- the data-folder lock ------------------------------------------------------------------


async def test_a_second_backend_on_the_same_folder_is_refused(
    tmp_path: Path, backend: SQLiteBackend
) -> None:
    await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    second = SQLiteBackend(tmp_path)
    with pytest.raises(DataDirLockedError) as caught:
        await second.open()
    message = str(caught.value)
    assert str(tmp_path) in message
    assert f"pid {os.getpid()}" in message
    assert "already in use by another dsh process" in message
    # The refused open left the first backend working.
    await backend.append(Write("s1", 1, make_events(1, 1)))
    await backend.close()
    await second.open()
    try:
        assert_stored(await second.load("s1"), make_header("s1"), make_events(0, 2))
    finally:
        await second.close()


def test_data_dir_lock_creates_the_folder_and_release_is_idempotent(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    lock = DataDirLock(folder)
    lock.acquire()
    try:
        assert (folder / "dsh.lock").read_text().strip() == str(os.getpid())
        other = DataDirLock(folder)
        with pytest.raises(
            DataDirLockedError, match=re.escape(f"data folder {folder} is already in use")
        ):
            other.acquire()
        assert not other.held
    finally:
        lock.release()
    lock.release()
    assert not lock.held
    other.acquire()
    other.release()


CHILD = """
import asyncio, sys
from pathlib import Path
from dsh_hookspecs import Event, SessionHeader
from dsh_host.persistence import SQLiteBackend, Write

async def main(mode: str, folder: str) -> None:
    backend = SQLiteBackend(Path(folder))
    await backend.open()
    print("child: open", flush=True)
    if mode == "hold":
        sys.stdin.readline()
    else:
        await backend.append(Write("s", 0, [], SessionHeader(version=1, id="s", created_at=1)))
        seq = 0
        while True:
            event = Event(seq=seq, type="tick", time=seq, data={"n": seq, "pad": "x" * 300})
            await backend.append(Write("s", seq, [event]))
            print(f"child: committed {seq}", flush=True)
            seq += 1
    await backend.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


class Child:
    """A python subprocess running :data:`CHILD`; always SIGKILLed and reaped on exit."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, mode: str, folder: Path) -> Child:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CHILD,
            mode,
            str(folder),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(proc)

    async def line(self, prefix: str) -> str:
        """The next stdout line starting with ``prefix`` (log lines are skipped), bounded."""
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None

        async def read() -> str:
            assert self.proc.stdout is not None
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    err = await self.proc.stderr.read() if self.proc.stderr else b""
                    raise AssertionError(f"child ended early: {err.decode(errors='replace')}")
                text = raw.decode().strip()
                if text.startswith(prefix):
                    return text

        return await asyncio.wait_for(read(), BOUND)

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()  # SIGKILL: no cleanup of any kind runs in the child
        await asyncio.wait_for(self.proc.wait(), BOUND)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
            await self.proc.stdin.wait_closed()


@pytest.fixture
async def children() -> AsyncIterator[list[Child]]:
    started: list[Child] = []
    try:
        yield started
    finally:
        for child in started:
            await child.kill()


async def open_child(children: list[Child], mode: str, folder: Path) -> Child:
    """A child in ``mode`` on ``folder`` (killed at teardown), once it has the store open."""
    child = await Child.start(mode, folder)
    children.append(child)
    await child.line("child: open")
    return child


async def test_a_folder_held_by_a_live_process_is_refused_until_it_dies(
    tmp_path: Path, children: list[Child]
) -> None:
    child = await open_child(children, "hold", tmp_path)

    with pytest.raises(DataDirLockedError) as caught:
        await SQLiteBackend(tmp_path).open()
    assert f"data folder {tmp_path} is already in use" in str(caught.value)
    assert f"(pid {child.proc.pid})" in str(caught.value)

    await child.kill()
    assert child.proc.returncode == -9
    # The lock file of the dead process is still there, and does not block.
    assert (tmp_path / "dsh.lock").read_text().strip() == str(child.proc.pid)
    async with opened(tmp_path) as backend:
        assert await backend.list_sessions() == []


async def test_a_committed_append_survives_sigkill_of_the_writer(
    tmp_path: Path, children: list[Child]
) -> None:
    child = await open_child(children, "append", tmp_path)
    last = -1
    while last < 30:
        last = int((await child.line("child: committed")).split()[-1])
    await child.kill()  # the writer is killed while it keeps appending
    assert child.proc.returncode == -9

    async with opened(tmp_path) as backend:
        stored = await backend.load("s")
    assert stored is not None
    # Every acknowledged append is there, and what is there is a contiguous, exact prefix.
    assert len(stored.events) >= last + 1
    assert [e.data for e in stored.events] == [
        {"n": seq, "pad": "x" * 300} for seq in range(len(stored.events))
    ]


# -- torn WAL ------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage-tail", "torn-last-commit"])
async def test_a_damaged_wal_tail_loses_at_most_the_last_commit(
    tmp_path: Path, damage: str
) -> None:
    live, copy = tmp_path / "live", tmp_path / "copy"
    async with opened(live) as backend:
        for sid in ("a", "b", "c"):
            await backend.append(Write(sid, 0, make_events(0, 2, sid), make_header(sid)))
        for round_ in range(3):
            for sid in ("a", "b", "c"):
                start = 2 + 2 * round_
                await backend.append(Write(sid, start, make_events(start, 2, sid)))
        before_last = wal_bytes(live / DB)
        # The last commit is large: it spans several WAL frames.
        big = [make_event(8 + i, {"blob": "y" * 2000, "i": i}) for i in range(10)]
        await backend.append(Write("c", 8, big))
        after_last = wal_bytes(live / DB)
        assert after_last > before_last > 32  # nothing was checkpointed: all in the WAL
        # Snapshot of the files as a crash at this instant would leave them.
        copy.mkdir()
        shutil.copyfile(live / DB, copy / DB)
        shutil.copyfile(live / f"{DB}-wal", copy / f"{DB}-wal")

    wal = copy / f"{DB}-wal"
    if damage == "garbage-tail":
        with wal.open("ab") as f:
            f.write(os.urandom(5000))
    else:
        os.truncate(wal, (before_last + after_last) // 2)

    async with opened(copy) as reopened:
        for sid in ("a", "b"):
            assert_stored(await reopened.load(sid), make_header(sid), make_events(0, 8, sid))
        c_events = make_events(0, 8, "c")
        if damage == "garbage-tail":
            c_events += big
        assert_stored(await reopened.load("c"), make_header("c"), c_events)
        # The recovered store is writable at the recovered cursor.
        await reopened.append(Write("c", len(c_events), [make_event(len(c_events), "after")]))


# -- corruption: reported, never repaired --------------------------------------------------


async def _write_some_data(folder: Path, sessions: int = 40) -> None:
    async with opened(folder) as backend:
        await asyncio.gather(
            *(
                backend.append(
                    Write(f"s{i}", 0, make_events(0, 5, "z" * 200), make_header(f"s{i}", i))
                )
                for i in range(sessions)
            )
        )


async def _assert_refused_unchanged(folder: Path, match: str) -> StorageCorruptError:
    db = folder / DB
    before = db.read_bytes()
    backend = SQLiteBackend(folder)
    with pytest.raises(StorageCorruptError, match=re.escape(match)) as caught:
        await backend.open()
    assert str(db) in str(caught.value)
    assert db.read_bytes() == before
    await _assert_released(folder, backend)  # the refused open released the folder
    return caught.value


async def test_a_file_of_random_bytes_is_reported_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / DB).write_bytes(os.urandom(16384))
    error = await _assert_refused_unchanged(tmp_path, "is corrupt or truncated")
    assert "not a SQLite database" in str(error)


@pytest.mark.parametrize("cut", ["half", "whole-pages"])
async def test_a_truncated_database_is_reported_and_left_alone(tmp_path: Path, cut: str) -> None:
    await _write_some_data(tmp_path)
    db = tmp_path / DB
    assert not (tmp_path / f"{DB}-wal").exists()  # a clean close checkpointed everything
    size = db.stat().st_size // 2
    if cut == "whole-pages":
        size -= size % 4096
    os.truncate(db, size)
    await _assert_refused_unchanged(tmp_path, f"database file {db} is corrupt or truncated")


async def test_a_damaged_page_fails_quick_check_and_is_left_alone(tmp_path: Path) -> None:
    await _write_some_data(tmp_path)
    db = tmp_path / DB
    size = db.stat().st_size
    with db.open("r+b") as f:
        f.seek(size - 4096)
        f.write(b"\xff" * 4096)
    await _assert_refused_unchanged(tmp_path, "corrupt or truncated")


async def test_corruption_met_after_open_is_a_storage_corrupt_error(tmp_path: Path) -> None:
    async with opened(tmp_path) as backend:
        events = [make_event(i, {"blob": "q" * 500}) for i in range(200)]
        await backend.append(Write("s", 0, events, make_header("s")))
    db = tmp_path / DB
    outside = sqlite3.connect(db)
    try:
        last_root = outside.execute("SELECT max(rootpage) FROM sqlite_schema").fetchone()[0]
        page_size = outside.execute("PRAGMA page_size").fetchone()[0]
    finally:
        outside.close()

    async with opened(tmp_path) as backend:
        # Damage every events leaf page on disk under the open backend.
        with db.open("r+b") as f:
            f.seek(last_root * page_size)
            f.write(b"\xff" * (db.stat().st_size - last_root * page_size))
        with pytest.raises(StorageCorruptError, match=re.escape(f"database file {db} is corrupt")):
            await backend.load("s")


@pytest.mark.parametrize(
    ("sql", "match", "lost"),
    [
        pytest.param(
            "UPDATE events SET data = 'NaN' WHERE session_id = 's3' AND seq = 2",
            "event seq 2 of session 's3'",
            False,
            id="event-data",
        ),
        pytest.param(
            "UPDATE events SET type = '' WHERE session_id = 's3' AND seq = 4",
            "event seq 4 of session 's3'",
            False,
            id="event-type",
        ),
        pytest.param(
            "DELETE FROM events WHERE session_id = 's3' AND seq = 1",
            "session 's3' has event seq 2 where 1 belongs",
            True,  # an acknowledged event is gone: refused at open unless accepted
            id="seq-gap",
        ),
        pytest.param(
            "UPDATE sessions SET length = 9 WHERE id = 's3'",
            "session 's3' records length 9",
            False,
            id="length",
        ),
        pytest.param(
            """UPDATE sessions SET header = '{"version":1,"id":"s3"}' WHERE id = 's3'""",
            "header of session 's3'",
            False,
            id="header",
        ),
    ],
)
async def test_a_stored_record_failing_the_strict_codecs_is_reported_on_load(
    tmp_path: Path, sql: str, match: str, lost: bool
) -> None:
    await _write_some_data(tmp_path, sessions=5)
    run_sql(tmp_path / DB, sql)
    if lost:
        with pytest.raises(StorageBehindError, match="acknowledged commits are missing"):
            await SQLiteBackend(tmp_path).open()
    async with opened(tmp_path, accept_data_loss=lost) as backend:
        with pytest.raises(StorageCorruptError, match=re.escape(match)):
            await backend.load("s3")
        assert await backend.load("s2") is not None


#: What turns a current store into a version 4 one (the outbox version 5 added).
V5_DROPS = ("DROP TABLE outbox",)
#: What turns a current store into a version 3 one (and the index version 4 added).
V4_DROPS = (*V5_DROPS, "DROP INDEX sessions_by_creation")
#: What turns a current store into a version 2 one (and the tables version 3 added).
V3_DROPS = (*V4_DROPS, "DROP TABLE board", "DROP TABLE names", "DROP TABLE deleted")


async def test_an_unknown_schema_version_is_reported(tmp_path: Path) -> None:
    await _write_some_data(tmp_path, sessions=1)
    run_sql(tmp_path / DB, "PRAGMA user_version = 7")
    await _assert_refused_unchanged(tmp_path, "unknown schema version 7")


async def test_a_version_1_store_keeps_opening_and_gains_the_wake_index(tmp_path: Path) -> None:
    # A data folder written before the wake index (issue 11 item 1): its two tables only, at
    # user_version 1. It opens with every event intact and is migrated in place to the current
    # version.
    await _write_some_data(tmp_path, sessions=3)
    run_sql(tmp_path / DB, *V3_DROPS, "DROP TABLE wakes", "PRAGMA user_version = 1")
    with capture_logs() as logs:
        async with opened(tmp_path) as backend:
            assert backend.needs_board_rebuild is True  # it holds Sessions: their board is empty
            for i in range(3):
                assert_stored(
                    await backend.load(f"s{i}"),
                    make_header(f"s{i}", i),
                    make_events(0, 5, "z" * 200),
                )
            assert await backend.earliest_wake() is None
            await backend.append(Write("s1", 5, [], wakes={"p": 42}))
            assert await backend.due_wakes(42, 10) == [("s1", "p", 42)]
    assert [e["event"] for e in logs if e["event"] == "storage.migrated"] == ["storage.migrated"]
    outside = sqlite3.connect(tmp_path / DB)
    try:
        assert outside.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert outside.execute("SELECT session_id, plugin, at_ms FROM wakes").fetchall() == [
            ("s1", "p", 42)
        ]
    finally:
        outside.close()
    # Opened again, it is a current store: no second migration, the entry is still there.
    with capture_logs() as logs:
        async with opened(tmp_path) as backend:
            stored = await backend.load("s1")
            assert stored is not None
            assert stored.wakes == {"p": 42}
    assert not [e for e in logs if e["event"] == "storage.migrated"]


async def test_a_version_1_store_with_a_foreign_table_is_not_migrated(tmp_path: Path) -> None:
    await _write_some_data(tmp_path, sessions=1)
    run_sql(
        tmp_path / DB,
        *V3_DROPS,
        "DROP TABLE wakes",
        "CREATE TABLE notes (body TEXT)",
        "PRAGMA user_version = 1",
    )
    await _assert_refused_unchanged(tmp_path, "is not a dsh store")


async def test_a_database_that_is_not_ours_is_reported(tmp_path: Path) -> None:
    run_sql(tmp_path / DB, "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')")
    await _assert_refused_unchanged(tmp_path, "is not a dsh store")


async def test_an_empty_file_is_a_fresh_store(tmp_path: Path) -> None:
    (tmp_path / DB).write_bytes(b"")
    async with opened(tmp_path) as backend:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        assert_stored(await backend.load("s1"), make_header("s1"), make_events(0, 1))


# -- a store that cannot be written is refused at open ----------------------------------------


def _set_write_version(db: Path, version: int) -> None:
    """Byte 18 of the SQLite header: a write version SQLite does not know makes it refuse writes."""
    with db.open("r+b") as f:
        f.seek(18)
        f.write(bytes([version]))


async def test_an_unknown_write_version_is_refused_at_open_and_left_alone(tmp_path: Path) -> None:
    # Fails before this fix: open() accepted the store and every later append failed.
    await _write_some_data(tmp_path, sessions=2)
    db = tmp_path / DB
    _set_write_version(db, 3)
    before = db.read_bytes()
    backend = SQLiteBackend(tmp_path)
    with pytest.raises(StorageError, match=re.escape(f"database file {db} is not writable")):
        await backend.open()
    assert db.read_bytes() == before
    # The refused open released the folder and left nothing open.
    await _assert_released(tmp_path, backend)
    # Made writable again, the same store opens with everything it held.
    _set_write_version(db, 2)
    async with opened(tmp_path) as again:
        assert len(await again.list_sessions()) == 2


# -- an undecodable Session row is listed as damaged, beside the others ------------------------


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        pytest.param(
            "UPDATE sessions SET header = '{not json' WHERE id = 's3'",
            "the stored header is invalid",
            id="not-json",
        ),
        pytest.param(
            """UPDATE sessions SET header = '{"version":1,"id":"s3"}' WHERE id = 's3'""",
            "the stored header is invalid",
            id="missing-field",
        ),
        pytest.param(
            """UPDATE sessions SET header = '{"version":1,"id":"s9","createdAt":3}'"""
            " WHERE id = 's3'",
            "the stored header is invalid: it has id 's9'",
            id="other-id",
        ),
        pytest.param(
            "UPDATE sessions SET length = -1 WHERE id = 's3'",
            "the stored length -1 is invalid",
            id="length",
        ),
    ],
)
async def test_an_undecodable_session_row_is_listed_as_damaged_beside_the_others(
    tmp_path: Path, sql: str, error: str
) -> None:
    # Fails before this fix: one such row made every listing raise StorageCorruptError.
    await _write_some_data(tmp_path, sessions=5)
    run_sql(tmp_path / DB, sql)
    db = tmp_path / DB
    readers: list[Callable[[], Awaitable[Sequence[StoredSummary]]]] = [
        lambda: asyncio.to_thread(list_sessions_read_only, tmp_path)
    ]
    async with opened(tmp_path) as backend:
        readers.append(backend.list_sessions)
        for read in readers:
            listed = await read()
            assert [(s.header.id, s.length) for s in listed] == [
                ("s0", 5),
                ("s1", 5),
                ("s2", 5),
                ("s4", 5),
            ]
            (damaged,) = damaged_sessions(listed)
            assert damaged.id == "s3"
            assert damaged.created_at == 3  # the created_at column is still readable
            assert damaged.error.startswith(error), damaged.error
            assert "\n" not in damaged.error
        # Opening it is still refused with the corruption named; the others still load.
        with pytest.raises(StorageCorruptError, match=re.escape(f"database file {db}")):
            await backend.load("s3")
        assert await backend.load("s4") is not None


# -- silent loss: the store behind the last acknowledged position is refused --------------------

POSITION = f"{DB}.position"  # the sidecar: the last acknowledged position, beside the store


async def _acknowledged_store(folder: Path) -> SQLiteBackend:
    """An open backend in ``folder`` with acknowledged commits, all still in the WAL."""
    backend = SQLiteBackend(folder)
    await backend.open()
    for sid in ("a", "b", "c"):
        await backend.append(Write(sid, 0, make_events(0, 3, sid), make_header(sid)))
    await backend.append(Write("a", 3, make_events(3, 2, "a")))
    return backend


def _crash_image(live: Path, to: Path, names: Sequence[str]) -> None:
    """The files a SIGKILL now would leave (the writer is idle), minus what a test loses."""
    to.mkdir()
    for name in names:
        shutil.copyfile(live / name, to / name)


async def _assert_refused_for_loss(folder: Path, match: str) -> None:
    db = folder / DB
    before = db.read_bytes() if db.exists() else None
    backend = SQLiteBackend(folder)
    with pytest.raises(StorageError, match=re.escape(match)) as caught:
        await backend.open()
    message = str(caught.value)
    assert "\n" not in message
    assert "--accept-data-loss" in message  # names the override
    assert (db.read_bytes() if db.exists() else None) == before  # nothing written
    await _assert_released(folder, backend)  # the refused open released the folder


async def test_a_lost_wal_is_refused_at_open_and_the_override_starts_anyway(
    tmp_path: Path,
) -> None:
    # Fails before this fix: the store opened without a word, the acknowledged commits gone.
    live, crashed = tmp_path / "live", tmp_path / "crashed"
    backend = await _acknowledged_store(live)
    try:
        assert wal_bytes(live / DB) > 32
        _crash_image(live, crashed, [DB, POSITION])  # the -wal file is lost
    finally:
        await backend.close()
    await _assert_refused_for_loss(crashed, "acknowledged")
    # The documented override starts with what the store holds and resets the record ...
    accepted = SQLiteBackend(crashed, accept_data_loss=True)
    with capture_logs() as logs:
        await accepted.open()
    (warning,) = [entry for entry in logs if entry["event"] == "storage.data_loss_accepted"]
    assert warning["log_level"] == "warning"
    assert warning["acknowledged_events"] == 11
    try:
        held = await accepted.list_sessions()
        assert sum(s.length for s in held) < 11
    finally:
        await accepted.close()
    # ... so the next plain start raises no alarm.
    again = SQLiteBackend(crashed)
    await again.open()
    await again.close()


@pytest.mark.parametrize("damage", ["empty", "missing"])
async def test_an_emptied_database_with_acknowledged_commits_is_refused(
    tmp_path: Path, damage: str
) -> None:
    # Fails before this fix: a 0-byte (or deleted) database started as an empty store.
    await _write_some_data(tmp_path, sessions=3)
    db = tmp_path / DB
    assert not (tmp_path / f"{DB}-wal").exists()  # a clean close checkpointed everything
    if damage == "empty":
        os.truncate(db, 0)
    else:
        db.unlink()
    await _assert_refused_for_loss(tmp_path, "acknowledged")


async def test_no_alarm_without_loss_fresh_clean_crashed_or_with_a_lagging_record(
    tmp_path: Path,
) -> None:
    # A fresh folder, a clean restart, a crash that kept its WAL, and a record behind the
    # store (the process died between COMMIT and the record's write) all open.
    fresh = tmp_path / "fresh"
    for _ in range(2):
        backend = SQLiteBackend(fresh)
        await backend.open()
        await backend.close()
    live = tmp_path / "live"
    backend = await _acknowledged_store(live)
    try:
        _crash_image(live, tmp_path / "crashed", [DB, f"{DB}-wal", POSITION])
        lagging = (live / POSITION).read_bytes()
        await backend.append(Write("b", 3, make_events(3, 1, "b")))
        _crash_image(live, tmp_path / "lagging", [DB, f"{DB}-wal"])
        (tmp_path / "lagging" / POSITION).write_bytes(lagging)
    finally:
        await backend.close()
    for folder, lengths in (
        (live, [5, 4, 3]),
        (live, [5, 4, 3]),
        (tmp_path / "crashed", [5, 3, 3]),
        (tmp_path / "lagging", [5, 4, 3]),
    ):
        async with opened(folder) as reopened:
            assert [s.length for s in await reopened.list_sessions()] == lengths


# -- the seal of a clean close: the next open skips the checks that read every page -------------

SEAL = f"{DB}.clean"  # beside the store after a clean close; taken by the next open


def _sealed_opens(logs: list[dict[str, object]]) -> int:
    return sum(1 for entry in logs if entry["event"] == "storage.sealed_open")


async def _open_and_close(folder: Path, **kwargs: bool) -> list[dict[str, object]]:
    """Open ``folder`` and close it again; the log lines of the open."""
    with capture_logs() as logs:
        async with opened(folder, **kwargs):
            pass
    return logs


@pytest.mark.parametrize("change", ["damaged-page", "outside-delete", "older-copy", "truncated"])
async def test_a_store_changed_after_its_clean_close_is_checked_in_full_and_refused(
    tmp_path: Path, change: str
) -> None:
    live, old = tmp_path / "live", tmp_path / "old"
    await _write_some_data(live)
    shutil.copytree(live, old)  # an older copy, seal and all
    async with opened(live) as backend:
        await backend.append(Write("s1", 5, make_events(5, 1)))
    db = live / DB
    assert (live / SEAL).is_file()  # the close was clean: the store is sealed
    if change == "damaged-page":
        with db.open("r+b") as f:  # same size, same header: only the file's times change
            f.seek(db.stat().st_size - 4096)
            f.write(b"\xff" * 4096)
        match, error = "corrupt or truncated", StorageCorruptError
    elif change == "outside-delete":
        run_sql(db, "DELETE FROM events WHERE session_id = 's3' AND seq = 1")
        match, error = "acknowledged commits are missing", StorageBehindError
    elif change == "older-copy":
        shutil.copyfile(old / DB, db)
        shutil.copyfile(old / SEAL, live / SEAL)  # its seal vouches for another file
        match, error = "acknowledged commits are missing", StorageBehindError
    else:
        os.truncate(db, db.stat().st_size - 4096)
        match, error = "corrupt or truncated", StorageCorruptError
    with capture_logs() as logs, pytest.raises(error, match=re.escape(match)):
        await SQLiteBackend(live).open()
    assert _sealed_opens(logs) == 0
    assert [e for e in logs if e["event"] == "storage.seal_broken"]
    assert not (live / SEAL).exists()  # taken: it vouches for one open only
    await _assert_released(live, SQLiteBackend(live))


async def test_a_sealed_store_that_lost_acknowledged_commits_is_still_refused(
    tmp_path: Path, children: list[Child]
) -> None:
    # The file is exactly as the clean close left it and its seal is back (a removal that did
    # not reach the disk), yet a later process acknowledged commits that only its WAL held:
    # the position record still catches the loss.
    await _write_some_data(tmp_path, sessions=2)
    seal = (tmp_path / SEAL).read_bytes()
    child = await open_child(children, "append", tmp_path)
    assert not (tmp_path / SEAL).exists()  # the child's open took it
    while int((await child.line("child: committed")).split()[-1]) < 5:
        pass
    await child.kill()
    (tmp_path / f"{DB}-wal").unlink()  # the WAL is lost
    (tmp_path / SEAL).write_bytes(seal)
    with capture_logs() as logs, pytest.raises(StorageBehindError, match="acknowledged"):
        await SQLiteBackend(tmp_path).open()
    assert _sealed_opens(logs) == 1  # the seal held: the loss was seen without counting
    logs = await _open_and_close(tmp_path, accept_data_loss=True)
    assert [e for e in logs if e["event"] == "storage.data_loss_accepted"]
    async with opened(tmp_path) as backend:
        assert [s.header.id for s in await backend.list_sessions()] == ["s0", "s1"]


async def test_a_crash_leaves_no_seal_and_the_next_open_checks_everything(
    tmp_path: Path, children: list[Child]
) -> None:
    await _write_some_data(tmp_path, sessions=3)
    child = await open_child(children, "hold", tmp_path)
    await child.kill()
    assert not (tmp_path / SEAL).exists()
    assert _sealed_opens(await _open_and_close(tmp_path)) == 0
    # That open closed cleanly: the one after it is sealed again.
    assert (tmp_path / SEAL).is_file()
    assert _sealed_opens(await _open_and_close(tmp_path)) == 1


async def test_a_close_that_leaves_a_wal_behind_writes_no_seal(tmp_path: Path) -> None:
    await _write_some_data(tmp_path, sessions=2)
    reader = sqlite3.connect(tmp_path / DB, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sessions").fetchone()  # holds a read snapshot
        async with opened(tmp_path) as backend:
            await backend.append(Write("s0", 5, make_events(5, 1)))
        assert wal_bytes(tmp_path / DB) > 0  # the reader kept the WAL
        assert not (tmp_path / SEAL).exists()
        reader.execute("COMMIT")
    finally:
        reader.close()
    assert _sealed_opens(await _open_and_close(tmp_path)) == 0


async def test_a_clean_close_seals_the_store_and_the_next_open_counts_nothing(
    tmp_path: Path,
) -> None:
    await _write_some_data(tmp_path, sessions=4)
    text = (tmp_path / SEAL).read_text()
    assert text.startswith("dsh-clean v1 sessions=4 events=20 file=")
    with capture_logs() as logs:
        async with opened(tmp_path) as backend:
            assert not (tmp_path / SEAL).exists()  # taken at open
            assert backend.position == (4, 20)  # the sealed position, not a count
            await backend.append(Write("s0", 5, make_events(5, 2)))
            assert backend.position == (4, 22)
            assert len(await backend.list_sessions()) == 4
    assert _sealed_opens(logs) == 1
    assert (tmp_path / SEAL).read_text().startswith("dsh-clean v1 sessions=4 events=22 file=")
    # A seal that is not one is ignored (and taken): the open checks everything.
    (tmp_path / SEAL).write_text("dsh-clean v1 garbage\n")
    logs = await _open_and_close(tmp_path)
    assert _sealed_opens(logs) == 0
    assert [e for e in logs if e["event"] == "storage.seal_unreadable"]


async def test_a_version_3_store_gains_the_list_index_without_a_board_rebuild(
    tmp_path: Path,
) -> None:
    await _write_some_data(tmp_path, sessions=3)
    run_sql(tmp_path / DB, *V4_DROPS, "PRAGMA user_version = 3")
    with capture_logs() as logs:
        async with opened(tmp_path) as backend:
            assert backend.needs_board_rebuild is False  # its board and names are whole
            page = await backend.list_page(limit=2)
            assert [row.header.id for row in page if isinstance(row, StoredSummary)] == [
                "s2",
                "s1",
            ]
    (migrated,) = [e for e in logs if e["event"] == "storage.migrated"]
    assert migrated["from_version"] == 3
    outside = sqlite3.connect(tmp_path / DB)
    try:
        assert outside.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        plan = outside.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM sessions WHERE (created_at, id) < (5, 'x') "
            "ORDER BY created_at DESC, id DESC LIMIT 3"
        ).fetchall()
        assert any("sessions_by_creation" in str(row[-1]) for row in plan), plan
        assert not any("TEMP B-TREE" in str(row[-1]) for row in plan), plan
    finally:
        outside.close()


async def test_a_list_page_is_read_beside_a_holder_and_from_older_stores(
    tmp_path: Path,
) -> None:
    await _write_some_data(tmp_path, sessions=5)
    async with opened(tmp_path) as holder:
        await holder.append(Write("s4", 5, [], name="Fourth"))
        rows, count = await asyncio.to_thread(
            functools.partial(read_only_page, tmp_path, None, 2, count=True)
        )
        assert count == 5
        assert [(r.header.id, r.name) for r in rows if isinstance(r, StoredSummary)] == [
            ("s4", "Fourth"),
            ("s3", None),
        ]
        rows, count = await asyncio.to_thread(read_only_page, tmp_path, (3, "s3"), 9)
        assert count is None  # not asked for
        assert [r.header.id for r in rows if isinstance(r, StoredSummary)] == ["s2", "s1", "s0"]
    run_sql(tmp_path / DB, *V3_DROPS, "PRAGMA user_version = 2")
    before = (tmp_path / DB).read_bytes()
    rows, count = await asyncio.to_thread(
        functools.partial(read_only_page, tmp_path, (2, "s2"), 1, count=True)
    )
    assert (count, [r.header.id for r in rows if isinstance(r, StoredSummary)]) == (5, ["s1"])
    assert (tmp_path / DB).read_bytes() == before  # read, never migrated
    absent = functools.partial(read_only_page, tmp_path / "none", None, 5, count=True)
    assert await asyncio.to_thread(absent) == ([], 0)
