"""The board and the stored names are derived state: ``dsh reindex`` (``LiveHost.reindex``)
re-derives them from the logs like the wake entries, and ``dsh serve`` runs the same rebuild
once at boot when opening storage migrated an older store (whose board is empty)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from structlog.testing import capture_logs

from dsh_hookspecs import Event
from dsh_host import LiveHost
from dsh_host._names import RENAME
from dsh_host.persistence import MemoryBackend, SQLiteBackend
from dsh_host.testing import ManualClock
from tests.persistence.test_board import build_v2_store
from tests.procs import DshProcess

from .board_plugin import PIN, PLUGIN, entry, load_pins
from .board_support import agrees

AT = 1_785_931_260_000


def old_log(name: str, pins: dict[str, int]) -> list[Event]:
    """A log as a dsh from before the board wrote it: a rename and some pins."""
    items = [(RENAME, {"name": name})]
    items += [(PIN, {"key": key, "at": at, "text": key}) for key, at in pins.items()]
    return [Event(seq=i, type=t, time=AT + i, data=d) for i, (t, d) in enumerate(items)]


async def test_reindex_rebuilds_the_board_clearing_rows_no_plugin_posts_again(
    clock: ManualClock, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    async with LiveHost(backend=SQLiteBackend(data), clock=clock, model="none") as host:
        pins = load_pins(host)
        cold = (await host.create_session()).session
        pins.pin(cold, "a", AT, "a")
        pins.pin(cold, "b", AT + 1, "b")
        live = (await host.create_session()).session
        pins.pin(live, "l", AT + 2, "l")
        await host.close_session(cold.id)
        db = sqlite3.connect(data / "dsh.sqlite3")
        with db:  # storage lost one row and holds one nobody posts
            db.execute("DELETE FROM board WHERE key = 'a'")
            db.execute(
                "INSERT INTO board VALUES (?, 'pins', 'stale', 'pending', ?, '{}')", (cold.id, AT)
            )
        db.close()
        assert await host.reindex() == (1, 0, [])  # the live Session's rows are current
        assert await agrees(host.backend, cold.id) == {"a": entry(AT, "a"), "b": entry(AT + 1, "b")}
        assert host.sessions.get(cold.id) is None
        assert await host.sessions.flush(live) is True
        assert await agrees(host.backend, live.id) == {"l": entry(AT + 2, "l")}


async def test_a_migrated_store_is_rebuilt_once_by_rebuild_if_migrated(
    clock: ManualClock, tmp_path: Path
) -> None:
    build_v2_store(tmp_path, {"s0": old_log("Groceries", {"milk": AT, "eggs": AT - 5})})
    with capture_logs() as logs:
        async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock, model="none") as host:
            load_pins(host)
            assert await host.backend.board_page(PLUGIN, "pending", limit=10) == []
            assert await host.rebuild_if_migrated() is True
            rows = await host.backend.board_page(PLUGIN, "pending", limit=10)
            assert [(r.session_id, r.session_name, r.key, r.entry.at_ms) for r in rows] == [
                ("s0", "Groceries", "eggs", AT - 5),
                ("s0", "Groceries", "milk", AT),
            ]
    assert [e["event"] for e in logs if e["event"].startswith("host.board_rebu")] == [
        "host.board_rebuild_started",
        "host.board_rebuilt",
    ]
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock, model="none") as host:
        assert await host.rebuild_if_migrated() is False  # a current store needs none


async def test_a_store_that_needs_no_rebuild_is_left_alone(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock, model="none") as host:
        assert await host.rebuild_if_migrated() is False


def test_dsh_serve_rebuilds_a_migrated_store_before_it_serves(tmp_path: Path) -> None:
    build_v2_store(tmp_path / "data", {"s0": old_log("Groceries", {"milk": AT})})
    proc = DshProcess(
        ["serve", "--data", str(tmp_path / "data"), "--port", "0", "--overlay", "none"]
    )
    try:
        proc.wait_for_line(r"listening on http://")
        assert proc.logged("host.board_rebuild_started")
        (done,) = proc.logged("host.board_rebuilt")
        assert (done["sessions"], done["failed"]) == (1, 0)
        proc.wait_logged("web.listening")  # its stderr line may trail the stdout one
        assert proc.stderr.index("host.board_rebuilt") < proc.stderr.index("web.listening")
    finally:
        status = proc.interrupt()
        proc.close()
    assert status == 0
    db = sqlite3.connect(tmp_path / "data" / "dsh.sqlite3")
    try:
        assert db.execute("SELECT session_id, name FROM names").fetchall() == [("s0", "Groceries")]
    finally:
        db.close()
