# Over 500 lines: the Backend contract is one list of cases a backend author reads in one place.
"""The Backend contract: one suite every :class:`~dsh_host.persistence.Backend` passes.

:class:`BackendContract` holds the cases; a backend's test module subclasses it (the subclass
name starts with ``Test`` so that pytest collects it) and says how to build its backend
(:meth:`~BackendContract.make`) and how to open the same store again after a close
(:meth:`~BackendContract.reopen`)::

    class TestMyBackend(BackendContract):
        def make(self, tmp_path: Path) -> Backend:
            return MyBackend(tmp_path / "store")

        def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
            return MyBackend(tmp_path / "store")
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_asyncio

from dsh_hookspecs import BoardEntry, Event, JSONValue, SessionHeader

from .._records import events_identical, headers_identical
from ..persistence import (
    Backend,
    DamagedSummary,
    PagedBackend,
    SessionRow,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StoredSession,
    StoredSummary,
    Write,
    damaged_sessions,
    session_count,
    session_cursor,
    session_page,
)

__all__ = [
    "AWKWARD",
    "BackendContract",
    "DamagedRowContract",
    "assert_stored",
    "make_event",
    "make_events",
    "make_header",
]


def make_header(sid: str, created_at: int = 1_700_000_000_000, **fields: object) -> SessionHeader:
    return SessionHeader(version=1, id=sid, created_at=created_at, **fields)  # type: ignore[arg-type]


def make_event(seq: int, data: JSONValue = None, etype: str = "message") -> Event:
    return Event(seq=seq, type=etype, time=1_700_000_000_000 + seq, data=data)


def make_events(start: int, count: int, tag: str = "") -> list[Event]:
    return [make_event(seq, {"n": seq, "tag": tag}) for seq in range(start, start + count)]


def assert_stored(
    stored: StoredSession | None, header: SessionHeader, events: Sequence[Event]
) -> None:
    assert stored is not None
    assert headers_identical(stored.header, header), (stored.header, header)
    assert len(stored.events) == len(events)
    for got, want in zip(stored.events, events, strict=True):
        assert events_identical(got, want), (got, want)


AWKWARD: JSONValue = {
    "unicode": 'héllo — 日本語 🎉 "quoted" back\\slash\nnew line\ttab \u0000 nul \u2028',
    "": "empty key",
    "clé ✓": ["unicode key"],
    "big_ints": [2**63 - 1, 2**63, -(2**63), 2**100, -(2**70), 0],
    "floats": [0.1, 1.0, -0.0, 1e300, 5e-324, -2.5e-10, 123456789.125],
    "true_vs_one": [True, 1, 1.0, False, 0, 0.0, None, "1", "true"],
    "nested": {"a": [{"b": [[[], {}], {"c": None}]}]},
    "deep": [[[[[[[[[[[[[[[[[[[[{"bottom": True}]]]]]]]]]]]]]]]]]]]],
    "empty": {"list": [], "object": {}, "string": ""},
}


def _row(at_ms: int, data: JSONValue = None, kind: str = "pending") -> BoardEntry:
    return BoardEntry(kind=kind, at_ms=at_ms, data=data)


def _listed(row: SessionRow) -> tuple[str, int | None, int | None, str | None]:
    """A list page's row as ``(id, created_at, length, name)`` (a damaged row: no length)."""
    if isinstance(row, DamagedSummary):
        return row.id, row.created_at, None, None
    return row.header.id, row.header.created_at, row.length, row.name


async def _pages(backend: Backend, limit: int) -> list[list[SessionRow]]:
    """Every page of the Session list, each of at most ``limit`` rows, following the cursor."""
    pages: list[list[SessionRow]] = []
    after = None
    while True:
        page = await session_page(backend, after=after, limit=limit)
        assert len(page) <= limit
        if not page:
            return pages
        pages.append(page)
        after = session_cursor(page[-1])


class BackendContract:
    """What every :class:`~dsh_host.persistence.Backend` promises.

    Subclasses implement :meth:`make` (a fresh, unopened backend over ``tmp_path``) and
    :meth:`reopen` (after closing, the same store opened again). Every case is an ``async``
    test marked ``asyncio`` (pytest-asyncio), so the suite runs with or without
    ``asyncio_mode = "auto"``.
    """

    pytestmark = pytest.mark.asyncio

    def make(self, tmp_path: Path) -> Backend:
        """A fresh, unopened backend whose store lives under ``tmp_path``."""
        raise NotImplementedError

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        """An unopened backend over the same store as ``closed`` (which has been closed)."""
        raise NotImplementedError

    @pytest_asyncio.fixture
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

    # -- create and load ---------------------------------------------------------------

    async def test_create_with_events_then_load_returns_identical_header_and_events(
        self, backend: Backend
    ) -> None:
        header = make_header(
            "s1",
            cwd="/home/user/projet é",
            parent_session="p0",
            seed_length=2,
            origin="subagent",
            delegation_depth=3,
        )
        events = make_events(0, 3)
        await backend.append(Write("s1", 0, events, header))
        assert_stored(await backend.load("s1"), header, events)

    async def test_absent_delegation_depth_is_stored_as_zero(self, backend: Backend) -> None:
        header = make_header("s1")
        assert header.delegation_depth is None
        await backend.append(Write("s1", 0, [], header))
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.header.delegation_depth == 0
        assert headers_identical(stored.header, header)

    async def test_create_without_events_stores_an_empty_log(self, backend: Backend) -> None:
        await backend.append(Write("s1", 0, [], make_header("s1")))
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.events == ()
        assert [s.length for s in await backend.list_sessions()] == [0]

    async def test_load_of_a_missing_id_is_none(self, backend: Backend) -> None:
        assert await backend.load("nope") is None
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        assert await backend.load("nope") is None

    # -- optimistic appends ------------------------------------------------------------

    async def test_append_at_the_stored_length_extends_the_log(self, backend: Backend) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header))
        await backend.append(Write("s1", 2, make_events(2, 3)))
        await backend.append(Write("s1", 5, make_events(5, 1)))
        assert_stored(await backend.load("s1"), header, make_events(0, 6))

    @pytest.mark.parametrize("start", [0, 1, 3, 7])
    async def test_append_at_a_wrong_start_conflicts_and_writes_nothing(
        self, backend: Backend, start: int
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header))
        with pytest.raises(StorageConflictError, match="s1"):
            await backend.append(Write("s1", start, make_events(start, 2, tag="late")))
        assert_stored(await backend.load("s1"), header, make_events(0, 2))
        # The store still accepts the right start afterwards.
        await backend.append(Write("s1", 2, make_events(2, 1)))
        assert_stored(await backend.load("s1"), header, make_events(0, 3))

    async def test_empty_append_checks_the_start_and_changes_nothing(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header))
        await backend.append(Write("s1", 2, []))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 1, []))
        assert_stored(await backend.load("s1"), header, make_events(0, 2))

    async def test_create_of_an_existing_id_conflicts_and_keeps_the_stored_session(
        self, backend: Backend
    ) -> None:
        first = make_header("s1", created_at=1)
        await backend.append(Write("s1", 0, make_events(0, 2), first))
        with pytest.raises(StorageConflictError, match="already exists"):
            await backend.append(
                Write("s1", 0, make_events(0, 1, tag="other"), make_header("s1", 2))
            )
        assert_stored(await backend.load("s1"), first, make_events(0, 2))

    async def test_create_at_a_non_zero_start_conflicts(self, backend: Backend) -> None:
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 2, make_events(2, 1), make_header("s1")))
        assert await backend.load("s1") is None

    async def test_append_to_a_missing_session_conflicts(self, backend: Backend) -> None:
        with pytest.raises(StorageConflictError, match="does not exist"):
            await backend.append(Write("ghost", 0, make_events(0, 1)))
        assert await backend.load("ghost") is None
        assert await backend.list_sessions() == []

    async def test_racing_appends_at_the_same_start_let_exactly_one_win(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 1), header))
        results = await asyncio.gather(
            backend.append(Write("s1", 1, make_events(1, 2, tag="a"))),
            backend.append(Write("s1", 1, make_events(1, 2, tag="b"))),
            return_exceptions=True,
        )
        assert results.count(None) == 1
        [error] = [r for r in results if r is not None]
        assert isinstance(error, StorageConflictError)
        winner = "a" if results[0] is None else "b"
        assert_stored(
            await backend.load("s1"), header, [*make_events(0, 1), *make_events(1, 2, winner)]
        )

    async def test_a_writer_that_lost_an_acknowledgement_recovers_from_the_stored_cursor(
        self, backend: Backend
    ) -> None:
        # The writer stored [0, 4) but believes only [0, 2) is stored (the acknowledgement of
        # its last append was lost). Re-sending from its belief conflicts and writes nothing;
        # the stored length is the cursor, and only the missing suffix is written from there.
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header))
        await backend.append(Write("s1", 2, make_events(2, 2)))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 2, make_events(2, 4)))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 4))
        assert stored is not None
        [summary] = await backend.list_sessions()
        assert summary.length == len(stored.events) == 4
        await backend.append(Write("s1", summary.length, make_events(4, 2)))
        assert_stored(await backend.load("s1"), header, make_events(0, 6))

    async def test_a_divergent_request_never_overwrites_the_stored_prefix(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 3, tag="stored"), header))
        for start in (0, 1, 2):
            with pytest.raises(StorageConflictError):
                await backend.append(Write("s1", start, make_events(start, 3, tag="divergent")))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 0, make_events(0, 3, tag="divergent"), header))
        assert_stored(await backend.load("s1"), header, make_events(0, 3, tag="stored"))

    # -- listing -----------------------------------------------------------------------

    async def test_a_healthy_store_lists_no_damaged_sessions(self, backend: Backend) -> None:
        await backend.append(Write("s1", 0, make_events(0, 2), make_header("s1")))
        listed = await backend.list_sessions()
        assert [s.header.id for s in listed] == ["s1"]
        assert damaged_sessions(listed) == ()

    async def test_list_sessions_is_oldest_first_with_lengths(self, backend: Backend) -> None:
        created = {"m": 300, "b": 100, "z": 200, "a": 200, "c": 100}
        for i, (sid, at) in enumerate(created.items()):
            await backend.append(Write(sid, 0, make_events(0, i), make_header(sid, at)))
        await backend.append(Write("m", 0, make_events(0, 2)))
        listed = await backend.list_sessions()
        assert [(s.header.id, s.header.created_at, s.length) for s in listed] == [
            ("b", 100, 1),
            ("c", 100, 4),
            ("a", 200, 3),
            ("z", 200, 2),
            ("m", 300, 2),
        ]
        assert all(s.header.delegation_depth == 0 for s in listed)

    # -- the Session list, a page at a time ----------------------------------------------

    async def test_a_list_page_refuses_a_malformed_cursor_or_limit(self, backend: Backend) -> None:
        await backend.append(Write("s1", 0, [], make_header("s1")))
        bad: list[dict[str, object]] = [
            {"after": (1, 2), "limit": 5},
            {"after": ("1", "s1"), "limit": 5},
            {"after": (True, "s1"), "limit": 5},
            {"after": (2**63, "s1"), "limit": 5},
            {"after": [1, "s1"], "limit": 5},
            {"after": (1, "s1", "x"), "limit": 5},
            {"after": None, "limit": -1},
            {"after": None, "limit": True},
            {"after": None, "limit": 2.0},
        ]
        for arguments in bad:
            with pytest.raises(ValueError, match=r"cursor|limit"):
                await session_page(backend, **arguments)  # type: ignore[arg-type]
            if isinstance(backend, PagedBackend):
                with pytest.raises(ValueError, match=r"cursor|limit"):
                    await backend.list_page(**arguments)  # type: ignore[arg-type]

    async def test_an_empty_store_lists_an_empty_page_and_counts_none(
        self, backend: Backend
    ) -> None:
        assert await session_page(backend, limit=10) == []
        assert await session_page(backend, after=(5, "x"), limit=10) == []
        assert await session_count(backend) == 0

    async def test_the_list_pages_newest_first_with_names_after_the_cursor(
        self, backend: Backend
    ) -> None:
        # Ties on the creation time are ordered by id, by code point (so "Z" < "a" < "é").
        created = {"m": 300, "b": 100, "z": 200, "a": 200, "c": 100, "Z": 200, "é": 200}
        for i, (sid, at) in enumerate(created.items()):
            name = None if sid in ("b", "Z") else f"name {sid}"
            await backend.append(Write(sid, 0, make_events(0, i), make_header(sid, at), name=name))
        await backend.append(Write("m", 0, make_events(0, 2)))
        expected = [
            ("m", 300, 2, "name m"),
            ("é", 200, 6, "name é"),
            ("z", 200, 2, "name z"),
            ("a", 200, 3, "name a"),
            ("Z", 200, 5, None),
            ("c", 100, 4, "name c"),
            ("b", 100, 1, None),
        ]
        for limit in (1, 2, 3, 7, 50):
            pages = await _pages(backend, limit)
            assert [_listed(row) for page in pages for row in page] == expected, limit
            assert [len(page) for page in pages[:-1]] == [limit] * (len(pages) - 1)
        assert await session_count(backend) == 7
        assert await session_page(backend, limit=0) == []
        # A cursor no row has continues at the next row in the order.
        after = await session_page(backend, after=(200, "b"), limit=3)
        assert [_listed(row)[0] for row in after] == ["a", "Z", "c"]
        after = await session_page(backend, after=(250, ""), limit=1)
        assert [_listed(row)[0] for row in after] == ["é"]
        # A delete leaves the list and the count at once.
        assert await backend.delete("a") is True
        assert [_listed(row)[0] for row in await session_page(backend, limit=3)] == ["m", "é", "z"]
        assert [
            _listed(row)[0] for row in await session_page(backend, after=(200, "z"), limit=1)
        ] == ["Z"]
        assert await session_count(backend) == 6

    async def test_the_list_pages_a_thousand_sessions_without_a_gap_or_a_repeat(
        self, backend: Backend
    ) -> None:
        await asyncio.gather(
            *(
                backend.append(Write(f"s{i:04d}", 0, [], make_header(f"s{i:04d}", 1_000 + i // 3)))
                for i in range(1_000)
            )
        )
        pages = await _pages(backend, 200)
        assert [len(page) for page in pages] == [200] * 5
        ids = [_listed(row)[0] for page in pages for row in page]
        assert ids == [f"s{i:04d}" for i in reversed(range(1_000))]
        assert await session_count(backend) == 1_000

    # -- strict JSON -------------------------------------------------------------------

    async def test_awkward_json_round_trips_exactly(self, tmp_path: Path, backend: Backend) -> None:
        header = make_header("ünï/cødé 🎉", cwd="/tmp/spaces and ünïcode/日本")  # noqa: S108
        events = [
            make_event(0, AWKWARD, etype="tipo/ñ"),
            make_event(1, 1),
            make_event(2, True),
            make_event(3, 1.0),
            make_event(4, None),
            make_event(5, "1"),
            make_event(6, [1, True, 1.0]),
        ]
        await backend.append(Write(header.id, 0, events, header))
        assert_stored(await backend.load(header.id), header, events)
        stored = await backend.load(header.id)
        assert stored is not None
        assert [type(e.data) for e in stored.events[1:5]] == [int, bool, float, type(None)]
        # And the same after the store is reopened (for SQLite: decoded from disk).
        again = await self._reopened(backend, tmp_path)
        try:
            assert_stored(await again.load(header.id), header, events)
        finally:
            await again.close()

    # -- concurrency -------------------------------------------------------------------

    async def test_many_concurrent_appends_to_different_sessions_all_land(
        self, backend: Backend
    ) -> None:
        ids = [f"s{i:03d}" for i in range(100)]
        await asyncio.gather(
            *(
                backend.append(Write(sid, 0, make_events(0, 1, sid), make_header(sid, i)))
                for i, sid in enumerate(ids)
            )
        )
        for round_ in range(3):
            await asyncio.gather(
                *(
                    backend.append(Write(sid, 1 + 2 * round_, make_events(1 + 2 * round_, 2, sid)))
                    for sid in ids
                )
            )
        for i, sid in enumerate(ids):
            assert_stored(await backend.load(sid), make_header(sid, i), make_events(0, 7, sid))
        assert [s.length for s in await backend.list_sessions()] == [7] * 100

    # -- the durable wake index ---------------------------------------------------------

    async def test_wake_entries_are_stored_with_the_batch_and_loaded(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header, wakes={"a": 100, "b": 200}))
        await backend.append(Write("s2", 0, make_events(0, 1), make_header("s2")))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 2))
        assert stored is not None
        assert stored.wakes == {"a": 100, "b": 200}
        other = await backend.load("s2")
        assert other is not None
        assert other.wakes == {}

    async def test_a_later_entry_replaces_and_none_clears_one_plugins_entry(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 1), header, wakes={"a": 100, "b": 200}))
        await backend.append(Write("s1", 1, make_events(1, 1), wakes={"a": 150}))
        # A batch of wakes alone (no event) is written too, at the stored length.
        await backend.append(Write("s1", 2, [], wakes={"b": None, "c": -5}))
        await backend.append(Write("s1", 2, [], wakes={"never-filed": None}))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 2))
        assert stored is not None
        assert stored.wakes == {"a": 150, "c": -5}
        await backend.append(Write("s1", 2, [], wakes={"a": None, "c": None}))
        cleared = await backend.load("s1")
        assert cleared is not None
        assert cleared.wakes == {}
        assert await backend.earliest_wake() is None

    async def test_a_refused_append_stores_none_of_its_wake_entries(self, backend: Backend) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header, wakes={"a": 100}))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 1, make_events(1, 1), wakes={"a": 1, "b": 2}))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 3, [], wakes={"a": None}))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("ghost", 0, [], wakes={"a": 1}))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 2))
        assert stored is not None
        assert stored.wakes == {"a": 100}
        assert await backend.load("ghost") is None
        assert await backend.due_wakes(2**62, 10) == [("s1", "a", 100)]

    async def test_racing_appends_store_only_the_winners_wake_entries(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        results = await asyncio.gather(
            backend.append(Write("s1", 1, make_events(1, 1, tag="a"), wakes={"p": 10})),
            backend.append(Write("s1", 1, make_events(1, 1, tag="b"), wakes={"p": 20})),
            return_exceptions=True,
        )
        assert results.count(None) == 1
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.wakes == {"p": 10 if results[0] is None else 20}

    async def test_due_wakes_lists_entries_due_by_now_earliest_first(
        self, backend: Backend
    ) -> None:
        assert await backend.earliest_wake() is None
        assert await backend.due_wakes(2**62, 10) == []
        await backend.append(Write("s1", 0, [], make_header("s1"), wakes={"b": 300, "a": 300}))
        await backend.append(Write("s2", 0, [], make_header("s2"), wakes={"a": 100, "z": 900}))
        await backend.append(Write("s0", 0, [], make_header("s0"), wakes={"a": 300}))
        assert await backend.earliest_wake() == 100
        assert await backend.due_wakes(99, 10) == []
        assert await backend.due_wakes(300, 10) == [
            ("s2", "a", 100),
            ("s0", "a", 300),
            ("s1", "a", 300),
            ("s1", "b", 300),
        ]
        assert await backend.due_wakes(300, 2) == [("s2", "a", 100), ("s0", "a", 300)]
        assert await backend.due_wakes(10_000, 10) == [
            *await backend.due_wakes(300, 10),
            ("s2", "z", 900),
        ]
        await backend.append(Write("s2", 0, [], wakes={"a": None}))
        assert await backend.earliest_wake() == 300

    async def test_a_closed_backend_refuses_wake_queries_and_wake_writes(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, [], make_header("s1"), wakes={"a": 1}))
        await backend.close()
        with pytest.raises(StorageError):
            await backend.due_wakes(0, 1)
        with pytest.raises(StorageError):
            await backend.earliest_wake()
        with pytest.raises(StorageError):
            await backend.append(Write("s1", 0, [], wakes={"a": 2}))

    async def test_wake_entries_survive_close_and_reopen(
        self, tmp_path: Path, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1"), wakes={"a": 100}))
        await backend.append(Write("s1", 1, [], wakes={"b": 50}))
        again = await self._reopened(backend, tmp_path)
        try:
            stored = await again.load("s1")
            assert stored is not None
            assert stored.wakes == {"a": 100, "b": 50}
            assert await again.earliest_wake() == 50
            assert await again.due_wakes(100, 10) == [("s1", "b", 50), ("s1", "a", 100)]
        finally:
            await again.close()

    # -- the board, names and deletes -----------------------------------------------------

    async def test_board_rows_and_a_name_are_stored_with_the_batch_and_loaded(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 2),
                header,
                board={
                    ("p", "a"): _row(300, {"text": "é 🎉"}),
                    ("q", "a"): _row(100, kind="other"),
                },
                name="Groceries",
            ),
        )
        await backend.append(Write("s2", 0, make_events(0, 1), make_header("s2")))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 2))
        assert stored is not None
        assert stored.board == {
            ("p", "a"): _row(300, {"text": "é 🎉"}),
            ("q", "a"): _row(100, kind="other"),
        }
        other = await backend.load("s2")
        assert other is not None
        assert other.board == {}
        assert [(s.header.id, s.name) for s in await backend.list_sessions()] == [
            ("s1", "Groceries"),
            ("s2", None),
        ]

    async def test_a_later_row_replaces_none_removes_it_and_a_name_is_never_cleared(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1"), name="First"))
        await backend.append(
            Write("s1", 1, [], board={("p", "a"): _row(100), ("p", "b"): _row(200)})
        )
        await backend.append(Write("s1", 1, make_events(1, 1), board={("p", "a"): _row(150)}))
        await backend.append(Write("s1", 2, [], board={("p", "b"): None, ("p", "never"): None}))
        stored = await backend.load("s1")
        assert stored is not None
        assert stored.board == {("p", "a"): _row(150)}
        assert [s.name for s in await backend.list_sessions()] == ["First"]
        await backend.append(Write("s1", 2, [], name="Second"))
        assert [s.name for s in await backend.list_sessions()] == ["Second"]

    async def test_a_refused_append_stores_none_of_its_rows_or_its_name(
        self, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 2), header, board={("p", "a"): _row(1)}))
        with pytest.raises(StorageConflictError):
            await backend.append(
                Write(
                    "s1",
                    1,
                    make_events(1, 1),
                    board={("p", "a"): None, ("p", "b"): _row(2)},
                    name="x",
                )
            )
        with pytest.raises(StorageConflictError):
            await backend.append(Write("ghost", 0, [], board={("p", "a"): _row(1)}, name="ghost"))
        stored = await backend.load("s1")
        assert_stored(stored, header, make_events(0, 2))
        assert stored is not None
        assert stored.board == {("p", "a"): _row(1)}
        assert [(s.header.id, s.name) for s in await backend.list_sessions()] == [("s1", None)]

    async def test_board_page_orders_by_instant_session_and_key_after_the_cursor(
        self, backend: Backend
    ) -> None:
        await backend.append(
            Write(
                "s2",
                0,
                [],
                make_header("s2", 1),
                board={("p", "b"): _row(200), ("p", "a"): _row(200), ("p", "z"): _row(50)},
                name="Two",
            ),
        )
        await backend.append(
            Write(
                "s1",
                0,
                [],
                make_header("s1", 2),
                board={
                    ("p", "c"): _row(200),
                    ("p", "late"): _row(900),
                    ("p", "other"): _row(1, kind="done"),
                    ("q", "c"): _row(1),
                },
            ),
        )
        everything = await backend.board_page("p", "pending", limit=10)
        assert [(r.entry.at_ms, r.session_id, r.key) for r in everything] == [
            (50, "s2", "z"),
            (200, "s1", "c"),
            (200, "s2", "a"),
            (200, "s2", "b"),
            (900, "s1", "late"),
        ]
        assert [(r.session_name, r.plugin) for r in everything[:2]] == [("Two", "p"), (None, "p")]
        assert everything[0].entry == _row(50)
        first = await backend.board_page("p", "pending", limit=2)
        assert first == everything[:2]
        last = first[-1]
        rest = await backend.board_page(
            "p", "pending", limit=10, after=(last.entry.at_ms, last.session_id, last.key)
        )
        assert rest == everything[2:]
        mine = await backend.board_page("p", "pending", limit=10, session_id="s1")
        assert [r.key for r in mine] == ["c", "late"]
        assert [r.key for r in await backend.board_page("p", "done", limit=10)] == ["other"]
        assert await backend.board_page("nobody", "pending", limit=10) == []
        assert await backend.board_page("p", "pending", limit=0) == []

    async def test_board_count_counts_the_rows_after_an_instant(self, backend: Backend) -> None:
        rows = {("p", "a"): _row(100), ("p", "b"): _row(200), ("p", "c"): _row(1, kind="done")}
        await backend.append(Write("s1", 0, [], make_header("s1"), board=rows))
        await backend.append(Write("s2", 0, [], make_header("s2"), board={("p", "a"): _row(300)}))
        assert await backend.board_count("p", "pending") == 3
        assert await backend.board_count("p", "pending", after_ms=100) == 2
        assert await backend.board_count("p", "pending", after_ms=300) == 0
        assert await backend.board_count("p", "pending", session_id="s1") == 2
        assert await backend.board_count("p", "done") == 1
        assert await backend.board_count("q", "pending") == 0

    async def test_delete_removes_the_session_its_entries_rows_and_name_and_nothing_else(
        self, backend: Backend
    ) -> None:
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 3),
                make_header("s1", 1),
                wakes={"p": 100},
                board={("p", "a"): _row(100)},
                name="Parent",
            ),
        )
        child = make_header("c1", 2, parent_session="s1", seed_length=3)
        await backend.append(
            Write(
                "c1", 0, make_events(0, 3), child, wakes={"p": 200}, board={("p", "a"): _row(200)}
            )
        )
        assert await backend.delete("s1") is True
        assert await backend.load("s1") is None
        assert [s.header.id for s in await backend.list_sessions()] == ["c1"]
        rows = await backend.board_page("p", "pending", limit=9)
        assert [(r.session_id, r.key) for r in rows] == [("c1", "a")]
        assert await backend.due_wakes(2**62, 10) == [("c1", "p", 200)]
        assert await backend.delete("s1") is False
        assert await backend.delete("never-stored") is False
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 3, make_events(3, 1)))
        assert_stored(await backend.load("c1"), child, make_events(0, 3))  # a fork keeps working
        await backend.append(Write("c1", 3, make_events(3, 1)))
        # The id is free again: a new Session of it starts empty, without the old name.
        await backend.append(Write("s1", 0, [], make_header("s1", 3)))
        reborn = await backend.load("s1")
        assert reborn is not None
        assert (reborn.events, reborn.wakes, reborn.board) == ((), {}, {})
        assert {s.header.id: s.name for s in await backend.list_sessions()}["s1"] is None

    async def test_rows_names_and_deletes_survive_close_and_reopen(
        self, tmp_path: Path, backend: Backend
    ) -> None:
        await backend.append(
            Write("s1", 0, [], make_header("s1"), board={("p", "a"): _row(1)}, name="N")
        )
        await backend.append(Write("s2", 0, [], make_header("s2"), board={("p", "b"): _row(2)}))
        assert await backend.delete("s2") is True
        again = await self._reopened(backend, tmp_path)
        try:
            stored = await again.load("s1")
            assert stored is not None
            assert stored.board == {("p", "a"): _row(1)}
            assert [(s.header.id, s.name) for s in await again.list_sessions()] == [("s1", "N")]
            assert [r.key for r in await again.board_page("p", "pending", limit=5)] == ["a"]
            assert await again.load("s2") is None
        finally:
            await again.close()

    # -- lifecycle ---------------------------------------------------------------------

    async def test_stored_sessions_survive_close_and_reopen(
        self, tmp_path: Path, backend: Backend
    ) -> None:
        header = make_header("s1")
        await backend.append(Write("s1", 0, make_events(0, 3), header))
        again = await self._reopened(backend, tmp_path)
        try:
            assert_stored(await again.load("s1"), header, make_events(0, 3))
            await again.append(Write("s1", 3, make_events(3, 1)))
            assert_stored(await again.load("s1"), header, make_events(0, 4))
        finally:
            await again.close()

    async def test_close_is_idempotent_and_a_closed_backend_refuses_work(
        self, backend: Backend
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        await backend.close()
        await backend.close()
        with pytest.raises(StorageError):
            await backend.load("s1")
        with pytest.raises(StorageError):
            await backend.list_sessions()
        with pytest.raises(StorageError):
            await backend.append(Write("s1", 1, make_events(1, 1)))

    async def test_close_of_a_never_opened_backend_is_a_no_op(self, tmp_path: Path) -> None:
        backend = self.make(tmp_path)
        await backend.close()
        await backend.close()


class DamagedRowContract:
    """What a durable backend promises about a stored row it cannot decode.

    For backends whose store another program (or a disk fault) can damage while it is closed:
    subclasses implement :meth:`make` (as for :class:`BackendContract`, over the same store each
    time) and :meth:`damage_header`. Subclass both to run both.
    """

    pytestmark = pytest.mark.asyncio

    def make(self, tmp_path: Path) -> Backend:
        """An unopened backend over the store under ``tmp_path`` (the same store every call)."""
        raise NotImplementedError

    def damage_header(self, tmp_path: Path, session_id: str) -> None:
        """With the store closed, make the stored header of ``session_id`` undecodable."""
        raise NotImplementedError

    async def test_an_undecodable_session_is_listed_damaged_and_never_hides_the_others(
        self, tmp_path: Path
    ) -> None:
        backend = self.make(tmp_path)
        await backend.open()
        try:
            for i in range(3):
                await backend.append(
                    Write(f"s{i}", 0, make_events(0, 2), make_header(f"s{i}", i + 1))
                )
        finally:
            await backend.close()
        self.damage_header(tmp_path, "s1")
        again = self.make(tmp_path)
        await again.open()
        try:
            listed = await again.list_sessions()
            assert [(s.header.id, s.length) for s in listed] == [("s0", 2), ("s2", 2)]
            (damaged,) = damaged_sessions(listed)
            assert damaged.id == "s1"
            assert damaged.error
            assert "\n" not in damaged.error  # one plain line
            # A page holds the damaged row in its place, and the count counts it.
            page = await session_page(again, limit=5)
            assert [(_listed(row)[0], type(row)) for row in page] == [
                ("s2", StoredSummary),
                ("s1", DamagedSummary),
                ("s0", StoredSummary),
            ]
            assert page[1] == damaged
            after = await session_page(again, after=session_cursor(page[1]), limit=5)
            assert [_listed(row)[0] for row in after] == ["s0"]
            assert await session_count(again) == 3
            with pytest.raises(StorageCorruptError, match="s1"):
                await again.load("s1")
            assert_stored(await again.load("s2"), make_header("s2", 3), make_events(0, 2))
        finally:
            await again.close()
