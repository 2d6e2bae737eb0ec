"""The board, names and delete in storage, the same promises on every backend.

:class:`BoardStorage` holds the cases every backend passes (board rows and names written with
their events or not at all, pages and counts across Sessions, delete); ``Test<Backend>``
subclasses say how to build each backend, as in test_backend_contract.py. The cases that only
one backend has follow: SQLite's migration of an older store, its read-only readers and its
position record across deletes; PostgreSQL's migration and the lease a delete respects.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import psycopg
import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import BoardEntry, Event
from dsh_host import _json, _records
from dsh_host.conformance import assert_stored, make_events, make_header
from dsh_host.persistence import (
    Backend,
    BoardRow,
    MemoryBackend,
    PostgresBackend,
    SessionLiveElsewhereError,
    SQLiteBackend,
    StorageBehindError,
    StorageConflictError,
    StorageCorruptError,
    StoredSummary,
    Write,
    list_sessions_read_only,
    load_read_only,
    opened,
)
from dsh_host.persistence.postgres import SCHEMA_VERSION as PG_SCHEMA_VERSION
from dsh_host.persistence.sqlite import SCHEMA_VERSION
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster

DB = "dsh.sqlite3"
PLUGIN = "schedule"
AT = 1_785_931_260_000  # 2026-08-05T12:01:00.000Z


def entry(kind: str, at_ms: object, data: object = None) -> BoardEntry:
    return BoardEntry(kind=kind, at_ms=at_ms, data=data)  # type: ignore[arg-type]


def pending(at_ms: int, text: str = "stretch") -> BoardEntry:
    return entry("pending", at_ms, {"text": text})


def delivered(at_ms: int, text: str = "stretch") -> BoardEntry:
    return entry("delivered", at_ms, {"text": text})


def page_keys(rows: Sequence[BoardRow]) -> list[tuple[int, str, str]]:
    return [(row.entry.at_ms, row.session_id, row.key) for row in rows]


def names_of(listed: Sequence[StoredSummary]) -> dict[str, str | None]:
    return {summary.header.id: summary.name for summary in listed}


class BoardStorage:
    """What every backend promises of board rows, names and delete."""

    def make(self, tmp_path: Path) -> Backend:
        raise NotImplementedError

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        raise NotImplementedError

    @pytest.fixture
    async def backend(self, tmp_path: Path) -> AsyncIterator[Backend]:
        backend = self.make(tmp_path)
        await backend.open()
        try:
            yield backend
        finally:
            await backend.close()

    async def _reopened(self, backend: Backend, tmp_path: Path) -> Backend:
        await backend.close()
        again = self.reopen(backend, tmp_path)
        await again.open()
        return again

    # -- failure paths first -----------------------------------------------------------------

    async def test_a_conflicting_append_writes_neither_its_board_rows_nor_its_name(
        self, backend: Backend
    ) -> None:
        await backend.append(
            Write(
                "s1", 0, make_events(0, 2), make_header("s1"), board={(PLUGIN, "r1"): pending(AT)}
            )
        )
        with pytest.raises(StorageConflictError):
            await backend.append(
                Write(
                    "s1",
                    1,  # the stored length is 2
                    make_events(1, 1, "late"),
                    board={(PLUGIN, "r1"): None, (PLUGIN, "r2"): pending(AT + 1)},
                    name="late name",
                ),
            )
        with pytest.raises(StorageConflictError):  # a create of an existing id
            await backend.append(
                Write("s1", 0, [], make_header("s1"), board={(PLUGIN, "r3"): pending(AT)}, name="x")
            )
        with pytest.raises(StorageConflictError):  # an append to an absent Session
            await backend.append(
                Write("nope", 0, [], board={(PLUGIN, "r4"): pending(AT)}, name="y")
            )
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.board == {(PLUGIN, "r1"): pending(AT)}
        assert len(stored.events) == 2
        assert names_of(await backend.list_sessions()) == {"s1": None}
        rows = await backend.board_page(PLUGIN, "pending", limit=10)
        assert page_keys(rows) == [(AT, "s1", "r1")]

    async def test_a_malformed_board_query_is_refused(self, backend: Backend) -> None:
        with pytest.raises(ValueError, match="cursor"):
            await backend.board_page(PLUGIN, "pending", after=(AT, "s1"), limit=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="cursor"):
            await backend.board_page(PLUGIN, "pending", after=("1", "s1", "k"), limit=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="limit"):
            await backend.board_page(PLUGIN, "pending", limit=-1)
        with pytest.raises(ValueError, match="after_ms"):
            await backend.board_count(PLUGIN, "pending", after_ms="0")  # type: ignore[arg-type]

    # -- stored with the events --------------------------------------------------------------

    async def test_board_rows_and_the_name_are_stored_with_the_events_and_survive_reopen(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        data = {
            "text": "héllo — 日本語 🎉 \u0000 nul",
            "everySeconds": 60,
            "nested": [1, {"a": None}],
        }
        header = make_header("s1")
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 2),
                header,
                board={(PLUGIN, "r1"): entry("pending", AT, data), ("other", "r1"): delivered(5)},
                name="Stretch reminder",
            ),
        )
        again = await self._reopened(backend, tmp_path)
        try:
            stored = await again.load("s1")
            assert_stored(stored, header, make_events(0, 2))
            assert stored is not None
            assert stored.board == {
                (PLUGIN, "r1"): entry("pending", AT, data),
                ("other", "r1"): delivered(5),
            }
            assert names_of(await again.list_sessions()) == {"s1": "Stretch reminder"}
        finally:
            await again.close()

    async def test_an_append_of_only_board_changes_or_a_name_is_valid_and_checks_the_start(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 2), make_header("s1")))
        await backend.append(Write("s1", 2, [], board={(PLUGIN, "r1"): pending(AT)}))
        await backend.append(Write("s1", 2, [], name="first"))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 1, [], board={(PLUGIN, "r2"): pending(AT)}, name="no"))
        stored = await backend.load("s1")
        assert stored is not None
        assert len(stored.events) == 2
        assert stored.board == {(PLUGIN, "r1"): pending(AT)}
        assert names_of(await backend.list_sessions()) == {"s1": "first"}

    async def test_none_removes_a_row_the_newest_change_wins_and_a_name_is_never_cleared(
        self, backend: Backend
    ) -> None:
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 1),
                make_header("s1"),
                board={(PLUGIN, "a"): pending(AT), (PLUGIN, "b"): pending(AT + 1)},
                name="old",
            ),
        )
        await backend.append(
            Write(
                "s1",
                1,
                make_events(1, 1),
                board={
                    (PLUGIN, "a"): delivered(AT + 5, "done"),  # replaced, even its kind
                    (PLUGIN, "b"): None,  # removed
                    (PLUGIN, "never"): None,  # removing an absent row is fine
                },
            ),
        )
        # Two appends committed together (one group): the later one's change wins.
        await asyncio.gather(
            backend.append(Write("s1", 2, make_events(2, 1), board={(PLUGIN, "c"): pending(1)})),
            backend.append(Write("s1", 3, make_events(3, 1), board={(PLUGIN, "c"): pending(2)})),
            backend.append(Write("s1", 4, make_events(4, 1), board={(PLUGIN, "d"): pending(3)})),
            backend.append(
                Write("s1", 5, make_events(5, 1), board={(PLUGIN, "d"): None}, name="new")
            ),
        )
        await backend.append(Write("s1", 6, make_events(6, 1)))  # no name: the stored one stays
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.board == {
            (PLUGIN, "a"): delivered(AT + 5, "done"),
            (PLUGIN, "c"): pending(2),
        }
        assert names_of(await backend.list_sessions()) == {"s1": "new"}
        assert await backend.board_count(PLUGIN, "pending") == 1
        assert await backend.board_count(PLUGIN, "delivered") == 1

    # -- pages and counts across Sessions ----------------------------------------------------

    async def _three_sessions(self, backend: Backend) -> None:
        # Ties on at_ms are ordered by Session id, then key, by code point ("B" < "a" < "é").
        await backend.append(
            Write(
                "s1",
                0,
                [],
                make_header("s1", 1),
                board={
                    (PLUGIN, "a"): pending(AT + 20),
                    (PLUGIN, "B"): pending(AT + 20),
                    (PLUGIN, "é"): pending(AT + 20),
                    (PLUGIN, "old"): delivered(AT - 10),
                    ("other", "a"): pending(AT),  # another plugin's row of the same kind
                },
                name="Stretch",
            ),
        )
        await backend.append(
            Write("s2", 0, [], make_header("s2", 2), board={(PLUGIN, "z"): pending(AT + 20)})
        )
        await backend.append(
            Write(
                "S0",
                0,
                [],
                make_header("S0", 3),
                board={(PLUGIN, "x"): pending(AT), (PLUGIN, "y"): pending(AT + 30)},
                name="Water",
            ),
        )

    async def test_a_page_is_ordered_by_instant_session_and_key_and_filtered(
        self, backend: Backend
    ) -> None:
        await self._three_sessions(backend)
        rows = await backend.board_page(PLUGIN, "pending", limit=50)
        assert page_keys(rows) == [
            (AT, "S0", "x"),
            (AT + 20, "s1", "B"),
            (AT + 20, "s1", "a"),
            (AT + 20, "s1", "é"),
            (AT + 20, "s2", "z"),
            (AT + 30, "S0", "y"),
        ]
        assert rows[0] == BoardRow("S0", "Water", PLUGIN, "x", pending(AT))
        assert [row.session_name for row in rows] == [
            "Water",
            "Stretch",
            "Stretch",
            "Stretch",
            None,
            "Water",
        ]
        assert all(row.plugin == PLUGIN for row in rows)
        one = await backend.board_page(PLUGIN, "pending", limit=50, session_id="s1")
        assert page_keys(one) == page_keys(rows)[1:4]
        assert await backend.board_page(PLUGIN, "pending", limit=50, session_id="nope") == []
        assert await backend.board_page(PLUGIN, "pending", limit=0) == []
        assert await backend.board_page(PLUGIN, "none", limit=50) == []
        assert await backend.board_page("nobody", "pending", limit=50) == []
        (old,) = await backend.board_page(PLUGIN, "delivered", limit=50)
        assert old == BoardRow("s1", "Stretch", PLUGIN, "old", delivered(AT - 10))

    async def test_paging_with_the_cursor_visits_every_row_once_in_order(
        self, backend: Backend
    ) -> None:
        await self._three_sessions(backend)
        everything = page_keys(await backend.board_page(PLUGIN, "pending", limit=50))
        for limit in (1, 2, 4):
            seen: list[tuple[int, str, str]] = []
            after: tuple[int, str, str] | None = None
            while True:
                rows = await backend.board_page(PLUGIN, "pending", after=after, limit=limit)
                assert len(rows) <= limit
                if not rows:
                    break
                seen.extend(page_keys(rows))
                after = page_keys(rows)[-1]
            assert seen == everything
        # The cursor is strict, and need not be a stored row; with a Session filter too.
        after = (AT + 20, "s1", "a")
        assert page_keys(await backend.board_page(PLUGIN, "pending", after=after, limit=2)) == [
            (AT + 20, "s1", "é"),
            (AT + 20, "s2", "z"),
        ]
        between = (AT + 20, "s1", "C")
        assert page_keys(
            await backend.board_page(PLUGIN, "pending", after=between, limit=1, session_id="s1")
        ) == [(AT + 20, "s1", "a")]
        assert await backend.board_page(PLUGIN, "pending", after=(AT + 31, "", ""), limit=5) == []

    async def test_a_count_takes_the_rows_after_an_instant(self, backend: Backend) -> None:
        await self._three_sessions(backend)
        assert await backend.board_count(PLUGIN, "pending") == 6
        assert await backend.board_count(PLUGIN, "pending", after_ms=AT) == 5
        assert await backend.board_count(PLUGIN, "pending", after_ms=AT + 20) == 1
        assert await backend.board_count(PLUGIN, "pending", after_ms=AT + 30) == 0
        assert await backend.board_count(PLUGIN, "pending", session_id="s1") == 3
        assert await backend.board_count(PLUGIN, "pending", after_ms=AT, session_id="S0") == 1
        assert await backend.board_count(PLUGIN, "delivered", after_ms=AT - 11) == 1
        assert await backend.board_count(PLUGIN, "delivered", after_ms=AT - 10) == 0
        assert await backend.board_count("other", "pending") == 1
        assert await backend.board_count(PLUGIN, "none") == 0

    # -- delete ------------------------------------------------------------------------------

    async def test_delete_removes_every_row_of_the_session_and_leaves_the_others_and_a_fork(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        assert await backend.delete("nope") is False
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 3),
                make_header("s1", 1),
                wakes={PLUGIN: AT},
                board={(PLUGIN, "r1"): pending(AT)},
                name="Parent",
            ),
        )
        # A fork: an independent copy of the parent's log whose header names its parent.
        fork = make_header("f1", 2, parent_session="s1", seed_length=3)
        await backend.append(
            Write(
                "f1",
                0,
                make_events(0, 4),
                fork,
                wakes={PLUGIN: AT + 1},
                board={(PLUGIN, "r1"): pending(AT + 1)},
                name="Fork",
            ),
        )
        await backend.append(Write("s2", 0, make_events(0, 1), make_header("s2", 3)))
        assert await backend.delete("s1") is True
        assert await backend.load("s1") is None
        assert names_of(await backend.list_sessions()) == {"f1": "Fork", "s2": None}
        assert page_keys(await backend.board_page(PLUGIN, "pending", limit=10)) == [
            (AT + 1, "f1", "r1")
        ]
        assert await backend.board_count(PLUGIN, "pending") == 1
        assert await backend.due_wakes(AT + 10, 10) == [("f1", PLUGIN, AT + 1)]
        assert await backend.earliest_wake() == AT + 1
        assert await backend.delete("s1") is False
        with pytest.raises(StorageConflictError):  # nothing is left to append to
            await backend.append(Write("s1", 3, make_events(3, 1)))
        # The fork keeps working.
        await backend.append(
            Write("f1", 4, make_events(4, 1), board={(PLUGIN, "r2"): pending(AT + 2)})
        )
        stored_fork = await backend.load("f1")
        assert_stored(stored_fork, fork, make_events(0, 5))
        again = await self._reopened(backend, tmp_path)
        try:
            assert await again.load("s1") is None
            assert await again.delete("s1") is False
            assert [s.header.id for s in await again.list_sessions()] == ["f1", "s2"]
            # The id is free again: a new Session of that id starts empty.
            await again.append(Write("s1", 0, make_events(0, 1), make_header("s1", 9)))
            stored = await again.load("s1")
            assert stored is not None
            assert stored.board == {}
            assert stored.wakes == {}
            assert names_of(await again.list_sessions())["s1"] is None
        finally:
            await again.close()

    async def test_a_delete_comes_after_the_appends_requested_before_it(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        appended, deleted = await asyncio.gather(
            backend.append(Write("s1", 1, make_events(1, 1), board={(PLUGIN, "r"): pending(AT)})),
            backend.delete("s1"),
        )
        assert appended is None
        assert deleted is True
        assert await backend.load("s1") is None
        assert await backend.board_count(PLUGIN, "pending") == 0
        # A create queued right after the delete makes a new Session of that id.
        _, created = await asyncio.gather(
            backend.delete("s1"),
            backend.append(Write("s1", 0, make_events(0, 2), make_header("s1"), name="again")),
        )
        assert created is None
        assert names_of(await backend.list_sessions()) == {"s1": "again"}


class TestMemoryBoard(BoardStorage):
    def make(self, tmp_path: Path) -> Backend:
        return MemoryBackend()

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return closed  # the data lives in the object

    async def test_a_memory_store_never_needs_a_board_rebuild(self, backend: Backend) -> None:
        assert backend.needs_board_rebuild is False


class TestSQLiteBoard(BoardStorage):
    def make(self, tmp_path: Path) -> Backend:
        return SQLiteBackend(tmp_path / "data")

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return SQLiteBackend(tmp_path / "data")


class TestPostgresBoard(BoardStorage):
    """A fresh database of the session's throwaway cluster per test (tests/pg.py)."""

    @pytest.fixture(autouse=True)
    def _database(self, pg_cluster: Cluster) -> None:  # noqa: F811 - the imported fixture
        self.cluster = pg_cluster
        self.url = pg_cluster.new_database()

    def make(self, tmp_path: Path) -> Backend:
        return PostgresBackend(self.url)

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return PostgresBackend(self.url)


# == SQLite: an older store, its read-only readers, the position record =======================

#: The schema of a version 2 store, as the dsh that wrote it created it.
V2_DDL = (
    (
        "CREATE TABLE sessions ("
        "id TEXT PRIMARY KEY NOT NULL, "
        "header TEXT NOT NULL, "
        "created_at INTEGER NOT NULL, "
        "length INTEGER NOT NULL)"
    ),
    (
        "CREATE TABLE events ("
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "seq INTEGER NOT NULL, "
        "type TEXT NOT NULL, "
        "time INTEGER NOT NULL, "
        "data TEXT NOT NULL, "
        "PRIMARY KEY (session_id, seq)) WITHOUT ROWID"
    ),
    (
        "CREATE TABLE wakes ("
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "plugin TEXT NOT NULL, "
        "at_ms INTEGER NOT NULL, "
        "PRIMARY KEY (session_id, plugin)) WITHOUT ROWID"
    ),
    "CREATE INDEX wakes_due ON wakes (at_ms, session_id, plugin)",
)
V2_EVENTS = {"s0": make_events(0, 3, "zero"), "s1": make_events(0, 5, "one")}


def build_v2_store(folder: Path, sessions: dict[str, list[Event]]) -> None:
    """A data folder as a version 2 dsh left it: ``sessions`` and one wake entry of ``s1``."""
    folder.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(folder / DB, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN")
        for ddl in V2_DDL:
            conn.execute(ddl)
        for created, (sid, events) in enumerate(sessions.items()):
            header = _json.dumps(_records.stored_header(make_header(sid, created)))
            conn.execute(
                "INSERT INTO sessions (id, header, created_at, length) VALUES (?, ?, ?, ?)",
                (sid, header, created, len(events)),
            )
            conn.executemany(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, ?, ?)",
                [(sid, e.seq, e.type, e.time, _json.dumps(e.data)) for e in events],
            )
        if "s1" in sessions:
            conn.execute("INSERT INTO wakes VALUES ('s1', 'schedule', ?)", (AT,))
        conn.execute("PRAGMA user_version = 2")
        conn.execute("COMMIT")
    finally:
        conn.close()


def user_version(folder: Path) -> int:
    conn = sqlite3.connect(folder / DB)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


async def test_a_version_2_store_is_migrated_keeping_its_logs_and_wakes_and_asks_for_a_rebuild(
    tmp_path: Path,
) -> None:
    build_v2_store(tmp_path, V2_EVENTS)
    with capture_logs() as logs:
        async with opened(SQLiteBackend(tmp_path)) as backend:
            assert backend.needs_board_rebuild is True
            for created, (sid, events) in enumerate(V2_EVENTS.items()):
                stored = await backend.load(sid)
                assert_stored(stored, make_header(sid, created), events)
                assert stored is not None
                assert stored.board == {}
            stored = await backend.load("s1")
            assert stored is not None
            assert stored.wakes == {PLUGIN: AT}
            assert await backend.due_wakes(AT, 10) == [("s1", PLUGIN, AT)]
            assert names_of(await backend.list_sessions()) == {"s0": None, "s1": None}
            assert await backend.board_page(PLUGIN, "pending", limit=10) == []
            # The rebuild's writes: board rows and names on the migrated store.
            await backend.append(Write("s1", 5, [], board={(PLUGIN, "r"): pending(AT)}, name="One"))
    (migrated,) = [e for e in logs if e["event"] == "storage.migrated"]
    assert migrated["from_version"] == 2
    assert user_version(tmp_path) == SCHEMA_VERSION
    # Opened again it is a current store: no second migration, nothing to rebuild.
    with capture_logs() as logs:
        async with opened(SQLiteBackend(tmp_path)) as backend:
            assert backend.needs_board_rebuild is False
            rows = await backend.board_page(PLUGIN, "pending", limit=10)
            assert rows == [BoardRow("s1", "One", PLUGIN, "r", pending(AT))]
    assert not [e for e in logs if e["event"] == "storage.migrated"]


async def test_an_older_store_without_sessions_or_a_new_one_needs_no_rebuild(
    tmp_path: Path,
) -> None:
    build_v2_store(tmp_path / "empty-v2", {})
    async with opened(SQLiteBackend(tmp_path / "empty-v2")) as backend:
        assert backend.needs_board_rebuild is False
    assert user_version(tmp_path / "empty-v2") == SCHEMA_VERSION
    async with opened(SQLiteBackend(tmp_path / "new")) as backend:
        assert backend.needs_board_rebuild is False


async def test_a_version_2_store_that_is_not_exactly_the_old_schema_is_not_migrated(
    tmp_path: Path,
) -> None:
    build_v2_store(tmp_path, V2_EVENTS)
    conn = sqlite3.connect(tmp_path / DB, isolation_level=None)
    try:
        conn.execute("CREATE TABLE board (x INTEGER)")  # a half-made migration, or not ours
    finally:
        conn.close()
    before = (tmp_path / DB).read_bytes()
    backend = SQLiteBackend(tmp_path)
    with pytest.raises(Exception, match="is not a dsh store"):
        await backend.open()
    assert (tmp_path / DB).read_bytes() == before
    assert user_version(tmp_path) == 2


async def test_read_only_readers_read_version_1_2_and_3_stores(tmp_path: Path) -> None:
    build_v2_store(tmp_path / "v2", V2_EVENTS)
    build_v2_store(tmp_path / "v1", V2_EVENTS)
    conn = sqlite3.connect(tmp_path / "v1" / DB, isolation_level=None)
    try:
        conn.execute("DROP TABLE wakes")
        conn.execute("PRAGMA user_version = 1")
    finally:
        conn.close()
    for folder, wakes in ((tmp_path / "v1", {}), (tmp_path / "v2", {PLUGIN: AT})):
        before = (folder / DB).read_bytes()
        listed = await asyncio.to_thread(list_sessions_read_only, folder)
        assert [(s.header.id, s.length, s.name) for s in listed] == [
            ("s0", 3, None),
            ("s1", 5, None),
        ]
        stored = await asyncio.to_thread(load_read_only, folder, "s1")
        assert_stored(stored, make_header("s1", 1), V2_EVENTS["s1"])
        assert stored is not None
        assert stored.wakes == wakes
        assert stored.board == {}
        assert await asyncio.to_thread(load_read_only, folder, "nope") is None
        assert (folder / DB).read_bytes() == before  # read, never migrated
    # A current store read while its server holds it: names and board rows included.
    v3 = tmp_path / "v3"
    async with opened(SQLiteBackend(v3)) as holder:
        await holder.append(
            Write(
                "s1",
                0,
                make_events(0, 2),
                make_header("s1"),
                board={(PLUGIN, "r"): pending(AT)},
                name="Named",
            ),
        )
        await holder.append(Write("s2", 0, [], make_header("s2", 1_700_000_000_001)))
        listed = await asyncio.to_thread(list_sessions_read_only, v3)
        assert [(s.header.id, s.name) for s in listed] == [("s1", "Named"), ("s2", None)]
        stored = await asyncio.to_thread(load_read_only, v3, "s1")
        assert stored is not None
        assert stored.board == {(PLUGIN, "r"): pending(AT)}
        assert await holder.delete("s1") is True
        listed = await asyncio.to_thread(list_sessions_read_only, v3)
        assert [s.header.id for s in listed] == ["s2"]
        assert await asyncio.to_thread(load_read_only, v3, "s1") is None


async def test_a_delete_never_reads_as_lost_data_at_the_next_open(tmp_path: Path) -> None:
    async with opened(SQLiteBackend(tmp_path)) as backend:
        for sid in ("a", "b", "c"):
            await backend.append(Write(sid, 0, make_events(0, 4), make_header(sid)))
        before = backend.position
        assert before == (3, 12)
        assert await backend.delete("b") is True
        assert backend.position == before  # stored now plus deleted: it never goes back
        await backend.append(Write("a", 4, make_events(4, 1)))
        assert backend.position == (3, 13)
    conn = sqlite3.connect(tmp_path / DB)
    try:
        assert conn.execute("SELECT sessions, events FROM deleted").fetchall() == [(1, 4)]
    finally:
        conn.close()
    for _ in range(2):  # every later open, not just the first
        async with opened(SQLiteBackend(tmp_path)) as backend:
            assert backend.position == (3, 13)
            assert [s.header.id for s in await backend.list_sessions()] == ["a", "c"]
    # Deleting everything, twice over, still opens.
    async with opened(SQLiteBackend(tmp_path)) as backend:
        assert await backend.delete("a") is True
        assert await backend.delete("c") is True
    async with opened(SQLiteBackend(tmp_path)) as backend:
        assert await backend.list_sessions() == []
        assert backend.position == (3, 13)


async def test_a_real_loss_after_deletes_is_still_reported(tmp_path: Path) -> None:
    live = tmp_path / "live"
    async with opened(SQLiteBackend(live)) as backend:
        for sid in ("a", "b", "c"):
            await backend.append(Write(sid, 0, make_events(0, 3), make_header(sid)))
        assert await backend.delete("a") is True
    old = tmp_path / "old"
    shutil.copytree(live, old)  # the store as it was after the delete (closed: no WAL)
    async with opened(SQLiteBackend(live)) as backend:
        assert await backend.delete("b") is True
        await backend.append(Write("c", 3, make_events(3, 2)))
    # The acknowledged append is lost: the database goes back to the older copy.
    shutil.copyfile(old / DB, live / DB)
    with pytest.raises(StorageBehindError, match=re.escape("acknowledged commits are missing")):
        await SQLiteBackend(live).open()
    # Started anyway with what it holds (the record is reset to it), a tally that forgets the
    # deletes is a loss too: the deleted Sessions would otherwise hide lost ones.
    async with opened(SQLiteBackend(live, accept_data_loss=True)) as backend:
        assert backend.position == (3, 9)
    conn = sqlite3.connect(live / DB, isolation_level=None)
    try:
        conn.execute("DELETE FROM deleted")
    finally:
        conn.close()
    with pytest.raises(StorageBehindError):
        await SQLiteBackend(live).open()


async def test_a_damaged_board_row_is_skipped_by_pages_and_named_by_its_sessions_load(
    tmp_path: Path,
) -> None:
    async with opened(SQLiteBackend(tmp_path)) as backend:
        for sid in ("s1", "s2"):
            await backend.append(
                Write(sid, 0, [], make_header(sid), board={(PLUGIN, "r"): pending(AT)}, name=sid)
            )
    conn = sqlite3.connect(tmp_path / DB, isolation_level=None)
    try:
        conn.execute("UPDATE board SET data = '{not json' WHERE session_id = 's1'")
    finally:
        conn.close()
    async with opened(SQLiteBackend(tmp_path)) as backend:
        with capture_logs() as logs:
            rows = await backend.board_page(PLUGIN, "pending", limit=10)
        assert [row.session_id for row in rows] == ["s2"]  # the other Sessions' rows still show
        (damaged,) = [e for e in logs if e["event"] == "storage.board_row_damaged"]
        assert damaged["session_id"] == "s1"
        with pytest.raises(StorageCorruptError, match=re.escape("board row 'r' of plugin")):
            await backend.load("s1")
        assert await backend.load("s2") is not None
        assert await backend.delete("s1") is True  # a damaged Session can still be deleted
        assert page_keys(await backend.board_page(PLUGIN, "pending", limit=10)) == [(AT, "s2", "r")]


def test_a_board_page_reads_through_its_index(tmp_path: Path) -> None:
    # The board answers across Sessions without reading any log: one indexed range per page.
    build_v2_store(tmp_path, {})
    asyncio.run(_open_close(tmp_path))
    conn = sqlite3.connect(tmp_path / DB)
    try:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT b.session_id, n.name, b.key, b.kind, b.at_ms, b.data "
            "FROM board b LEFT JOIN names n ON n.session_id = b.session_id "
            "WHERE b.plugin = ? AND b.kind = ? AND (b.at_ms, b.session_id, b.key) > (?, ?, ?) "
            "ORDER BY b.at_ms, b.session_id, b.key LIMIT ?",
            (PLUGIN, "pending", AT, "s", "k", 50),
        ).fetchall()
    finally:
        conn.close()
    details = " | ".join(str(row[-1]) for row in plan)
    assert "board_by_kind" in details, details
    assert "TEMP B-TREE" not in details, details  # no sort: the index gives the order
    assert "events" not in details, details


async def _open_close(folder: Path) -> None:
    async with opened(SQLiteBackend(folder)):
        pass


# == PostgreSQL: an older database, and the lease a delete respects ============================


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


async def test_a_version_2_postgres_database_is_migrated_and_asks_for_a_rebuild(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as first:
        assert first.needs_board_rebuild is False
        await first.append(Write("s1", 0, make_events(0, 2), make_header("s1"), wakes={PLUGIN: AT}))
    for sql in ("DROP TABLE board", "DROP TABLE names", "UPDATE dsh_schema SET version = 2"):
        pg_cluster.execute(url, sql)
    with capture_logs() as logs:
        async with opened(PostgresBackend(url)) as backend:
            assert backend.needs_board_rebuild is True
            stored = await backend.load("s1")
            assert_stored(stored, make_header("s1"), make_events(0, 2))
            assert stored is not None
            assert stored.wakes == {PLUGIN: AT}
            assert stored.board == {}
            await backend.append(Write("s1", 2, [], board={(PLUGIN, "r"): pending(AT)}, name="One"))
    (migrated,) = [e for e in logs if e["event"] == "storage.migrated"]
    assert migrated["from_version"] == 2
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM dsh_schema").fetchall() == [(PG_SCHEMA_VERSION,)]
    async with opened(PostgresBackend(url)) as backend:
        assert backend.needs_board_rebuild is False
        rows = await backend.board_page(PLUGIN, "pending", limit=5)
        assert rows == [BoardRow("s1", "One", PLUGIN, "r", pending(AT))]


async def test_a_postgres_delete_is_refused_while_another_host_holds_the_lease(url: str) -> None:
    a = PostgresBackend(url, owner="host-a", lease_seconds=600)
    b = PostgresBackend(url, owner="host-b", lease_seconds=600)
    await a.open()
    await b.open()
    try:
        await a.append(
            Write("s1", 0, make_events(0, 2), make_header("s1"), board={(PLUGIN, "r"): pending(AT)})
        )
        assert a.leases.held("s1")
        with pytest.raises(SessionLiveElsewhereError, match="host-a"):
            await b.delete("s1")
        stored = await b.load("s1")  # nothing was deleted
        assert stored is not None
        assert len(stored.events) == 2
        assert await b.board_count(PLUGIN, "pending") == 1
        # Its own holder may delete it: the lease goes with the Session, nobody is told of a loss.
        lost: list[str] = []
        a.leases.on_lost(lost.append)
        assert await a.delete("s1") is True
        assert not a.leases.held("s1")
        assert await a.leases.renew() == []
        assert lost == []
        assert await b.load("s1") is None
        assert await b.delete("s1") is False
        # A Session whose lease was released is deleted by any host.
        await a.append(Write("s2", 0, make_events(0, 1), make_header("s2")))
        await a.leases.release("s2")
        assert await b.delete("s2") is True
        assert await a.load("s2") is None
    finally:
        await a.close()
        await b.close()
