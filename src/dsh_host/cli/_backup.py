"""``dsh backup``: a consistent copy of a SQLite data folder's store while ``dsh serve`` serves it.

:func:`backup` copies ``DIR/dsh.sqlite3`` with SQLite's online backup API
(``sqlite3.Connection.backup``) into one self-contained database file: journal mode DELETE (no
``-wal`` beside it), fsynced, written under a temporary name in the target's folder and given
the target's name only once it is complete (and verified, with ``verify``). Placed as
``dsh.sqlite3`` in an empty folder, the copy is a working store: ``dsh serve --data FOLDER``
opens it (running its full checks, since no seal or position record comes with it) and its
pending reminders fire.

How it stays consistent without holding the server. The store is opened read-only (never
through the folder's lock, which the running ``dsh serve`` holds) and one read transaction is
kept open from the first page copied to the end of the verification: in WAL mode that is a
snapshot (a read mark in the ``-shm``), which a writer never waits for. Every step of the copy
reads from that one snapshot, so the copy is the store exactly as of one commit, whatever the
server commits meanwhile. (Without the held snapshot, SQLite restarts a stepped backup from
page one after every commit another process makes, and a busy server keeps it from ever
finishing.)

What a step costs the server. A step copies ``pages`` database pages (at the default 4 KiB
pages and 1024 pages, 4 MiB) from the snapshot to the copy: a few milliseconds of disk and
CPU, and no lock a writer or a reader of the server waits for. After each step the copy pauses
``pause`` seconds, and every :data:`SYNC_BYTES` it flushes what it wrote to disk
(``fdatasync``), so that the server's own commits (each one ``fsync``) never queue behind one
flush of the whole copy at the end (measured on a 573 MiB store, before these slices: a
message's p99 went from 9 ms to 209 ms during the backup; with them, to 16-21 ms). The one
lasting cost is the WAL: while the snapshot is held, the server's checkpoints cannot copy frames
past it back into the database, so its ``-wal`` file grows by what it commits during the backup,
and shrinks again at its next checkpoint after the backup ended.

``verify`` opens the copy read-only, runs ``PRAGMA integrity_check``, and compares it with the
source read in the same held snapshot the copy was taken from: the number of Sessions and of
events, a digest of each Session (its stored row and every event row, in order) and a digest
of every other table (wake index, board, names, the tally of deletes, the outbox). Because the
source side is read in the copy's own snapshot, the comparison is exact even while the server
keeps writing: what it committed after the snapshot is simply not in this copy (the next backup
has it), and it is never mistaken for a difference.

PostgreSQL stores are not copied here: ``pg_dump`` is the tool for them.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from ..persistence.sqlite import DEFAULT_FILENAME, SCHEMA_VERSION

#: Pages a step copies unless told otherwise (4 MiB at SQLite's default 4 KiB pages).
DEFAULT_PAGES = 1024
#: Seconds the copy pauses after each step unless told otherwise.
DEFAULT_PAUSE = 0.005
#: Bytes the copy writes between two flushes of it to disk (``fdatasync``): the copy reaches
#: the disk in slices, so the server's own commits never queue behind one flush of the whole.
SYNC_BYTES = 32 * 2**20
#: Milliseconds the read-only connection waits for the server's brief WAL locks.
_BUSY_TIMEOUT_MS = 5000
#: The tables a dsh store holds besides ``sessions`` and ``events``, by schema version.
_OTHER_TABLES = ("wakes", "board", "names", "deleted", "outbox")
#: What ``--data`` with a PostgreSQL URL is told.
USE_PG_DUMP = (
    "dsh backup copies a SQLite data folder; for a PostgreSQL database use pg_dump "
    "(for example: pg_dump --format=custom --file=dsh.dump DBNAME)"
)

#: Called after each step with the pages copied so far and the pages of the whole store.
Progress = Callable[[int, int], None]


class BackupError(Exception):
    """A backup refused or failed: its message is one plain line. ``usage``: the command was
    asked for something impossible (no such store, a target that exists), not a failure."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(" ".join(message.split()))
        self.usage = usage


@dataclass(frozen=True)
class BackupReport:
    """What :func:`backup` wrote."""

    #: The copy (the ``to`` it was given).
    path: Path
    #: Sessions and events in the copy (counted in the copy).
    sessions: int
    events: int
    #: The copy's size in bytes, and the pages SQLite copied in how many steps.
    size: int
    pages: int
    steps: int
    #: Seconds the whole backup took, and the longest single step (pause excluded).
    seconds: float
    longest_step: float
    #: Whether the copy was verified (integrity check, counts and digests against the snapshot).
    verified: bool

    def summary(self) -> str:
        """The one line ``dsh backup`` prints."""
        line = (
            f"backed up {_count(self.sessions, 'session')} and {_count(self.events, 'event')} "
            f"({_size(self.size)}) to {self.path} in {self.seconds:.1f} s"
        )
        if self.verified:
            line += "; verified: integrity ok, counts and digests match the snapshot"
        return line


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _size(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    if size < 1024 * 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size / (1024 * 1024 * 1024):.2f} GiB"


def backup(
    folder: Path,
    to: Path,
    *,
    pages: int = DEFAULT_PAGES,
    pause: float = DEFAULT_PAUSE,
    verify: bool = False,
    progress: Progress | None = None,
) -> BackupReport:
    """Copy the SQLite store of the data folder ``folder`` to the new file ``to`` (blocking).

    See the module's docstring for how the copy stays consistent while a server writes, what a
    step of ``pages`` pages (then a pause of ``pause`` seconds) costs it, and what ``verify``
    compares. ``progress`` is called after each step with ``(copied, total)`` pages. Raises
    :class:`BackupError` (one plain line); ``to`` then does not exist and nothing is left
    behind.
    """
    if pages < 1:
        raise ValueError("pages must be at least 1")
    if pause < 0:
        raise ValueError("pause must not be negative")
    started = time.monotonic()
    source_path = _source(Path(folder))
    target = Path(to)
    _check_target(target)
    temp = target.absolute().with_name(f".{target.name}.backup-{os.getpid()}")
    source = _open_read_only(source_path)
    try:
        try:
            source.execute("BEGIN")  # the snapshot starts at the first read, held to the end
            _check_dsh_store(source, source_path)
            copied, steps, longest = _copy(
                source,
                temp,
                paths=(source_path, target),
                pages=pages,
                pause=pause,
                progress=progress,
            )
            if verify:
                copy = _open_read_only(temp)
                try:
                    _compare(source, copy, source_path)
                finally:
                    copy.close()
        finally:
            source.close()  # the snapshot ends: the server's checkpoints catch up
        sessions, events = _checked_copy(temp, target, verify=verify)
        _sync_file(temp, target)
        _publish(temp, target)
    except BaseException:
        for leftover in (temp, temp.with_name(temp.name + "-journal")):
            with contextlib.suppress(OSError):
                leftover.unlink()
        raise
    return BackupReport(
        path=target,
        sessions=sessions,
        events=events,
        size=target.stat().st_size,
        pages=copied,
        steps=steps,
        seconds=time.monotonic() - started,
        longest_step=longest,
        verified=verify,
    )


def _source(folder: Path) -> Path:
    """The store file of the data folder ``folder``; refused as ``dsh sessions`` refuses."""
    if not folder.exists():
        raise BackupError(f"no data folder at {folder}: nothing is stored there", usage=True)
    if not folder.is_dir():
        raise BackupError(f"{folder} is not a dsh data folder: it is a file", usage=True)
    path = (folder / DEFAULT_FILENAME).absolute()
    if not path.is_file():
        raise BackupError(
            f"{folder} is not a dsh data folder: it holds no {DEFAULT_FILENAME}", usage=True
        )
    return path


def _check_target(target: Path) -> None:
    if target.exists() or target.is_symlink():
        raise BackupError(
            f"{target} already exists: dsh backup never overwrites a file; name a new one",
            usage=True,
        )
    if not target.parent.is_dir():
        raise BackupError(f"cannot write {target}: no folder {target.parent}", usage=True)


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can never write ``path`` (the server's file, or the finished copy)."""
    try:
        conn = sqlite3.connect(
            path.absolute().as_uri() + "?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open {path} read-only: {exc}") from exc
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    return conn


def _check_dsh_store(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file that is not a dsh store of a version this dsh knows (read in the snapshot)."""
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema")}
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"cannot read {path}: {exc}") from exc
    if not tables:
        raise BackupError(f"{path} holds no dsh store yet: nothing was ever written to it")
    if not 1 <= version <= SCHEMA_VERSION or not {"sessions", "events"} <= tables:
        raise BackupError(
            f"{path} is not a dsh store this dsh knows (schema version {version}); "
            f"this dsh reads versions 1 to {SCHEMA_VERSION}"
        )


def _copy(
    source: sqlite3.Connection,
    temp: Path,
    *,
    paths: tuple[Path, Path],
    pages: int,
    pause: float,
    progress: Progress | None,
) -> tuple[int, int, float]:
    """Copy the snapshot ``source`` holds into ``temp`` step by step, then make ``temp`` a
    self-contained database (journal mode DELETE). ``paths``: the store and the target, as
    errors name them. Returns the pages copied, the steps and the longest step in seconds."""
    source_path, target = paths
    page_size = int(source.execute("PRAGMA page_size").fetchone()[0])
    steps = 0
    copied = 0
    synced = 0
    longest = 0.0
    last = time.monotonic()
    fd: int | None = None

    def step(_status: int, remaining: int, total: int) -> None:
        nonlocal steps, copied, synced, longest, last
        steps += 1
        copied = total - remaining
        if fd is not None and (copied - synced) * page_size >= SYNC_BYTES:
            os.fdatasync(fd)  # a little at a time: never one long flush the server waits behind
            synced = copied
        longest = max(longest, time.monotonic() - last)
        if progress is not None:
            progress(copied, total)
        if remaining and pause:
            time.sleep(pause)
        last = time.monotonic()

    try:
        dest = sqlite3.connect(temp, isolation_level=None)
        fd = os.open(temp, os.O_RDONLY | os.O_CLOEXEC)
    except (sqlite3.Error, OSError) as exc:
        raise BackupError(f"cannot write {target}: {exc}") from exc
    try:
        # Nothing to protect while copying: an unfinished temporary file is deleted.
        dest.execute("PRAGMA journal_mode = OFF")
        dest.execute("PRAGMA synchronous = OFF")
        try:
            source.backup(dest, pages=pages, progress=step)
        except sqlite3.Error as exc:
            raise _failure(exc, source_path, target) from exc
        except OSError as exc:
            raise BackupError(f"cannot write {target}: {_os_reason(exc)}") from exc
        try:
            # The copy carries the source's WAL flag in its header: make it a single file.
            mode = dest.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        except sqlite3.Error as exc:
            raise _failure(exc, source_path, target) from exc
        if str(mode).lower() != "delete":
            raise BackupError(f"cannot write {target}: its journal mode stayed {mode}")
    finally:
        dest.close()
        os.close(fd)
    return copied, steps, longest


def _failure(exc: sqlite3.Error, source_path: Path, target: Path) -> BackupError:
    """A copy that failed, said in one line: which side failed is in SQLite's message."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary == sqlite3.SQLITE_FULL:
        return BackupError(f"cannot write {target}: the disk is full ({exc})")
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return BackupError(f"cannot copy {source_path}: {exc}")
    return BackupError(f"cannot copy {source_path} to {target}: {exc}")


def _checked_copy(temp: Path, target: Path, *, verify: bool) -> tuple[int, int]:
    """The Sessions and events of the finished copy, read through a read-only connection; with
    ``verify``, ``PRAGMA integrity_check`` first."""
    copy = _open_read_only(temp)
    try:
        if verify:
            problems = [str(row[0]) for row in copy.execute("PRAGMA integrity_check(5)")]
            if problems != ["ok"]:
                raise BackupError(
                    f"the copy {target} failed PRAGMA integrity_check: " + "; ".join(problems)
                )
        sessions = int(copy.execute("SELECT count(*) FROM sessions").fetchone()[0])
        events = int(copy.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error as exc:
        raise BackupError(f"cannot read the copy {target}: {exc}") from exc
    finally:
        copy.close()
    return sessions, events


def _sync_file(temp: Path, target: Path) -> None:
    try:
        fd = os.open(temp, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise BackupError(f"cannot write {target}: {_os_reason(exc)}") from exc


def _publish(temp: Path, target: Path) -> None:
    """Give the finished copy its name, never replacing a file that appeared meanwhile, and
    make the name durable (fsync of the folder)."""
    try:
        os.link(temp, target)  # fails, atomically, if the name was taken meanwhile
    except FileExistsError as exc:
        raise BackupError(
            f"{target} already exists: dsh backup never overwrites a file; name a new one",
            usage=True,
        ) from exc
    except OSError:
        # A filesystem without hard links: check the name again, then rename.
        _check_target(target)
        try:
            temp.rename(target)
        except OSError as failed:
            raise BackupError(f"cannot write {target}: {_os_reason(failed)}") from failed
    else:
        with contextlib.suppress(OSError):  # the copy has its name; a stray link is harmless
            temp.unlink()
    with contextlib.suppress(OSError):  # a folder that cannot be opened for fsync: best effort
        fd = os.open(target.parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"the disk is full ({exc.strerror})"
    return exc.strerror or str(exc)


# -- verification ---------------------------------------------------------------------------


def _compare(source: sqlite3.Connection, copy: sqlite3.Connection, source_path: Path) -> None:
    """Raise :class:`BackupError` naming the first difference between the two stores (each
    read in its own current transaction): counts, then each Session, then every other table."""
    try:
        problem = _difference(source, copy)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot verify the copy of {source_path}: {exc}") from exc
    if problem is not None:
        raise BackupError(f"the copy does not match {source_path}: {problem}")


def _difference(source: sqlite3.Connection, copy: sqlite3.Connection) -> str | None:
    for table in ("sessions", "events"):
        sql = f"SELECT count(*) FROM {table}"  # noqa: S608 - a fixed table name
        had = int(source.execute(sql).fetchone()[0])
        has = int(copy.execute(sql).fetchone()[0])
        if had != has:
            return f"the store holds {_count(had, table[:-1])}, the copy {has}"
    for ours, theirs in zip_longest(_session_digests(source), _session_digests(copy)):
        if ours != theirs:
            which = ours[0] if ours is not None else theirs[0]
            return f"session {which} differs"
    tables = _tables(source)
    if tables != _tables(copy):
        return "the tables differ"
    for table in tables:
        if _table_digest(source, table) != _table_digest(copy, table):
            return f"table {table} differs"
    return None


def _session_digests(conn: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    """``(id, digest)`` of each Session in id order: its stored row, then its events in order."""
    sessions = conn.execute("SELECT id, header, created_at, length FROM sessions ORDER BY id")
    for row in sessions:
        digest = hashlib.sha256(repr(tuple(row)).encode())
        for event in conn.execute(
            "SELECT seq, type, time, data FROM events WHERE session_id = ? ORDER BY seq",
            (row[0],),
        ):
            digest.update(repr(tuple(event)).encode())
        yield str(row[0]), digest.hexdigest()


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    return [str(name) for (name,) in rows if name in _OTHER_TABLES]


def _table_digest(conn: sqlite3.Connection, table: str) -> str:
    """A digest of every row of ``table``, in its primary key's order."""
    keys = sorted(
        (int(pk), str(name))
        for _cid, name, _type, _notnull, _default, pk in conn.execute(f"PRAGMA table_info({table})")
        if pk
    )
    order = ", ".join(name for _, name in keys)
    digest = hashlib.sha256()
    for row in conn.execute(f"SELECT * FROM {table} ORDER BY {order}"):  # noqa: S608
        digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


def compare_stores(one: Path, other: Path) -> str | None:
    """The first difference between two SQLite store files (each read in one snapshot through
    a read-only connection), or ``None`` when their Sessions, events and other tables match:
    what ``verify`` checks, for two files at rest."""
    first = _open_read_only(Path(one))
    try:
        second = _open_read_only(Path(other))
        try:
            first.execute("BEGIN")
            second.execute("BEGIN")
            try:
                return _difference(first, second)
            except sqlite3.Error as exc:
                raise BackupError(f"cannot compare {one} and {other}: {exc}") from exc
        finally:
            second.close()
    finally:
        first.close()


# -- the command line -----------------------------------------------------------------------


def run_backup(args: argparse.Namespace) -> int:
    """``dsh backup``: the summary line on stdout, or one ``dsh: ...`` line on stderr with exit
    status 2 (nothing to copy, or a target that exists) or 1 (the copy failed)."""
    if isinstance(args.data, str):
        sys.stderr.write(f"dsh: {USE_PG_DUMP}\n")
        return 2
    try:
        report = backup(args.data, args.to, verify=args.verify)
    except BackupError as exc:
        sys.stderr.write(f"dsh: {exc}\n")
        return 2 if exc.usage else 1
    sys.stdout.write(report.summary() + "\n")
    return 0
