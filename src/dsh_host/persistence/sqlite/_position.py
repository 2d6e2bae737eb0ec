"""The position record beside a SQLite store: silent loss of acknowledged commits is refused.

The store's position (Sessions and events ever stored; both only grow) is written after every
COMMIT that returned to ``<filename>.position``, with a plain fixed-width write in place (no
fsync of its own). A record behind the store is harmless (the process died between COMMIT and
the write); a store behind the record has lost acknowledged commits.

A delete removes rows, so the store's side is what it holds plus what was deleted: the delete
transaction adds the Sessions and events it removed to a tally kept in the store itself (the
``deleted`` table), in the same transaction, so a delete leaves the position where it was and
never reads as a loss at the next open, while rows lost outside dsh still do (the tally
counts only what a committed delete removed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import structlog

from .._backend import StorageBehindError, StorageError
from ._file import Position, if_present

log = structlog.get_logger(__name__)

#: Suffix of the position record beside the database file.
POSITION_SUFFIX = ".position"
_POSITION_RECORD = "dsh-position v1 sessions={:020d} events={:020d}\n"
_POSITION_RE = re.compile(rb"dsh-position v1 sessions=(\d{20}) events=(\d{20})\n")


def _amount(position: Position) -> str:
    sessions, events = position
    return (
        f"{sessions} session{'' if sessions == 1 else 's'} and "
        f"{events} event{'' if events == 1 else 's'}"
    )


class PositionRecord:
    """``<database><POSITION_SUFFIX>``: the last acknowledged position of the database."""

    def __init__(self, database: Path, *, accept_data_loss: bool) -> None:
        self._database = database
        self.path = database.with_name(database.name + POSITION_SUFFIX)
        self._accept_data_loss = accept_data_loss
        self.position: Position = (0, 0)
        self._fd: int | None = None
        self._warned = False

    def _read(self) -> Position | None:
        raw = if_present(self.path.read_bytes, f"cannot read {self.path}")
        if not raw:  # absent, or created, never written (or emptied by a power cut)
            return None
        match = _POSITION_RE.fullmatch(raw)
        if match is None:
            # Not ours to judge: refusing would be a false alarm; it is rewritten on open.
            log.warning("storage.position_unreadable", path=str(self.path))
            return None
        return int(match[1]), int(match[2])

    def check_not_behind(self, stored: Position, *, fresh: bool) -> None:
        """Raise :class:`StorageBehindError` when the store holds less than the record says
        was acknowledged (unless data loss is accepted: then only log it)."""
        recorded = self._read()
        if recorded is None or (stored[0] >= recorded[0] and stored[1] >= recorded[1]):
            return
        (log.warning if self._accept_data_loss else log.error)(
            "storage.data_loss_accepted" if self._accept_data_loss else "storage.behind",
            path=str(self._database),
            stored_sessions=stored[0],
            stored_events=stored[1],
            acknowledged_sessions=recorded[0],
            acknowledged_events=recorded[1],
        )
        if self._accept_data_loss:
            return
        db = self._database
        holds = "is missing or empty" if fresh else f"holds {_amount(stored)} (counting deletes)"
        raise StorageBehindError(
            f"database file {db} {holds}, but {_amount(recorded)} were acknowledged "
            f"(recorded in {self.path}): "
            f"acknowledged commits are missing (a lost {db.name}-wal file, a truncated "
            "or replaced database?); refusing to start. To start anyway with what the store "
            "holds, run dsh serve --accept-data-loss"
        )

    def open(self, position: Position) -> None:
        """Open the record for this process and reset it to ``position`` (what the store holds)."""
        record = _POSITION_RECORD.format(*position).encode("ascii")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open {self.path}: {exc}") from exc
        self._fd = fd
        try:
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))
        except OSError as exc:
            raise StorageError(f"cannot write {self.path}: {exc}") from exc
        self.position = position

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def advance(self, sessions: int, events: int) -> None:
        """Worker thread, only after a COMMIT returned: the record is never ahead of the store.

        ``sessions`` and ``events`` are what that commit added.
        """
        if not (sessions or events):
            return
        position = (self.position[0] + sessions, self.position[1] + events)
        self.position = position
        fd = self._fd
        if fd is None:
            return
        try:
            # Fixed width, in place: one write, no truncation, no fsync of its own.
            os.pwrite(fd, _POSITION_RECORD.format(*position).encode("ascii"), 0)
        except OSError as exc:
            # The commit itself is durable; a stale record only weakens the check at open.
            if not self._warned:
                self._warned = True
                log.warning("storage.position_unwritten", path=str(self.path), error=str(exc))
