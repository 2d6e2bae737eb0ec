"""The control block shared by the crash harness and the chaos plugin inside ``dsh serve``.

A small file mapped ``MAP_SHARED`` by both processes: the harness arms a kill point by writing
into it, the plugin (in the server) counts hits and reports what the process was doing. Writes
land in the page cache, so the harness reads them even after the server was SIGKILLed: the
block tells whether a kill happened inside a SQLite write batch or inside a due path.

Only the standard library: the server process imports this module through the test plugin.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Final

# -- slot indexes (int64 each) ----------------------------------------------------------------
ARMED_POINT: Final = 0  #: the kill point the plugin watches (0: none)
ARMED_AT: Final = 1  #: kill at this hit of the armed point (1-based)
HITS: Final = 2  #: hits of the armed point since it was armed
FIRED: Final = 3  #: the point at which the plugin killed its own process (0: none)
IN_TXN: Final = 4  #: 1 while the SQLite writer thread runs a write batch (BEGIN .. COMMIT)
BATCH_LEN: Final = 5  #: requests in the write batch in flight
DUE_OPEN: Final = 6  #: Sessions whose follow-up was appended but whose dispatch is not flushed
COMMITS: Final = 7  #: write batches committed in this process
GROUP_COMMITS: Final = 8  #: of those, batches that carried more than one request
FLUSHES: Final = 9  #: acknowledged flushes observed (``dsh_session_flushed``)
PID: Final = 10  #: the server's pid (written at plugin start)
STALL_MS: Final = 11  #: how long a stall point holds its write batch before the kill (ms)
STALLED: Final = 12  #: 1 once a stall point started holding its write batch
#: reminder turn/starts appended while their dispatch was not durable yet (finding 1's window)
EARLY_TURNS: Final = 13
SLOTS: Final = 16
_FORMAT: Final = "<q"
SIZE: Final = SLOTS * 8

# -- kill points ------------------------------------------------------------------------------
#: name -> (code, where the process dies)
POINTS: Final = {
    "create-append": (1, "validating a schedule create, before it enters the log"),
    "create-committed": (2, "a flush covering a create was acknowledged, before the tool answers"),
    "delete-committed": (3, "a flush covering a delete was acknowledged, before the tool answers"),
    "followup-append": (
        4,
        "due path: validating the reminder's agent/followup, before it enters the log",
    ),
    "dispatch-append": (
        5,
        "due path: the follow-up is in the live log, validating the dispatch, before it enters",
    ),
    "dispatch-committed": (
        6,
        (
            "due path: the barrier's commit covering the dispatch was acknowledged, "
            "before the owner goes on"
        ),
    ),
    "reminder-turn-start": (
        7,
        "the reminder turn's turn/start is being validated (dispatch appended, maybe durable)",
    ),
    "reminder-turn-committed": (
        8,
        "a flush covering the reminder turn's turn/start was acknowledged (turn consumed)",
    ),
    "txn-mid": (
        9,
        "inside a SQLite group commit: some requests applied, before COMMIT",
    ),
    "txn-committed": (
        10,
        "SQLite COMMIT returned (fsynced), before any waiter learned it",
    ),
    "flushed-n": (11, "right after the n-th acknowledged flush of this process"),
    "dispatch-stalled": (
        12,
        (
            "due path on slow storage: the SQLite writer held the batch carrying the follow-up "
            "and its dispatch (a stall of a few hundred ms), then the process died before COMMIT"
        ),
    ),
    "reminder-turn-stalled": (
        13,
        (
            "slow storage: the SQLite writer held the batch carrying a reminder turn's "
            "turn/start (dispatch durable, model not called yet), then the process died"
        ),
    ),
}
#: Points that hold a write batch for ``STALL_MS`` and kill at the end of the stall.
STALL_POINTS: Final = ("dispatch-stalled", "reminder-turn-stalled")
#: The points of an edit (``schedule_update``), for the edit lane (the crash matrix's workload
#: never edits, so they are kept apart from :data:`POINTS`, which its kill plans draw from).
EDIT_POINTS: Final = {
    "update-preflight": (
        14,
        "an edit's preflight flush was acknowledged, before its update enters the log",
    ),
    "update-append": (15, "validating an edit's update, before it enters the log"),
    "update-committed": (
        16,
        "a flush covering an edit's update was acknowledged, before the tool answers",
    ),
}
#: Every point a control block can arm.
ALL_POINTS: Final = {**POINTS, **EDIT_POINTS}
CODES: Final = {code: name for name, (code, _) in ALL_POINTS.items()}


class Control:
    """The mapped control block (create it with :meth:`create` on the harness side)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> Control:
        Path(path).write_bytes(bytes(SIZE))
        return cls(path)

    def get(self, slot: int) -> int:
        return struct.unpack_from(_FORMAT, self._map, slot * 8)[0]

    def set(self, slot: int, value: int) -> None:
        struct.pack_into(_FORMAT, self._map, slot * 8, value)

    def add(self, slot: int, delta: int = 1) -> int:
        value = self.get(slot) + delta
        self.set(slot, value)
        return value

    def snapshot(self) -> list[int]:
        return [self.get(slot) for slot in range(SLOTS)]

    def reset(self) -> None:
        for slot in range(SLOTS):
            self.set(slot, 0)

    def arm(self, point: str, at: int, *, stall_ms: int = 0) -> None:
        """Kill the server at the ``at``-th hit of ``point`` from now on (a stall point holds
        the write batch it targets for ``stall_ms`` first)."""
        self.set(ARMED_POINT, 0)
        self.set(HITS, 0)
        self.set(ARMED_AT, at)
        self.set(STALL_MS, stall_ms)
        self.set(ARMED_POINT, ALL_POINTS[point][0])

    def close(self) -> None:
        self._map.close()
