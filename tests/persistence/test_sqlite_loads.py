"""Loads a herd asks for at once are read together (SQLiteBackend.load batches them).

A herd of resumes asks for hundreds of Sessions while the worker thread is busy; those loads are
read with one query per table. What a caller relies on stays as it was for one load: its own
Session (or ``None``), a damaged Session failing alone with the corruption named, and a caller
that stops waiting leaving the others their answers.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from dsh_host.conformance import make_events, make_header
from dsh_host.persistence import SQLiteBackend, StorageCorruptError, StorageError, Write
from dsh_host.persistence.sqlite._store import LOAD_BATCH
from tests.persistence.test_sqlite import DB, opened, run_sql

SESSIONS = LOAD_BATCH + 40  # more than one batch


async def _store(folder: Path) -> None:
    async with opened(folder) as backend:
        await asyncio.gather(
            *(
                backend.append(
                    Write(
                        f"s{i}", 0, make_events(0, 1 + i % 4, f"text {i}"), make_header(f"s{i}", i)
                    )
                )
                for i in range(SESSIONS)
            )
        )
        await backend.append(Write("s0", 1, make_events(1, 2, "later"), None, {"waker": 5}))


async def test_a_damaged_session_fails_alone_in_a_batch(tmp_path: Path) -> None:
    await _store(tmp_path)
    run_sql(tmp_path / DB, "UPDATE events SET data = '{not json' WHERE session_id = 's7'")
    async with opened(tmp_path) as backend:
        ids = [f"s{i}" for i in range(SESSIONS)]
        outcomes = await asyncio.gather(
            *(backend.load(sid) for sid in [*ids, "nobody"]), return_exceptions=True
        )
    by_id = dict(zip([*ids, "nobody"], outcomes, strict=True))
    damaged = by_id.pop("s7")
    assert isinstance(damaged, StorageCorruptError)
    assert re.search(r"stored event seq 0 of session 's7' is invalid", str(damaged))
    assert by_id.pop("nobody") is None
    lengths = {}
    for sid, stored in by_id.items():
        assert not isinstance(stored, BaseException), sid
        assert stored is not None, sid
        assert stored.header.id == sid
        assert [e.seq for e in stored.events] == list(range(len(stored.events)))
        lengths[sid] = (len(stored.events), dict(stored.wakes))
    assert lengths["s0"] == (3, {"waker": 5})
    assert lengths["s5"] == (2, {})
    assert lengths[f"s{SESSIONS - 1}"] == (1 + (SESSIONS - 1) % 4, {})


async def test_batched_loads_equal_loads_one_at_a_time(tmp_path: Path) -> None:
    await _store(tmp_path)
    async with opened(tmp_path) as backend:
        one_by_one = [await backend.load(f"s{i}") for i in range(SESSIONS)]
        together = await asyncio.gather(*(backend.load(f"s{i}") for i in range(SESSIONS)))
    assert together == one_by_one


async def test_a_caller_that_stops_waiting_leaves_the_others_their_answers(
    tmp_path: Path,
) -> None:
    await _store(tmp_path)
    async with opened(tmp_path) as backend:
        first = asyncio.ensure_future(backend.load("s1"))
        gone = asyncio.ensure_future(backend.load("s2"))
        same = asyncio.ensure_future(backend.load("s2"))
        await asyncio.sleep(0)
        gone.cancel()
        stored, twin = await asyncio.gather(first, same)
        assert gone.cancelled()
    assert stored is not None
    assert stored.header.id == "s1"
    assert twin is not None
    assert twin.header.id == "s2"


async def test_a_load_of_a_closed_store_is_refused(tmp_path: Path) -> None:
    await _store(tmp_path)
    backend = SQLiteBackend(tmp_path)
    with pytest.raises(StorageError, match="is not open"):
        await backend.load("s1")
    await backend.open()
    await backend.close()
    with pytest.raises(StorageError, match="is not open"):
        await backend.load("s1")


async def test_reads_go_on_while_a_commit_is_held_up(tmp_path: Path) -> None:
    # Reads run on a connection of their own beside the writer: a page or a load never waits
    # behind a slow commit (an fsync), and once a write is acknowledged every read sees it.
    await _store(tmp_path)
    async with opened(tmp_path) as backend:
        held, release = threading.Event(), threading.Event()
        write_batch = backend._write_batch

        def slow(batch: list[Any]) -> Any:
            held.set()
            release.wait(30)
            return write_batch(batch)

        backend._write_batch = slow  # type: ignore[method-assign]
        writing = asyncio.ensure_future(
            backend.append(Write("s1", 2, make_events(2, 1, "late"), None))
        )
        await asyncio.to_thread(held.wait, 30)
        stored = await asyncio.wait_for(backend.load("s1"), 10)  # not behind the held commit
        assert stored is not None
        assert len(stored.events) == 2
        assert len(await asyncio.wait_for(backend.list_page(limit=5), 10)) == 5
        assert not writing.done()
        release.set()
        await writing
        stored = await backend.load("s1")
        assert stored is not None
        assert len(stored.events) == 3
