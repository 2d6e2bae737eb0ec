"""The seal of a clean close: what lets the next open skip the checks that read the whole store.

Two start-up checks read every page of the database: ``PRAGMA quick_check`` and the count of
stored Sessions and events that the position record is compared with. On a store of a million
Sessions they take many seconds, so they run only when the store may have changed since dsh
last saw it whole.

After a clean close (the write connection closed without an error, the WAL checkpointed into
the database and removed), dsh writes ``<filename>.clean`` beside the database: the store's
position and the database file's identity (device, inode, size, modification and change times
in nanoseconds, and a digest of its 100-byte header). The next open takes the seal (reads and
removes it, before anything else touches the folder) and trusts the position it names instead
of counting, and skips ``quick_check``, only when the file is still exactly the one that was
closed and no WAL with frames lies beside it. Anything else (no seal, an unreadable one, a
crash, a WAL left behind, a file written, replaced, truncated or restored since) runs every
check, as before. The position record is still compared with the sealed position, so a store
that went back behind acknowledged commits (a WAL lost after a later crash) is still refused.

What the seal does not see: a change by another program that keeps the file's size and header
and lands within the same file-system timestamp as dsh's own close (on a kernel with coarse
timestamps). Everything dsh itself writes happens after the seal is taken.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import structlog

from .._backend import StorageError
from ._file import Position, if_present

log = structlog.get_logger(__name__)

#: Suffix of the seal beside the database file.
SEAL_SUFFIX = ".clean"
_SEAL = "dsh-clean v1 sessions={} events={} file={}\n"
_SEAL_RE = re.compile(rb"dsh-clean v1 sessions=(\d{1,20}) events=(\d{1,20}) file=([0-9a-f:]+)\n")
_HEADER_SIZE = 100


def _identity(database: Path) -> str | None:
    """The identity of the database file as it is now, or ``None`` when it cannot be trusted
    as a whole: absent, unreadable, or with a WAL holding frames beside it."""
    wal = database.with_name(database.name + "-wal")
    try:
        wal_info = if_present(wal.stat, f"cannot read the WAL file {wal}")
        if wal_info is not None and wal_info.st_size > 0:
            return None
        with database.open("rb") as file:
            info = os.fstat(file.fileno())
            header = file.read(_HEADER_SIZE)
    except (OSError, StorageError):
        return None
    digest = hashlib.sha256(header).hexdigest()[:32]
    parts = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return ":".join(f"{part:x}" for part in parts) + f":{digest}"


class Seal:
    """``<database><SEAL_SUFFIX>``: written after a clean close, taken at the next open."""

    def __init__(self, database: Path) -> None:
        self._database = database
        self.path = database.with_name(database.name + SEAL_SUFFIX)

    def take(self) -> Position | None:
        """The sealed position when the database is exactly as the last clean close left it,
        else ``None``. The seal is removed either way: it vouches for one open only."""
        raw = if_present(self.path.read_bytes, f"cannot read {self.path}")
        if raw is None:
            return None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            # A seal that cannot be removed could vouch again later: do not trust it now.
            log.warning("storage.seal_kept", path=str(self.path), error=str(exc))
            return None
        match = _SEAL_RE.fullmatch(raw)
        if match is None:
            log.warning("storage.seal_unreadable", path=str(self.path))
            return None
        if _identity(self._database) != match[3].decode("ascii"):
            log.info("storage.seal_broken", path=str(self._database))
            return None
        return int(match[1]), int(match[2])

    def write(self, position: Position) -> None:
        """After a clean close: seal ``position`` with the file's identity. Nothing is written
        when the WAL was not removed (another connection kept it); a failure is only logged
        (the next open then runs every check)."""
        identity = _identity(self._database)
        if identity is None:
            log.info("storage.unsealed", path=str(self._database))
            return
        text = _SEAL.format(position[0], position[1], identity)
        try:
            self.path.write_bytes(text.encode("ascii"))
        except OSError as exc:
            log.warning("storage.seal_unwritten", path=str(self.path), error=str(exc))
