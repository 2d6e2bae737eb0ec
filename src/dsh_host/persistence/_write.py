"""One durable write as one value: :class:`Write`, and the checks every backend runs on it.

A :class:`Write` is everything one atomic :meth:`~._backend.Backend.append` stores: a Session's
new events (and its header, when the write creates it), its wake entries, board rows, name and
outbox changes. It checks its own shape when it is made and keeps the form a backend stores
(:attr:`Write.encoded`: each text as strict JSON, each change checked, sorted where the order
does not matter), so a malformed write raises ``ValueError`` where it is built and never reaches
a store. Conflicts with what is stored (the position, an id that exists) are the backend's to
decide (:func:`~._backend.check_position`).

A new kind of row in a write is a field here, its check and encoded form here, and each
backend's encoder (:mod:`._writes` and the SQL of :mod:`.sqlite` and :mod:`.postgres`); the
callers that do not use it do not change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from dsh_hookspecs import (
    BOARD_DATA_MAX_BYTES,
    BOARD_KEY_MAX_CHARS,
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    BoardEntry,
    Event,
    JSONValue,
    SessionHeader,
)

from .. import _json, _records
from ._outbox import OutboxChange, check_notice, check_notice_key, encode_notice

__all__ = [
    "BOARD_KIND",
    "INT64_MAX",
    "INT64_MIN",
    "NO_POSTS",
    "NO_WAKES",
    "EncodedAppend",
    "EncodedNotice",
    "EncodedPost",
    "Write",
    "check_board_post",
    "check_int64",
    "check_outbox",
    "check_wake_instant",
]

#: The wake entries of a batch that changes none (the default of :attr:`Write.wakes`).
NO_WAKES: Final[Mapping[str, int | None]] = MappingProxyType({})

#: The board changes of a batch that changes none (the default of :attr:`Write.board`).
NO_POSTS: Final[Mapping[tuple[str, str], BoardEntry | None]] = MappingProxyType({})


#: The range of a stored integer (SQLite's and PostgreSQL's BIGINT).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class EncodedAppend:
    """A :class:`Write` in the form a backend stores it (:attr:`Write.encoded`)."""

    #: The header in stored form (absent ``delegationDepth`` is 0), or ``None``.
    header: SessionHeader | None
    #: ``header`` as strict JSON text.
    header_json: str | None
    #: Each event's ``data`` as strict JSON text.
    data_json: tuple[str, ...]
    #: The checked wake entries of the batch, sorted by plugin (``None`` removes one).
    wakes: tuple[tuple[str, int | None], ...] = ()
    #: The checked board changes of the batch, sorted by ``(plugin, key)``.
    board: tuple[EncodedPost, ...] = ()
    #: The Session's new name, or ``None`` (unchanged).
    name: str | None = None
    #: The checked outbox changes of the batch, in their order.
    outbox: tuple[EncodedNotice, ...] = ()


@dataclass(frozen=True, slots=True)
class EncodedNotice:
    """One outbox change of a :class:`Write`, checked and encoded."""

    plugin: str
    key: str
    #: The notice as :func:`~._outbox.encode_notice` stores it, or ``None``: a withdrawal.
    notice_json: str | None
    #: The distinct channels to file it on (empty for a withdrawal).
    channels: tuple[str, ...]
    #: When it is first due (0 for a withdrawal).
    due_ms: int


@dataclass(frozen=True, slots=True)
class EncodedPost:
    """One board change of a :class:`Write`, checked and encoded."""

    plugin: str
    key: str
    #: The checked entry (its ``data`` canonical), or ``None``: the row is removed.
    entry: BoardEntry | None
    #: ``entry.data`` as strict JSON text (``None`` with ``entry``).
    data_json: str | None


def _storable_text(value: JSONValue, what: str) -> str:
    text = _json.dumps(value)
    if not text.isascii():  # ASCII is always valid UTF-8; only the rest can hold a lone surrogate
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _json.JSONError(f"{what} is not encodable as UTF-8: {exc.reason}") from None
    return text


def check_int64(value: int, what: str) -> None:
    if not INT64_MIN <= value <= INT64_MAX:
        raise _records.RecordError(f"{what} {value} does not fit in 64 bits")


def check_wake_instant(at_ms: object) -> int:
    """``at_ms`` when it is an integer (not a bool) in ``[WAKE_MIN_MS, WAKE_MAX_MS]``, else
    ``ValueError`` naming the range."""
    if type(at_ms) is not int or not WAKE_MIN_MS <= at_ms <= WAKE_MAX_MS:
        raise ValueError(
            f"a wake instant must be an integer of epoch milliseconds in "
            f"[{WAKE_MIN_MS}, {WAKE_MAX_MS}], got {at_ms!r}"
        )
    return at_ms


BOARD_KIND = re.compile(r"[a-z0-9_]{1,32}")


def check_board_post(key: object, entry: object) -> BoardEntry | None:
    """``entry`` when ``key`` and it make a valid board post (:meth:`SessionStore.post
    <dsh_hookspecs.SessionStore.post>`), else ``ValueError`` saying what is wrong. ``entry``
    comes back with its ``data`` canonical (a copy nobody else holds)."""
    return _encoded_post(key, entry)[0]


def _encoded_post(key: object, entry: object) -> tuple[BoardEntry | None, str | None]:
    """:func:`check_board_post`'s entry, with its data as the JSON text a backend stores."""
    if type(key) is not str or not 0 < len(key) <= BOARD_KEY_MAX_CHARS:
        raise ValueError(
            f"a board key must be a string of 1 to {BOARD_KEY_MAX_CHARS} characters, got {key!r}"
        )
    if entry is None:
        return None, None
    if not isinstance(entry, BoardEntry):
        raise ValueError(f"a board entry must be a BoardEntry or None, got {entry!r}")  # noqa: TRY004
    if type(entry.kind) is not str or not BOARD_KIND.fullmatch(entry.kind):
        raise ValueError(
            f"a board entry's kind must be 1 to 32 characters of a-z, 0-9 and _, got {entry.kind!r}"
        )
    check_wake_instant(entry.at_ms)
    try:
        data = _json.canonical(entry.data)
    except _json.JSONError as exc:
        raise ValueError(f"a board entry's data must be JSON: {exc}") from None
    text = _json.dumps(data)  # canonical: UTF-8 encodable
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > BOARD_DATA_MAX_BYTES:
        raise ValueError(
            f"a board entry's data must be at most {BOARD_DATA_MAX_BYTES} bytes of JSON, got {size}"
        )
    return BoardEntry(kind=entry.kind, at_ms=entry.at_ms, data=data), text


def _checked_wakes(wakes: Mapping[str, int | None]) -> tuple[tuple[str, int | None], ...]:
    checked: list[tuple[str, int | None]] = []
    for plugin, at_ms in wakes.items():
        if type(plugin) is not str or not plugin:
            raise ValueError(f"a wake entry needs a non-empty plugin name, got {plugin!r}")
        checked.append((plugin, None if at_ms is None else check_wake_instant(at_ms)))
    return tuple(sorted(checked))


def _checked_board(
    board: Mapping[tuple[str, str], BoardEntry | None],
) -> tuple[EncodedPost, ...]:
    checked: list[EncodedPost] = []
    for target, entry in board.items():
        if type(target) is not tuple or len(target) != 2:
            raise ValueError(f"a board change needs a (plugin, key) pair, got {target!r}")
        plugin, key = target
        if type(plugin) is not str or not plugin:
            raise ValueError(f"a board change needs a non-empty plugin name, got {plugin!r}")
        post, data_json = _encoded_post(key, entry)
        checked.append(EncodedPost(plugin, key, post, data_json))
    return tuple(sorted(checked, key=lambda p: (p.plugin, p.key)))


def _checked_name(name: object) -> str:
    if type(name) is not str or not name:
        raise ValueError(f"a stored name must be a non-empty string, got {name!r}")
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"a stored name is not encodable as UTF-8: {exc.reason}") from None
    return name


def _checked_change(change: object) -> EncodedNotice:
    if not isinstance(change, OutboxChange):
        raise ValueError(  # noqa: TRY004 - a malformed request is a ValueError here
            f"an outbox change must be an OutboxChange, got {type(change).__name__}"
        )
    plugin = change.plugin
    if type(plugin) is not str or not plugin or "\x00" in plugin:
        raise ValueError(f"an outbox change needs a non-empty plugin name, got {plugin!r}")
    key = check_notice_key(change.key)
    if change.notice is None:
        return EncodedNotice(plugin, key, None, (), 0)
    notice = check_notice(change.notice)
    channels = change.channels
    if type(channels) is not tuple or not all(
        type(channel) is str and channel and "\x00" not in channel for channel in channels
    ):
        raise ValueError(f"an outbox change's channels must be non-empty names, got {channels!r}")
    if len(set(channels)) != len(channels):
        raise ValueError(f"an outbox change's channels must be distinct, got {channels!r}")
    if type(change.due_ms) is not int or not WAKE_MIN_MS <= change.due_ms <= WAKE_MAX_MS:
        raise ValueError(f"an outbox change's due_ms must be a wall ms, got {change.due_ms!r}")
    text = encode_notice(notice)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"a notice is not encodable as UTF-8: {exc.reason}") from None
    return EncodedNotice(plugin, key, text, channels, change.due_ms)


def check_outbox(outbox: object) -> tuple[EncodedNotice, ...]:
    """The outbox changes of an append, checked and encoded in their order; ``ValueError``
    for a change that is not an :class:`~._outbox.OutboxChange` with a plugin name, a key
    (:func:`~._outbox.check_notice_key`) and, unless it withdraws, a valid notice
    (:func:`~._outbox.check_notice`), distinct non-empty channel names and a ``due_ms`` in
    ``[WAKE_MIN_MS, WAKE_MAX_MS]``."""
    if isinstance(outbox, str | bytes) or not isinstance(outbox, Sequence):
        raise ValueError(f"outbox must be a sequence of OutboxChange, got {outbox!r}")  # noqa: TRY004
    return tuple(_checked_change(change) for change in outbox)


@dataclass(frozen=True, slots=True)
class Write:
    """One atomic append: everything a backend stores in one durable transaction.

    ``events`` (whose seqs are ``start, start+1, ...``) are appended to ``session_id``'s log.
    With ``header``, the write creates the Session (``start`` must be 0 and the id absent);
    without it, the Session must exist and its stored length must equal ``start``. Otherwise the
    backend raises :class:`~._backend.StorageConflictError` and stores nothing.

    In the same transaction, all of it or none: ``wakes`` (plugin -> epoch ms, or ``None`` to
    remove that plugin's entry) changes the Session's wake entries; ``board`` (``(plugin, key)``
    -> :class:`~dsh_hookspecs.BoardEntry`, or ``None`` to remove that row; each checked by
    :func:`check_board_post`) its board rows; ``name``, when not ``None``, becomes its stored
    name (a name is never cleared); and each of ``outbox`` (an
    :class:`~._outbox.OutboxChange`, checked by :func:`check_outbox`), in order, files one
    ``pending`` entry per channel whose ``(session, plugin, key, channel)`` is not stored yet (a
    stored one, in any state, is left as it is; ``attempts`` 0, ``next_ms`` and ``updated_ms``
    its ``due_ms``) or, with ``notice`` ``None``, turns the ``pending`` entries of its
    ``(plugin, key)`` ``withdrawn``. A write with no events and only wakes, board changes, a name
    or outbox changes is valid (it still checks ``start``).

    Made, it has checked its shape: a malformed write raises ``ValueError`` (a
    :class:`~dsh_host._records.RecordError` for a header or event that the strict codecs would
    refuse on load, a :class:`~dsh_host._json.JSONError` for data that is not strict,
    UTF-8-encodable JSON). Its fields are then immutable copies of what it was given, and
    :attr:`encoded` is the form a backend stores.
    """

    session_id: str
    start: int
    events: Sequence[Event] = ()
    header: SessionHeader | None = None
    wakes: Mapping[str, int | None] = field(default_factory=lambda: NO_WAKES)
    board: Mapping[tuple[str, str], BoardEntry | None] = field(
        default_factory=lambda: NO_POSTS, kw_only=True
    )
    name: str | None = field(default=None, kw_only=True)
    outbox: Sequence[OutboxChange] = field(default=(), kw_only=True)
    #: The write as it is stored (see :class:`EncodedAppend`).
    encoded: EncodedAppend = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        encoded = _encode(self)
        set_field = object.__setattr__  # the value is frozen once made
        set_field(self, "events", tuple(self.events))
        set_field(self, "wakes", MappingProxyType(dict(self.wakes)) if self.wakes else NO_WAKES)
        set_field(self, "board", MappingProxyType(dict(self.board)) if self.board else NO_POSTS)
        set_field(self, "outbox", tuple(self.outbox))
        set_field(self, "encoded", encoded)

    @property
    def files_notices(self) -> bool:
        """The write files at least one notice (not only withdrawals): the outbox's sender has
        something new to look for once it is stored."""
        return any(change.notice is not None for change in self.outbox)


def _encode(write: Write) -> EncodedAppend:
    session_id, start, events, header = write.session_id, write.start, write.events, write.header
    wakes, board, name, outbox = write.wakes, write.board, write.name, write.outbox
    if type(session_id) is not str or not session_id:
        raise ValueError("session id must be a non-empty string")
    if type(start) is not int or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    data_json: list[str] = []
    for offset, event in enumerate(events):
        if type(event.seq) is not int or event.seq != start + offset:
            raise ValueError(
                f"event seqs must run from {start} contiguously; "
                f"position {offset} has seq {event.seq!r}"
            )
        # The envelope rules of _records.event_from_json, checked in place (hot path).
        if type(event.type) is not str or not event.type:
            raise _records.RecordError("event.type must be a non-empty string")
        if type(event.time) is not int:
            raise _records.RecordError("event.time must be an integer")
        check_int64(event.seq, "event.seq")
        check_int64(event.time, "event.time")
        data_json.append(_storable_text(event.data, f"data of event {event.seq}"))
    checked_wakes = _checked_wakes(wakes) if wakes else ()
    checked_board = _checked_board(board) if board else ()
    checked_name = None if name is None else _checked_name(name)
    checked_outbox = check_outbox(outbox) if outbox else ()
    if header is None:
        return EncodedAppend(
            header=None,
            header_json=None,
            data_json=tuple(data_json),
            wakes=checked_wakes,
            board=checked_board,
            name=checked_name,
            outbox=checked_outbox,
        )
    if header.id != session_id:
        raise ValueError(f"header id {header.id!r} does not match session id {session_id!r}")
    stored = _records.stored_header(header)
    checked = _records.header_from_json(stored)
    check_int64(checked.created_at, "header.createdAt")
    return EncodedAppend(
        header=checked,
        header_json=_storable_text(stored, "the header"),
        data_json=tuple(data_json),
        wakes=checked_wakes,
        board=checked_board,
        name=checked_name,
        outbox=checked_outbox,
    )
