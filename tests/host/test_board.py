"""The board in the reference host: what ``SessionStore.post`` accepts, publishes and how the
persistence coordinator writes it (with the batch of the events before it, newest post winning,
kept for the retry of a failed write), so that the board and the log agree after any crash.

The plugin-facing contract (durable after the acknowledged flush, replaced, removed, refusals,
resume) is the conformance suite's :class:`~dsh_host.conformance.BoardContract`; these cases pin
the host's own side of it, over SQLite on disk.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_hookspecs import WAKE_MAX_MS, BoardEntry, SessionNotLiveError
from dsh_host import BoardChanged, LiveHost
from dsh_host.persistence import SQLiteBackend, StorageError
from dsh_host.testing import ManualClock, wait_until

from .board_plugin import PLUGIN, Pins, entry, load_pins
from .board_support import Faults, RecordingSQLite, agrees

AT = 1_785_931_260_000
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def recording(tmp_path: Path) -> RecordingSQLite:
    return RecordingSQLite(tmp_path / "data")


@pytest.fixture
async def rig(
    clock: ManualClock, recording: RecordingSQLite
) -> AsyncIterator[tuple[LiveHost, Pins, Faults]]:
    faulty = Faults(recording)
    async with LiveHost(backend=faulty, clock=clock, model="none") as host:
        pins = load_pins(host)
        yield host, pins, faulty
        faulty.plan.gate = None


# -- what a post accepts and publishes ----------------------------------------------------------


async def test_a_refused_post_changes_nothing_and_publishes_nothing(rig) -> None:
    host, pins, _ = rig
    session = (await host.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    heard: list[BoardChanged] = []
    host.sessions.subscribe(heard.append, BoardChanged)
    refusals = [
        ("not-loaded", "a", None, "loaded plugin"),
        (PLUGIN, "", None, "board key"),
        (PLUGIN, "a", BoardEntry(kind="Upper", at_ms=AT), "kind"),
        (PLUGIN, "a", BoardEntry(kind="pending", at_ms=WAKE_MAX_MS + 1), "wake instant"),
        (PLUGIN, "a", BoardEntry(kind="pending", at_ms=AT, data={"x": "y" * 5000}), "4096"),
    ]
    for plugin, key, row, words in refusals:
        with pytest.raises(ValueError, match=words):
            host.sessions.post(session, plugin, key, row)
    assert heard == []
    assert dict(host.sessions.posted(session)) == {(PLUGIN, "a"): entry(AT, "stretch")}
    await host.close_session(session.id)
    with pytest.raises(SessionNotLiveError):
        host.sessions.post(session, PLUGIN, "a", None)


async def test_posting_the_standing_row_publishes_nothing_and_writes_nothing(
    rig, recording: RecordingSQLite
) -> None:
    host, pins, _ = rig
    session = (await host.create_session()).session
    heard: list[BoardChanged] = []
    host.sessions.subscribe(heard.append, BoardChanged)
    pins.pin(session, "a", AT, "stretch")
    assert await host.sessions.flush(session) is True
    writes = len(recording.of(session.id))
    data = {"text": "stretch"}
    host.sessions.post(session, PLUGIN, "a", BoardEntry(kind="pending", at_ms=AT, data=data))
    host.sessions.post(session, PLUGIN, "never-posted", None)
    assert await host.sessions.flush(session) is True
    assert len(recording.of(session.id)) == writes  # nothing was pending: no write
    assert [(o.key, o.entry) for o in heard] == [("a", entry(AT, "stretch"))]
    data["text"] = "changed after the post"  # the standing row is the host's own copy
    assert host.sessions.posted(session)[PLUGIN, "a"] == entry(AT, "stretch")
    with pytest.raises(TypeError):
        host.sessions.posted(session)[PLUGIN, "b"] = entry(AT, "x")  # type: ignore[index]


# -- how the coordinator writes it --------------------------------------------------------------


async def test_a_post_rides_in_the_batch_of_the_events_before_it_newest_post_winning(
    rig, recording: RecordingSQLite
) -> None:
    host, pins, faulty = rig
    session = (await host.create_session()).session
    first = len(recording.of(session.id))
    pins.pin(session, "a", AT, "one")
    pins.pin(session, "b", AT + 1, "two")
    pins.pin(session, "a", AT + 2, "one, later")
    pins.unpin(session, "b")
    faulty.plan.gate = asyncio.Event()
    flush = asyncio.ensure_future(host.sessions.flush(session))
    await wait_until(lambda: len(faulty.plan.append_calls) > first)
    # Posted while that write is held: it waits for the next batch, with its own event.
    pins.pin(session, "c", AT + 3, "three")
    faulty.plan.gate.set()
    assert await flush is True
    assert await host.sessions.flush(session) is True
    calls = recording.of(session.id)[first:]
    assert [c.types for c in calls] == [(("test/pin",) * 3 + ("test/unpin",)), ("test/pin",)]
    assert calls[0].board == {(PLUGIN, "a"): entry(AT + 2, "one, later"), (PLUGIN, "b"): None}
    assert calls[1].board == {(PLUGIN, "c"): entry(AT + 3, "three")}
    assert await agrees(recording, session.id) == {
        "a": entry(AT + 2, "one, later"),
        "c": entry(AT + 3, "three"),
    }


async def test_a_batch_without_a_board_change_passes_no_board(
    rig, recording: RecordingSQLite
) -> None:
    host, _, _ = rig
    session = (await host.create_session()).session
    session.append("test/other", {})
    assert await host.sessions.flush(session) is True
    assert all(call.board is None for call in recording.of(session.id))


@pytest.mark.parametrize("failure", ["before", "after-commit"])
async def test_a_failed_write_keeps_the_board_change_for_the_next_flush(
    rig, recording: RecordingSQLite, failure: str
) -> None:
    host, pins, faulty = rig
    session = (await host.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    if failure == "before":
        faulty.plan.fail_appends = 1
    else:
        faulty.plan.fail_after_commit = 1  # stored, but the write reported a failure
    with pytest.raises(StorageError, match="injected"):
        await host.sessions.flush(session)
    pins.pin(session, "b", AT + 1, "later")
    assert await host.sessions.flush(session) is True
    assert await agrees(recording, session.id) == {
        "a": entry(AT, "stretch"),
        "b": entry(AT + 1, "later"),
    }
    retried = recording.of(session.id)[-1]
    assert retried.board is not None
    assert (PLUGIN, "a") in retried.board  # put back for the retry


CRASH = """
import asyncio, os, sys
from pathlib import Path

sys.path.insert(0, {root!r})
from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import ManualClock
from tests.host.board_plugin import load_pins

AT = {at}


async def main() -> None:
    # The manual clock never fires the batching window: only a flush writes.
    host = LiveHost(backend=SQLiteBackend(Path({data!r})), clock=ManualClock(), model="none")
    await host.start()
    pins = load_pins(host)
    session = (await host.create_session()).session
    print("session=" + session.id, flush=True)
    pins.pin(session, "durable", AT, "flushed")
    assert await host.sessions.flush(session) is True
    pins.pin(session, "lost", AT + 1, "never flushed")
    pins.unpin(session, "durable")
    os._exit(0)  # the process dies before the next flush


asyncio.run(main())
"""


async def test_a_crash_before_the_flush_leaves_the_board_and_the_log_agreeing(
    tmp_path: Path,
) -> None:
    script = CRASH.format(root=str(ROOT), at=AT, data=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    (session_id,) = [w[8:] for w in done.stdout.split() if w.startswith("session=")]
    backend = SQLiteBackend(tmp_path / "data")
    await backend.open()
    try:
        assert await agrees(backend, session_id) == {"durable": entry(AT, "flushed")}
        rows = await backend.board_page(PLUGIN, "pending", limit=10)
        assert [(row.session_id, row.key) for row in rows] == [(session_id, "durable")]
    finally:
        await backend.close()
