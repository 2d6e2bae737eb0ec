"""The host's own durable records: strict codecs for the Session header and the event envelope,
and the stored-record types every backend returns.

The wire/disk form is camelCase JSON (docs/design.md section 3); the in-memory form is
:class:`dsh_hookspecs.SessionHeader` / :class:`dsh_hookspecs.Event`. This floor sits below both
storage (``dsh_host.persistence``) and the live Sessions, which both use these types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dsh_hookspecs import BoardEntry, Event, JSONValue, SessionHeader

from . import _json

#: Format version of the Session header this host writes.
HEADER_VERSION = 1

_HEADER_KEYS = frozenset(
    {
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "seedLength",
        "origin",
        "delegationDepth",
    }
)
_EVENT_KEYS = frozenset({"seq", "type", "time", "data"})


class RecordError(ValueError):
    """A stored or received header/event that does not have the exact shape."""


def _is_int(value: object) -> bool:
    return type(value) is int


def _opt_str(obj: Mapping[str, JSONValue], key: str) -> str | None:
    value = obj.get(key)
    if value is None and key not in obj:
        return None
    if not isinstance(value, str):
        raise RecordError(f"header.{key} must be a string")
    return value


def _opt_int(obj: Mapping[str, JSONValue], key: str) -> int | None:
    if key not in obj:
        return None
    value = obj[key]
    if not _is_int(value) or value < 0:  # type: ignore[operator]
        raise RecordError(f"header.{key} must be a non-negative integer")
    return value  # type: ignore[return-value]


def header_from_json(obj: JSONValue) -> SessionHeader:
    if not isinstance(obj, dict):
        raise RecordError("header must be an object")
    extra = obj.keys() - _HEADER_KEYS
    if extra:
        raise RecordError(f"header has unknown keys: {sorted(extra)}")
    version, sid, created = obj.get("version"), obj.get("id"), obj.get("createdAt")
    if not _is_int(version):
        raise RecordError("header.version must be an integer")
    if not isinstance(sid, str) or not sid:
        raise RecordError("header.id must be a non-empty string")
    if not _is_int(created):
        raise RecordError("header.createdAt must be an integer")
    origin = _opt_str(obj, "origin")
    if origin not in (None, "subagent"):
        raise RecordError("header.origin must be 'subagent'")
    return SessionHeader(
        version=version,  # type: ignore[arg-type]
        id=sid,
        created_at=created,  # type: ignore[arg-type]
        cwd=_opt_str(obj, "cwd"),
        parent_session=_opt_str(obj, "parentSession"),
        seed_length=_opt_int(obj, "seedLength"),
        origin=origin,  # type: ignore[arg-type]
        delegation_depth=_opt_int(obj, "delegationDepth"),
    )


def stored_header(header: SessionHeader) -> dict[str, JSONValue]:
    """The header as persistence writes it: an absent ``delegationDepth`` becomes 0."""
    out = header.to_json()
    out.setdefault("delegationDepth", 0)
    return out


def headers_identical(a: SessionHeader, b: SessionHeader) -> bool:
    """Identity of two headers, treating an absent ``delegationDepth`` as 0."""
    return _json.identical(stored_header(a), stored_header(b))


def event_from_json(obj: JSONValue) -> Event:
    if not isinstance(obj, dict) or obj.keys() != _EVENT_KEYS:
        raise RecordError("event must be an object with exactly seq, type, time, data")
    seq, etype, time = obj["seq"], obj["type"], obj["time"]
    if not _is_int(seq) or seq < 0:  # type: ignore[operator]
        raise RecordError("event.seq must be a non-negative integer")
    if not isinstance(etype, str) or not etype:
        raise RecordError("event.type must be a non-empty string")
    if not _is_int(time):
        raise RecordError("event.time must be an integer")
    return Event(seq=seq, type=etype, time=time, data=obj["data"])  # type: ignore[arg-type]


def events_identical(a: Event, b: Event) -> bool:
    return (
        a.seq == b.seq and a.type == b.type and a.time == b.time and _json.identical(a.data, b.data)
    )


@dataclass(frozen=True, slots=True)
class StoredSession:
    """What :meth:`Backend.load` returns: the stored header, every stored event, and the
    Session's entries in the durable wake index (plugin name -> epoch milliseconds)."""

    header: SessionHeader
    events: tuple[Event, ...]
    #: The standing wake request of each plugin, stored with the events that caused it.
    wakes: dict[str, int] = field(default_factory=dict)
    #: The Session's board rows by ``(plugin, key)``, stored with the events that caused them.
    board: dict[tuple[str, str], BoardEntry] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """One row of :meth:`Backend.list_sessions`."""

    header: SessionHeader
    length: int
    #: The Session's stored name (stored with the batch that changed it), ``None`` until it
    #: has one.
    name: str | None = None


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One row of :meth:`Backend.board_page`: a board entry and the Session that posted it."""

    session_id: str
    #: The Session's stored name, ``None`` until it has one.
    session_name: str | None
    plugin: str
    key: str
    entry: BoardEntry


@dataclass(frozen=True, slots=True)
class DamagedSummary:
    """A stored Session row that cannot be decoded: listed as damaged, never guessed at."""

    id: str
    #: A plain, one-line reason.
    error: str
    #: The creation time when it can still be read, else ``None``.
    created_at: int | None


class SessionListing(list[StoredSummary]):
    """What a backend that can meet undecodable rows returns from ``list_sessions``.

    It is the list of decodable rows (so it is used as any ``Sequence[StoredSummary]``), plus
    :attr:`damaged`: the rows it could not decode, in the same order. One damaged row never
    hides the others; read it with :func:`damaged_sessions`.
    """

    def __init__(
        self, summaries: Sequence[StoredSummary] = (), damaged: Sequence[DamagedSummary] = ()
    ) -> None:
        super().__init__(summaries)
        self.damaged: tuple[DamagedSummary, ...] = tuple(damaged)


def damaged_sessions(listing: Sequence[StoredSummary]) -> tuple[DamagedSummary, ...]:
    """The damaged rows of a ``list_sessions`` answer (none for a backend that has none)."""
    return listing.damaged if isinstance(listing, SessionListing) else ()
