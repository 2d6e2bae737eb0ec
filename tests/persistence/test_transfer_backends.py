"""Export snapshots and all-or-nothing imports, held to the same cases on every backend
(memory, SQLite on disk, PostgreSQL on the session's throwaway cluster)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from pathlib import Path

import pytest

from dsh_hookspecs import BoardEntry
from dsh_host.conformance import AWKWARD, assert_stored, make_events, make_header
from dsh_host.persistence import (
    ExportBackend,
    ImportBackend,
    ImportConflictError,
    ImportCounts,
    ImportedSession,
    MemoryBackend,
    PostgresBackend,
    SessionLiveElsewhereError,
    SQLiteBackend,
    StorageError,
    StoredSession,
    UnstorableError,
    Write,
    check_storable,
)
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster

KINDS = ("memory", "sqlite", "postgres")


class Store:
    """A backend of one kind, reopenable (the same store) with :meth:`fresh`."""

    def __init__(self, kind: str, make: Callable[[], object]) -> None:
        self.kind = kind
        self._make = make

    def fresh(self):
        return self._make()


@pytest.fixture(params=KINDS)
async def store(request, tmp_path: Path) -> Store:
    kind = request.param
    if kind == "memory":
        memory = MemoryBackend()
        return Store(kind, lambda: memory)
    if kind == "sqlite":
        return Store(kind, lambda: SQLiteBackend(tmp_path / "data"))
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database()
    return Store(kind, lambda: PostgresBackend(url))


async def _open(store: Store):
    backend = store.fresh()
    await backend.open()
    return backend


async def _exported(backend: ExportBackend, ids: Sequence[str] | None = None) -> list:
    async with aclosing(backend.export_sessions(ids)) as sessions:
        return [stored async for stored in sessions]


async def _stream(items: Sequence[ImportedSession]) -> AsyncIterator[ImportedSession]:
    for item in items:
        yield item


def _item(sid: str, count: int, created_at: int = 1_700_000_000_000, **kw) -> ImportedSession:
    header = make_header(sid, created_at)
    return ImportedSession(StoredSession(header=header, events=tuple(make_events(0, count))), **kw)


async def _snapshot(backend) -> list[tuple[str, int, dict, dict]]:
    """Everything a test compares of a store: each Session's id, length, wakes and board."""
    out = []
    for stored in await _exported(backend):
        loaded = await backend.load(stored.header.id)
        out.append((stored.header.id, len(stored.events), loaded.wakes, loaded.board))
    return out


async def test_every_backend_offers_both_capabilities(store: Store) -> None:
    backend = store.fresh()
    assert isinstance(backend, ExportBackend)
    assert isinstance(backend, ImportBackend)


async def test_export_is_ordered_by_creation_then_id_and_reads_only_headers_and_logs(
    store: Store,
) -> None:
    backend = await _open(store)
    try:
        # Created out of order; "b" and "B" and "é" tie on createdAt: ids by code point.
        for sid, created in (("late", 3), ("b", 2), ("é", 2), ("B", 2), ("early", 1)):
            events = make_events(0, 3, tag=sid)
            await backend.append(Write(sid, 0, events, make_header(sid, created), {"p": 5_000}))
        await backend.append(
            Write(
                "b",
                3,
                make_events(3, 1),
                board={("p", "k"): BoardEntry(kind="k", at_ms=9, data={})},
            )
        )
        found = await _exported(backend)
        assert [s.header.id for s in found] == ["early", "B", "b", "é", "late"]
        assert [len(s.events) for s in found] == [3, 3, 4, 3, 3]
        assert all(s.wakes == {} and s.board == {} for s in found)  # derived state stays home
        assert_stored(
            found[2], make_header("b", 2), [*make_events(0, 3, tag="b"), *make_events(3, 1)]
        )
        chosen = await _exported(backend, ["late", "B", "early", "B"])
        assert [s.header.id for s in chosen] == ["early", "B", "late"]
    finally:
        await backend.close()


async def test_exporting_an_unknown_id_is_refused_before_anything_is_read(store: Store) -> None:
    backend = await _open(store)
    try:
        await backend.append(Write("s", 0, make_events(0, 1), make_header("s")))
        with pytest.raises(StorageError, match="no session nope is stored"):
            await _exported(backend, ["s", "nope"])
    finally:
        await backend.close()


async def test_many_sessions_and_a_big_one_export_whole_and_in_order(store: Store) -> None:
    backend = await _open(store)
    try:
        for n in range(300):  # more than a page of headers
            await backend.append(
                Write(f"s{n:03}", 0, make_events(0, n % 4), make_header(f"s{n:03}", n))
            )
        await backend.append(
            Write("zbig", 0, make_events(0, 5000, tag="x" * 50), make_header("zbig", 999))
        )
        found = await _exported(backend)
        assert [s.header.id for s in found] == [*(f"s{n:03}" for n in range(300)), "zbig"]
        assert [len(s.events) for s in found] == [*(n % 4 for n in range(300)), 5000]
    finally:
        await backend.close()


async def test_an_export_is_one_snapshot_while_the_store_is_written(store: Store) -> None:
    backend = await _open(store)
    writer = backend  # the snapshot reads beside the backend's own writer
    try:
        for n in range(600):
            await backend.append(
                Write(f"s{n:03}", 0, make_events(0, 2), make_header(f"s{n:03}", n))
            )
        async with aclosing(backend.export_sessions()) as sessions:
            first = await anext(sessions)
            assert first.header.id == "s000"
            # Committed after the snapshot began: a later Session, and more of listed ones.
            await writer.append(Write("s999", 0, make_events(0, 1), make_header("s999", 10_000)))
            await writer.append(Write("s599", 2, make_events(2, 5)))
            await writer.append(Write("s000", 2, make_events(2, 5)))
            rest = [stored async for stored in sessions]
        assert [s.header.id for s in rest] == [f"s{n:03}" for n in range(1, 600)]
        assert {len(s.events) for s in [first, *rest]} == {2}
        after = await _exported(backend)
        assert len(after) == 601
        assert len(after[0].events) == 7
    finally:
        await backend.close()


async def test_import_inserts_absent_sessions_with_their_derived_state(store: Store) -> None:
    backend = await _open(store)
    try:
        board = {("p", "k"): BoardEntry(kind="pending", at_ms=7_000, data={"text": "hi"})}
        items = [
            _item("a", 3, 1, name="Groceries"),
            ImportedSession(
                StoredSession(
                    header=make_header("f", 2, parent_session="a", seed_length=1),
                    events=(*make_events(0, 2), make_events(2, 1)[0]),
                    wakes={"p": 6_000, "dsh.turns": 5_000},
                    board=board,
                )
            ),
            ImportedSession(StoredSession(header=make_header("empty", 3), events=())),
            ImportedSession(
                StoredSession(
                    header=make_header("awk", 4),
                    events=(make_events(0, 1)[0].__class__(seq=0, type="t", time=1, data=AWKWARD),),
                )
            ),
        ]
        counts = await backend.import_sessions(_stream(items))
        assert counts == ImportCounts(
            imported=4, imported_events=7, unchanged=0, unchanged_events=0
        )
        for item in items:
            loaded = await backend.load(item.session.header.id)
            assert_stored(loaded, item.session.header, item.session.events)
            assert loaded.wakes == item.session.wakes
            assert loaded.board == item.session.board
        assert await backend.due_wakes(10_000, 10) == [("f", "dsh.turns", 5_000), ("f", "p", 6_000)]
        (row,) = await backend.board_page("p", "pending", limit=5)
        assert (row.session_id, row.entry) == ("f", board["p", "k"])
        names = {s.header.id: s.name for s in await backend.list_sessions()}
        assert names["a"] == "Groceries"
        # Appends go on after an import, from the stored length.
        await backend.append(Write("a", 3, make_events(3, 1)))
    finally:
        await backend.close()
    again = await _open(store)  # SQLite: the position record followed the import
    try:
        assert len((await again.load("a")).events) == 4
    finally:
        await again.close()


async def test_importing_the_same_sessions_again_adds_nothing(store: Store) -> None:
    backend = await _open(store)
    try:
        items = [_item("a", 3, 1), _item("b", 0, 2)]
        assert (await backend.import_sessions(_stream(items))).imported == 2
        before = await _snapshot(backend)
        again = await backend.import_sessions(_stream([*items, _item("c", 1, 3)]))
        assert again == ImportCounts(imported=1, imported_events=1, unchanged=2, unchanged_events=3)
        assert (await _snapshot(backend))[:2] == before
    finally:
        await backend.close()


@pytest.mark.parametrize(
    "clash",
    [
        pytest.param(lambda: _item("a", 4, 1), id="longer"),
        pytest.param(lambda: _item("a", 3, 99), id="header"),
        pytest.param(
            lambda: ImportedSession(
                StoredSession(header=make_header("a", 1), events=tuple(make_events(0, 3, tag="x")))
            ),
            id="event",
        ),
    ],
)
async def test_a_session_stored_with_other_content_is_a_conflict_and_nothing_is_written(
    store: Store, clash: Callable[[], ImportedSession]
) -> None:
    backend = await _open(store)
    try:
        await backend.import_sessions(_stream([_item("a", 3, 1)]))
        before = await _snapshot(backend)
        items = [_item("new", 2, 0), clash(), _item("other", 1, 5)]
        with pytest.raises(
            ImportConflictError, match="session a is already stored with different"
        ) as caught:
            await backend.import_sessions(_stream(items))
        assert caught.value.session_id == "a"
        assert await _snapshot(backend) == before
    finally:
        await backend.close()


async def test_a_stream_that_fails_midway_writes_nothing(store: Store) -> None:
    backend = await _open(store)
    try:
        await backend.import_sessions(_stream([_item("kept", 1, 0)]))
        before = await _snapshot(backend)

        async def broken() -> AsyncIterator[ImportedSession]:
            for n in range(600):  # several batches already written inside the transaction
                yield _item(f"s{n:03}", 10, n + 1)
            raise OSError("the file went away")

        with pytest.raises(OSError, match="went away"):
            await backend.import_sessions(broken())
        assert await _snapshot(backend) == before
        # The store takes writes and imports as before.
        assert (await backend.import_sessions(_stream([_item("next", 1, 9)]))).imported == 1
    finally:
        await backend.close()


async def test_a_refused_session_fails_the_whole_import(store: Store) -> None:
    backend = await _open(store)
    try:
        bad = ImportedSession(
            StoredSession(header=make_header("bad", 2), events=tuple(make_events(0, 1))),
            name="",
        )
        with pytest.raises(ValueError, match="name"):
            await backend.import_sessions(_stream([_item("good", 1, 1), bad]))
        assert await _snapshot(backend) == []
    finally:
        await backend.close()


async def test_postgresql_refuses_an_import_while_a_host_holds_a_lease(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    # The other backends have the folder lock (SQLite) or one process (memory) instead.
    url = pg_cluster.new_database()
    store = Store("postgres", lambda: PostgresBackend(url))
    host = await _open(store)
    importer = await _open(store)
    try:
        await host.append(
            Write("live", 0, make_events(0, 1), make_header("live"))
        )  # leased by host
        assert await importer.held_elsewhere() is not None
        with pytest.raises(SessionLiveElsewhereError, match="stop every dsh serve"):
            await importer.import_sessions(_stream([_item("x", 1, 2)]))
        assert [s.header.id for s in await _exported(importer)] == ["live"]
        await host.leases.release("live")
        assert await importer.held_elsewhere() is None
        assert (await importer.import_sessions(_stream([_item("x", 1, 2)]))).imported == 1
        # What the import created is not leased: any host takes it at once.
        await host.leases.acquire("x")
        assert host.leases.held("x")
    finally:
        await importer.close()
        await host.close()


async def test_sqlite_exports_a_store_another_process_holds_without_its_lock(
    tmp_path: Path,
) -> None:
    holder = SQLiteBackend(tmp_path)
    await holder.open()
    try:
        await holder.append(Write("s", 0, make_events(0, 2), make_header("s")))
        reader = SQLiteBackend(tmp_path)  # never opened
        assert [s.header.id for s in await _exported(reader)] == ["s"]
        assert await _exported(SQLiteBackend(tmp_path / "absent")) == []
        with pytest.raises(StorageError, match="no session s is stored"):
            await _exported(SQLiteBackend(tmp_path / "absent"), ["s"])
    finally:
        await holder.close()


async def test_sqlite_export_reports_a_damaged_row_and_a_newer_schema(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path)
    await backend.open()
    await backend.append(Write("s", 0, make_events(0, 2), make_header("s")))
    await backend.close()
    db = sqlite3.connect(tmp_path / "dsh.sqlite3")
    with db:
        db.execute("UPDATE events SET data = 'not json' WHERE seq = 1")
    with pytest.raises(StorageError, match="stored event seq 1 of session 's' is invalid"):
        await _exported(SQLiteBackend(tmp_path))
    with db:
        db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StorageError, match="schema version 99, newer than"):
        await _exported(SQLiteBackend(tmp_path))


def test_check_storable_names_the_part_a_backend_would_refuse() -> None:
    header = make_header("s")
    events = make_events(0, 3)
    check_storable(header, events)
    with pytest.raises(UnstorableError, match="64 bits") as caught:
        check_storable(
            header, [*events[:2], events[2].__class__(seq=2, type="t", time=2**63, data=1)]
        )
    assert caught.value.index == 2
    with pytest.raises(UnstorableError) as caught:
        check_storable(make_header("s", 2**64), events)
    assert caught.value.index is None
