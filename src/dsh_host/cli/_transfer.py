"""``dsh export``, ``dsh import`` and ``dsh migrate``: the export format, its strict reader, and
moving Sessions between stores (docs/data-format.md is the format's definition).

The format is JSON Lines in UTF-8: a first line ``{"format": "dsh-export", "version": 1,
"exportedAt": ...}``; then per Session, oldest ``createdAt`` first (ids by code point), a line
``{"session": <header>, "events": <count>}`` and that many lines ``{"event": <event>}`` in
``seq`` order, each header and event exactly as the host's strict codec stores it; last
``{"end": true, "sessions": N, "events": M}``. Derived state (wake entries, board rows, names)
is never exported: an import derives it again from the logs.

* :func:`export` writes a backend's snapshot (:class:`~dsh_host.persistence.ExportBackend`),
  streaming: memory holds one Session.
* :class:`ExportReader` reads a file strictly and streaming (lines read in bounded chunks,
  never more than :data:`MAX_LINE_BYTES` of one line), yielding one Session at a time with its
  line number; every refusal is an :class:`ExportFileError` naming the file and the line.
* :class:`Plugins` is a host of its own, over memory, with the overlay's plugins loaded: it
  runs each imported event through their ``dsh_event_validate`` as if appended in order to the
  Session (:meth:`Plugins.validate`), and derives the wake entries, board rows and name the
  plugins file for a log, exactly as ``dsh reindex`` does (:meth:`Plugins.derive`), so the
  import stores them in the same transaction as the log and pending reminders fire on the new
  store without anyone opening their Session.
* :func:`import_file`: a first pass validates the whole file (nothing written); a second pass
  streams it into :meth:`~dsh_host.persistence.ImportBackend.import_sessions`, one transaction,
  and refuses (writing nothing) if the file changed between the passes.
* :func:`migrate` streams one store's snapshot into another in one transaction, then
  :func:`verify` compares the count of Sessions and events and each Session's
  :func:`log_digest` between the two.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final, Self, cast

from dsh_hookspecs import Event, EventRejectedError, JSONValue, SessionHeader, SessionNotLiveError

from .. import _json, _records
from .._names import session_name
from .._overlay import Overlay
from ..core import LiveHost, LiveSession
from ..persistence import (
    ExportBackend,
    ImportBackend,
    ImportCounts,
    ImportedSession,
    MemoryBackend,
    StorageError,
    StoredSession,
    UnstorableError,
    Write,
    check_storable,
)

#: The ``format`` of line 1 of every export.
FORMAT: Final = "dsh-export"
#: The version of the format this dsh writes and reads.
VERSION: Final = 1
#: The longest line the reader takes (a line this long is refused without being held whole).
MAX_LINE_BYTES: Final = 64 * 1024 * 1024
#: Bytes read from the file at a time.
CHUNK_BYTES: Final = 1024 * 1024

_HEAD_KEYS = frozenset({"format", "version", "exportedAt"})
_SESSION_KEYS = frozenset({"session", "events"})
_END_KEYS = frozenset({"end", "sessions", "events"})


class ExportFileError(ValueError):
    """A file ``dsh import`` refuses: ``str()`` is ``FILE line N: reason``."""

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        super().__init__(f"{path} line {line}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class VerifyError(StorageError):
    """``dsh migrate``'s check found the target not holding what the source holds."""


@dataclass(frozen=True, slots=True)
class Totals:
    """How many Sessions and events were written, read or compared."""

    sessions: int = 0
    events: int = 0


# -- writing ------------------------------------------------------------------------------------


def _line(value: JSONValue) -> bytes:
    return _json.dumps(value).encode("utf-8") + b"\n"


def head_line(now: datetime | None = None) -> bytes:
    """Line 1 of an export written at ``now`` (default: the current instant), UTC."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return _line({"format": FORMAT, "version": VERSION, "exportedAt": stamp})


def session_lines(stored: StoredSession) -> Iterator[bytes]:
    """The lines of one Session: its header line, then one line per event (each ending in a
    newline), exactly as an export holds them."""
    header: JSONValue = _records.stored_header(stored.header)
    yield _line({"session": header, "events": len(stored.events)})
    for event in stored.events:
        yield _line({"event": cast(JSONValue, event.to_json())})


def log_digest(stored: StoredSession) -> str:
    """The sha256 (hex) of a Session's :func:`session_lines`: equal logs, equal digests."""
    digest = hashlib.sha256()
    for line in session_lines(stored):
        digest.update(line)
    return digest.hexdigest()


def end_line(totals: Totals) -> bytes:
    """The last line of an export of ``totals``."""
    return _line({"end": True, "sessions": totals.sessions, "events": totals.events})


async def export(
    backend: ExportBackend,
    out: BinaryIO,
    ids: Sequence[str] | None = None,
    *,
    now: datetime | None = None,
) -> Totals:
    """Write the Sessions of ``backend`` (only those of ``ids``) to ``out`` in the export format,
    from one snapshot, one Session in memory at a time; what was written."""
    sessions = events = 0
    async with aclosing(backend.export_sessions(ids)) as stream:
        stored = await anext(stream, None)  # a refusal (an unknown id) comes before line 1
        out.write(head_line(now))
        while stored is not None:
            out.writelines(session_lines(stored))
            sessions += 1
            events += len(stored.events)
            stored = await anext(stream, None)
    totals = Totals(sessions, events)
    out.write(end_line(totals))
    return totals


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReadSession:
    """One Session of a file and the number of its header line (its events follow it)."""

    stored: StoredSession
    line: int

    def event_line(self, index: int) -> int:
        return self.line + 1 + index


class ExportReader:
    """A strict, streaming reader of one export file.

    :meth:`sessions` yields each Session once it read all of it; it raises
    :class:`ExportFileError` for an empty file, a line 1 that does not name this format and
    version, a line that is not JSON or not the line expected there, a header or event the
    host's strict codec (or storage) refuses, an event whose ``seq`` is not the next, a count
    that does not match, Sessions out of order (or one twice), a missing end line (a truncated
    file), anything after the end line and a line longer than :data:`MAX_LINE_BYTES`. Once it
    finished, :attr:`totals` and :attr:`sha256` (of the file's bytes) are set.
    """

    def __init__(self, path: Path, *, max_line: int = MAX_LINE_BYTES) -> None:
        self.path = path
        self.max_line = max_line
        self.totals: Totals | None = None
        self.sha256: str | None = None

    def _fail(self, line: int, reason: str) -> ExportFileError:
        return ExportFileError(self.path, line, reason)

    def _lines(self, file: BinaryIO, digest: hashlib._Hash) -> Iterator[tuple[int, bytes]]:
        """``(number, bytes)`` of each line without its newline; a last line without one is a
        line too. A line longer than ``max_line`` is refused before it is held whole."""
        held = bytearray()
        number = 0
        while chunk := file.read(CHUNK_BYTES):
            digest.update(chunk)
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                if len(held) + end - start > self.max_line:
                    raise self._fail(number + 1, self._too_long())
                number += 1
                if held:
                    held += chunk[start:end]
                    yield number, bytes(held)
                    held.clear()
                else:
                    yield number, chunk[start:end]
                start = end + 1
            if len(held) + len(chunk) - start > self.max_line:
                raise self._fail(number + 1, self._too_long())
            held += chunk[start:]
        if held:
            yield number + 1, bytes(held)

    def _too_long(self) -> str:
        return f"the line is longer than {self.max_line:,} bytes, the longest a dsh export holds"

    def _object(self, number: int, raw: bytes) -> dict[str, JSONValue]:
        try:
            value = _json.loads(raw)
        except _json.JSONError as exc:
            raise self._fail(number, f"not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise self._fail(number, "a line of a dsh export must be a JSON object")
        return value

    def _head(self, number: int, raw: bytes) -> None:
        try:
            head = self._object(number, raw)
        except ExportFileError as exc:
            raise self._fail(number, f"not a dsh export ({exc.reason})") from None
        if head.get("format") != FORMAT:
            raise self._fail(number, f'not a dsh export: line 1 must name "format": "{FORMAT}"')
        version = head.get("version")
        if version != VERSION or type(version) is not int:
            raise self._fail(
                number,
                f"format version {_json.dumps(version)} is not supported: "
                f"this dsh reads version {VERSION}",
            )
        if head.keys() != _HEAD_KEYS or not isinstance(head.get("exportedAt"), str):
            raise self._fail(
                number, 'line 1 must be {"format", "version", "exportedAt": text}, nothing else'
            )

    def sessions(self) -> Iterator[ReadSession]:
        """Every Session of the file, in order, each checked whole (see the class)."""
        try:
            file = self.path.open("rb")
        except OSError as exc:
            raise ExportFileError(self.path, 1, f"cannot be read: {exc.strerror or exc}") from None
        with file:
            yield from self._read(file)

    def _read(self, file: BinaryIO) -> Iterator[ReadSession]:
        digest = hashlib.sha256()
        lines = self._lines(file, digest)
        first = next(lines, None)
        if first is None:
            raise self._fail(1, "the file is empty, not a dsh export")
        self._head(*first)
        sessions = events = 0
        previous: tuple[int, str] | None = None
        last = 1
        for number, raw in lines:
            last = number
            obj = self._object(number, raw)
            if obj.keys() == _END_KEYS and obj.get("end") is True:
                self._end(number, obj, Totals(sessions, events))
                for after, _ in lines:
                    raise self._fail(after, "data after the end line")
                self.totals = Totals(sessions, events)
                self.sha256 = digest.hexdigest()
                return
            header, count = self._session_line(number, obj)
            order = (header.created_at, header.id)
            if previous is not None and order <= previous:
                raise self._fail(
                    number,
                    f"session {header.id} is out of order (or appears twice): sessions are "
                    "sorted by createdAt, then id",
                )
            previous = order
            log = self._events(lines, number, header, count)
            last = number + len(log)
            item = ReadSession(StoredSession(header=header, events=tuple(log)), number)
            self._storable(item)
            sessions += 1  # noqa: SIM113 - one per Session, not per line
            events += len(log)
            yield item
        raise self._fail(last + 1, "the file ends without its end line: it is truncated")

    def _session_line(self, number: int, obj: dict[str, JSONValue]) -> tuple[SessionHeader, int]:
        if obj.keys() != _SESSION_KEYS:
            raise self._fail(
                number, 'expected a Session line {"session", "events"} or the end line'
            )
        try:
            header = _records.header_from_json(obj["session"])
        except _records.RecordError as exc:
            raise self._fail(number, f"the Session header is invalid: {exc}") from None
        count = obj["events"]
        if type(count) is not int or count < 0:
            raise self._fail(number, f"session {header.id}'s events must be a count")
        if header.owned_from > count:
            raise self._fail(
                number,
                f"session {header.id} has seedLength {header.owned_from} but {count} events",
            )
        return header, count

    def _events(
        self, lines: Iterator[tuple[int, bytes]], at: int, header: SessionHeader, count: int
    ) -> list[Event]:
        log: list[Event] = []
        for index in range(count):
            found = next(lines, None)
            if found is None:
                raise self._fail(
                    at + index + 1,
                    f"the file ends inside session {header.id} ({index} of its {count} events): "
                    "it is truncated",
                )
            number, raw = found
            obj = self._object(number, raw)
            if obj.keys() != {"event"}:
                raise self._fail(
                    number,
                    f"session {header.id} declares {count} events but holds {index} "
                    f'(expected an event line {{"event": ...}})',
                )
            try:
                event = _records.event_from_json(obj["event"])
            except _records.RecordError as exc:
                raise self._fail(number, f"the event is invalid: {exc}") from None
            if event.seq != index:
                raise self._fail(
                    number, f"event seq {event.seq} of session {header.id} where {index} belongs"
                )
            log.append(event)
        return log

    def _storable(self, item: ReadSession) -> None:
        stored = item.stored
        try:
            check_storable(stored.header, stored.events)
        except UnstorableError as exc:
            line = item.line if exc.index is None else item.event_line(exc.index)
            raise self._fail(line, f"cannot be stored: {exc}") from None

    def _end(self, number: int, obj: dict[str, JSONValue], held: Totals) -> None:
        said = (obj.get("sessions"), obj.get("events"))
        if said != (held.sessions, held.events) or not all(type(n) is int for n in said):
            raise self._fail(
                number,
                f"the end line counts {_json.dumps(said[0])} sessions and "
                f"{_json.dumps(said[1])} events, but the file holds {held.sessions} and "
                f"{held.events}",
            )


# -- plugins: validation and derived state -------------------------------------------------------


class _LogView:
    """A read-only Session for ``dsh_event_validate``: the imported header and the events
    before the candidate. It is no host's live Session, so plugins file nothing for it."""

    __slots__ = ("__weakref__", "_events", "_header")

    def __init__(self, header: SessionHeader, seed: Sequence[Event]) -> None:
        self._header = header
        self._events = list(seed)

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def events(self) -> Sequence[Event]:
        return self._events

    def append(self, type: str, data: JSONValue) -> Event:  # noqa: A002 - wire name
        del type, data
        raise SessionNotLiveError(f"session {self.id} is being imported, not live")

    def admit(self, event: Event) -> None:
        self._events.append(event)


class Plugins(AbstractAsyncContextManager["Plugins"]):
    """The overlay's plugins on a host of their own over memory (never the target store):
    :meth:`validate` and :meth:`derive`. Use as ``async with``; cold delivery stays paused."""

    def __init__(self, overlay: Overlay) -> None:
        self._memory = MemoryBackend()
        self.host = LiveHost(backend=self._memory, model="none", overlay=overlay)
        self._paused: AbstractAsyncContextManager[None] | None = None

    async def __aenter__(self) -> Self:
        try:
            await self.host.start()
            self._paused = self.host.wakeups.paused()
            await self._paused.__aenter__()
        except BaseException:
            await self.host.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._paused is not None:
                await self._paused.__aexit__(None, None, None)
        finally:
            await self.host.close()

    def validate(self, item: ReadSession, path: Path) -> None:
        """Run each event the Session owns (from ``seedLength``: the seed is its parent's,
        validated there) through every plugin's ``dsh_event_validate``, in order, each seeing
        the log before it, as an append would; a refusal is an :class:`ExportFileError` at that
        event's line."""
        stored = item.stored
        owned = stored.header.owned_from
        view = _LogView(stored.header, stored.events[:owned])
        session = cast(LiveSession, view)  # what the hook needs of it: id, header, events
        for event in stored.events[owned:]:
            try:
                self.host.plugins.event_validate(session, event)
            except EventRejectedError as exc:
                raise ExportFileError(path, item.event_line(event.seq), str(exc)) from None
            view.admit(event)

    async def derive(self, stored: StoredSession) -> ImportedSession:
        """``stored`` with the wake entries and board rows the plugins file and post for its
        log when it opens (``dsh reindex``'s rebuild, on memory), and its name. The log itself
        is returned unchanged."""
        sid = stored.header.id
        await self._memory.append(Write(sid, 0, stored.events, stored.header))
        try:
            session = await self.host.sessions.rederive_wakes(sid)
            try:
                await self.host.sessions.flush(session)
            finally:
                self.host.sessions.detach(session)
            derived = await self._memory.load(sid)
        finally:
            await self._memory.delete(sid)
        assert derived is not None
        return ImportedSession(
            StoredSession(
                header=stored.header,
                events=stored.events,
                wakes=dict(derived.wakes),
                board=dict(derived.board),
            ),
            name=session_name(stored.events),
        )


# -- import and migrate ------------------------------------------------------------------------


def check_file(path: Path, plugins: Plugins) -> ExportReader:
    """The first pass of an import: read all of ``path`` strictly and validate every Session
    with the plugins; nothing is written. Raises :class:`ExportFileError`; else the finished
    reader (its :attr:`~ExportReader.totals` and :attr:`~ExportReader.sha256`)."""
    reader = ExportReader(path)
    for item in reader.sessions():
        plugins.validate(item, path)
    return reader


async def import_file(path: Path, backend: ImportBackend, plugins: Plugins) -> ImportCounts:
    """``dsh import``: validate all of ``path`` (:func:`check_file`), then store it in one
    transaction with the derived state of each Session; all or nothing."""
    first = check_file(path, plugins)

    async def stream() -> AsyncIterator[ImportedSession]:
        second = ExportReader(path)
        for item in second.sessions():
            yield await plugins.derive(item.stored)
        if second.sha256 != first.sha256:
            raise ExportFileError(
                path, 1, "the file changed while it was imported; nothing was imported"
            )

    return await backend.import_sessions(stream())


@dataclass(frozen=True, slots=True)
class Migration:
    """What :func:`migrate` did and checked."""

    counts: ImportCounts
    verified: Totals


async def migrate(
    source: ExportBackend, target: ImportBackend, plugins: Plugins, check: ExportBackend
) -> Migration:
    """``dsh migrate``: stream every Session of ``source`` (one snapshot) into ``target`` in
    one transaction with its derived state, then :func:`verify` ``source`` against ``check``
    (the target, read back)."""

    async def stream() -> AsyncIterator[ImportedSession]:
        async with aclosing(source.export_sessions()) as sessions:
            async for stored in sessions:
                yield await plugins.derive(stored)

    counts = await target.import_sessions(stream())
    return Migration(counts, await verify(source, check))


def _order(stored: StoredSession) -> tuple[int, str]:
    return stored.header.created_at, stored.header.id


async def verify(source: ExportBackend, target: ExportBackend) -> Totals:
    """Compare every Session of ``source`` with the same one in ``target`` (which may hold
    more): present, with the same :func:`log_digest`. Both are read in export order, side by
    side, so memory holds two Sessions. Raises :class:`VerifyError`; else the totals compared."""
    sessions = events = 0
    async with (
        aclosing(source.export_sessions()) as mine,
        aclosing(target.export_sessions()) as theirs,
    ):
        found = await anext(theirs, None)
        async for stored in mine:
            while found is not None and _order(found) < _order(stored):
                found = await anext(theirs, None)
            sid = stored.header.id
            if found is None or found.header.id != sid:
                raise VerifyError(f"verification failed: session {sid} is missing from the target")
            if log_digest(found) != log_digest(stored):
                raise VerifyError(
                    f"verification failed: session {sid}'s log differs in the target "
                    f"(sha256 {log_digest(found)[:12]}... against {log_digest(stored)[:12]}...)"
                )
            sessions += 1
            events += len(stored.events)
            found = await anext(theirs, None)
    return Totals(sessions, events)
