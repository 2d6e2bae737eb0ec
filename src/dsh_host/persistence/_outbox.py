"""The outbox: notices waiting to be sent outside the page, one entry per channel.

A plugin files a :class:`~dsh_hookspecs.Notice` with :meth:`~dsh_hookspecs.SessionStore.notify`;
the persistence coordinator turns it into one :class:`OutboxChange` (with the channels configured
at that instant) and hands it to :meth:`OutboxBackend.append` together with the events that
caused it, in one transaction. The send worker then claims due entries, sends them and settles
them, from any host sharing the storage, without loading the Session.

An entry is identified by ``(session_id, plugin, key, channel)``; :func:`idempotency_key` is the
string a receiver sees. Its states (:data:`STATUSES`):

* ``pending``: waiting for ``next_ms`` (first attempt, or a retry after a transient failure);
* ``sending``: claimed by a host until ``claim_until_ms``; the request may have left. A claim
  that expires unsettled (its host died) is claimed again with :attr:`OutboxClaim.ambiguous`
  set: the worker resends it only on a channel whose receiver drops a repeat by key;
* ``delivered``: the receiver acknowledged it (final);
* ``failed``: refused, given up after the last attempt, or superseded (final; ``error`` says
  why in plain words, never the channel's address);
* ``unknown``: the request may have reached the receiver and the channel cannot drop a repeat,
  so it is not sent again (final);
* ``withdrawn``: the plugin withdrew it before it was sent (final).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, TypeAlias, runtime_checkable

from dsh_hookspecs import (
    BOARD_KEY_MAX_CHARS,
    NOTICE_BODY_MAX_CHARS,
    NOTICE_DATA_MAX_BYTES,
    NOTICE_TITLE_MAX_CHARS,
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    Notice,
)

__all__ = [
    "ERROR_MAX_CHARS",
    "FINAL",
    "STATUSES",
    "OutboxBackend",
    "OutboxChange",
    "OutboxClaim",
    "OutboxRow",
    "SettleOne",
    "Settlement",
    "Status",
    "check_notice",
    "check_notice_key",
    "decode_notice",
    "encode_notice",
    "idempotency_key",
]

Status: TypeAlias = Literal["pending", "sending", "delivered", "failed", "unknown", "withdrawn"]
STATUSES: Final[tuple[Status, ...]] = (
    "pending",
    "sending",
    "delivered",
    "failed",
    "unknown",
    "withdrawn",
)
#: The states no worker leaves.
FINAL: Final[frozenset[str]] = frozenset({"delivered", "failed", "unknown", "withdrawn"})
#: The longest ``error`` stored.
ERROR_MAX_CHARS: Final = 300


@dataclass(frozen=True, slots=True)
class OutboxChange:
    """What one :meth:`~dsh_hookspecs.SessionStore.notify` asks of storage.

    With a ``notice``: insert one ``pending`` entry per channel of ``channels`` whose
    ``(session, plugin, key, channel)`` is not stored yet (a stored one, in any state, is left as
    it is), due at ``due_ms``. With ``notice`` ``None``: every ``pending`` entry of ``(session,
    plugin, key)`` becomes ``withdrawn`` (``channels`` and ``due_ms`` unused).
    """

    plugin: str
    key: str
    notice: Notice | None
    channels: tuple[str, ...] = ()
    due_ms: int = 0


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One stored outbox entry."""

    session_id: str
    plugin: str
    key: str
    channel: str
    notice: Notice
    status: Status
    attempts: int
    next_ms: int
    error: str | None
    #: Wall ms of the last change of state (the insert, a claim or a settle).
    updated_ms: int


@dataclass(frozen=True, slots=True)
class OutboxClaim:
    """An entry this host claimed to send: ``row`` as it now stands (``sending``, ``attempts``
    already counting this attempt). ``ambiguous``: it was ``sending`` under a claim that expired
    (a host died mid-send), so the receiver may already have it."""

    row: OutboxRow
    ambiguous: bool


@dataclass(frozen=True, slots=True)
class Settlement:
    """What one claimed entry came to (:meth:`OutboxBackend.settle_outbox_many`): the arguments
    of :meth:`OutboxBackend.settle_outbox`, as one value."""

    row: OutboxRow
    owner: str
    status: Status
    now_ms: int
    next_ms: int | None = None
    error: str | None = None


class _SettlesMany(Protocol):
    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]: ...


class SettleOne:
    """:meth:`OutboxBackend.settle_outbox` as a batch of one, for a backend whose
    :meth:`OutboxBackend.settle_outbox_many` does the work (every backend here)."""

    async def settle_outbox(
        self: _SettlesMany,
        row: OutboxRow,
        owner: str,
        *,
        status: Status,
        now_ms: int,
        next_ms: int | None = None,
        error: str | None = None,
    ) -> bool:
        (settled,) = await self.settle_outbox_many(
            [Settlement(row, owner, status, now_ms, next_ms, error)]
        )
        return settled


def idempotency_key(session_id: str, plugin: str, key: str, channel: str) -> str:
    """The deterministic key a receiver sees for one entry (the same on every attempt)."""
    return f"{session_id}/{plugin}/{key}/{channel}"


def check_notice(notice: object) -> Notice:
    """``notice`` if it is a valid :class:`~dsh_hookspecs.Notice`; else ``ValueError``."""
    if not isinstance(notice, Notice):
        raise ValueError(  # noqa: TRY004 - the contract answers ValueError for a bad notice
            f"a notice must be a dsh_hookspecs.Notice, got {type(notice).__name__}"
        )
    title, body = notice.title, notice.body
    if type(title) is not str or not title.strip() or len(title) > NOTICE_TITLE_MAX_CHARS:
        raise ValueError(f"a notice title must be 1 to {NOTICE_TITLE_MAX_CHARS} characters")
    if type(body) is not str or len(body) > NOTICE_BODY_MAX_CHARS:
        raise ValueError(f"a notice body must be at most {NOTICE_BODY_MAX_CHARS} characters")
    for name in ("at_ms", "not_before_ms", "expires_ms"):
        value = getattr(notice, name)
        if value is None and name != "at_ms":
            continue
        if type(value) is not int or not WAKE_MIN_MS <= value <= WAKE_MAX_MS:
            raise ValueError(f"a notice's {name} must be an integer wall ms, got {value!r}")
    data: object = notice.data
    if not isinstance(data, Mapping) or not all(
        type(k) is str and type(v) is str for k, v in data.items()
    ):
        raise ValueError("a notice's data must map strings to strings")
    if len(json.dumps(dict(data), separators=(",", ":")).encode()) > NOTICE_DATA_MAX_BYTES:
        raise ValueError(f"a notice's data must be at most {NOTICE_DATA_MAX_BYTES} bytes")
    for text in (title, body, *data.keys(), *data.values()):
        if "\x00" in text:
            raise ValueError("a notice cannot hold NUL characters")
    return notice


def check_notice_key(key: object) -> str:
    if type(key) is not str or not key or len(key) > BOARD_KEY_MAX_CHARS or "\x00" in key:
        raise ValueError(f"a notice key must be 1 to {BOARD_KEY_MAX_CHARS} characters")
    return key


def encode_notice(notice: Notice) -> str:
    """Compact JSON of ``notice``, as storage keeps it."""
    return json.dumps(
        {
            "title": notice.title,
            "body": notice.body,
            "atMs": notice.at_ms,
            "notBeforeMs": notice.not_before_ms,
            "expiresMs": notice.expires_ms,
            "data": dict(notice.data),
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_notice(text: str) -> Notice:
    """The :class:`~dsh_hookspecs.Notice` :func:`encode_notice` wrote; ``ValueError`` when
    damaged."""
    try:
        raw = json.loads(text)
        notice = Notice(
            title=raw["title"],
            body=raw["body"],
            at_ms=raw["atMs"],
            not_before_ms=raw["notBeforeMs"],
            expires_ms=raw["expiresMs"],
            data=raw["data"],
        )
    except (TypeError, KeyError, json.JSONDecodeError) as exc:
        raise ValueError(f"damaged outbox notice: {exc}") from None
    return check_notice(notice)


@runtime_checkable
class OutboxBackend(Protocol):
    """A backend that keeps the outbox (all three here).

    Its :meth:`~dsh_host.persistence.Backend.append` takes a keyword ``outbox``: a sequence of
    :class:`OutboxChange` applied in the same transaction as the events (all or nothing), and
    :meth:`~dsh_host.persistence.Backend.delete` removes the Session's entries with it.
    """

    async def claim_outbox(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> Sequence[OutboxClaim]:
        """Claim at most ``limit`` due entries for ``owner``, earliest ``next_ms`` first: those
        ``pending`` with ``next_ms <= now_ms``, and those ``sending`` whose claim expired
        (``claim_until_ms < now_ms``; :attr:`OutboxClaim.ambiguous`). Each becomes ``sending``,
        held by ``owner`` until ``claim_until_ms``, its ``attempts`` one more, in one
        transaction. Two hosts never claim the same entry under unexpired claims (PostgreSQL:
        ``FOR UPDATE SKIP LOCKED``)."""
        ...

    async def settle_outbox(
        self,
        row: OutboxRow,
        owner: str,
        *,
        status: Status,
        now_ms: int,
        next_ms: int | None = None,
        error: str | None = None,
    ) -> bool:
        """Record the outcome of ``owner``'s claim of ``row``'s entry: ``status`` (``pending``
        with ``next_ms`` for a retry, or a final state), ``error`` cut to
        :data:`ERROR_MAX_CHARS`. Fenced: ``False`` (and nothing written) unless the entry is
        still ``sending`` under ``owner``'s claim."""
        ...

    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]:
        """:meth:`settle_outbox` for each of ``settlements`` in one durable write (one
        transaction), each fenced alone; the answers in order. A settlement with bad arguments
        raises ``ValueError`` before anything is written."""
        ...

    async def outbox_of(self, session_id: str) -> Sequence[OutboxRow]:
        """Every entry of ``session_id``, oldest first (by insertion)."""
        ...

    async def earliest_outbox(self) -> int | None:
        """When the worker next has something to do: the smallest ``next_ms`` of a ``pending``
        entry and ``claim_until_ms`` of a ``sending`` one, or ``None``."""
        ...
