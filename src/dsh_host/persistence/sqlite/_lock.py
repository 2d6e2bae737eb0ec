"""The data-folder lock: one live dsh process per data folder.

The lock is an ``flock`` on ``<data folder>/dsh.lock``. ``flock`` locks belong to the open file
description, so the kernel drops them when the holder dies, however it dies: a lock file left
behind by a SIGKILLed process is only a file and never blocks the next start. The holder writes
its pid into the file so that a refused start can say who holds the folder.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import structlog

from .._backend import DataDirLockedError, StorageError

log = structlog.get_logger(__name__)

#: Name of the lock file inside the data folder.
LOCK_FILENAME = "dsh.lock"


def _read_holder(fd: int) -> int | None:
    """The pid written by the current holder, if it is readable yet."""
    try:
        raw = os.pread(fd, 32, 0)
    except OSError:
        return None
    text = raw.decode("ascii", errors="replace").strip()
    return int(text) if text.isdecimal() else None


class DataDirLock:
    """An exclusive, non-blocking, process-lifetime lock on a data folder.

    :meth:`acquire` creates the folder when missing and raises :class:`DataDirLockedError` when
    another open file description (another process, or another lock object in this process)
    holds it. :meth:`release` is idempotent.
    """

    def __init__(self, path: Path) -> None:
        self._dir = Path(path)
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        """The data folder."""
        return self._dir

    @property
    def lock_file(self) -> Path:
        return self._dir / LOCK_FILENAME

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            raise StorageError(f"data folder {self._dir} is already locked by this object")
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {self.lock_file}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_holder(fd) if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN) else None
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise StorageError(f"cannot lock {self.lock_file}: {exc}") from exc
            who = f" (pid {holder})" if holder is not None else ""
            log.warning("storage.lock_refused", data_dir=str(self._dir), holder=holder)
            raise DataDirLockedError(
                f"data folder {self._dir} is already in use by another dsh process{who}"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError as exc:
            # The pid is informational only; the flock is what excludes other processes.
            log.warning("storage.lock_pid_unwritten", lock_file=str(self.lock_file), error=str(exc))
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Closing the descriptor drops the flock. The file stays: removing it would race with a
        # process that has opened it and is about to lock it.
        os.close(fd)

    def __repr__(self) -> str:
        return f"DataDirLock({str(self._dir)!r}, held={self.held})"
