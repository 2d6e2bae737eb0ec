"""The PostgreSQL store's schema, its version check, and the mapping of driver errors.

The schema is created on first start, under a transaction-scoped advisory lock so that hosts
starting together on an empty database create it once. ``dsh_schema`` holds one row, the
schema version; a database written by a newer dsh (a higher version) is refused at open with a
:class:`StorageError` naming both versions, never altered.

``sessions`` carries each Session's lease (docs/always-on.md, "Several hosts on one PostgreSQL"):
``owner`` (a process's random name, ``NULL`` when free), ``lease_until`` (ms of the database clock,
:func:`dsh_now_ms`) and ``epoch`` (the fencing token, larger at every change of hands). Every write
sets ``writer`` to the epoch it was made under, and the trigger ``sessions_fenced`` refuses it
(``dsh_fenced``) unless that is the current epoch: the database itself, not the process, keeps a
host that lost a lease from writing behind the new owner. ``wakes`` is the durable wake index (one
entry per plugin per Session, written in the same transaction as its batch). ``board`` holds each
Session's board rows (read across Sessions by plugin and kind, soonest first, through
``board_by_kind``) and ``names`` each Session's stored name, both written in the transaction of
their batch. Session ids, plugin names and board keys sort by code point (``COLLATE "C"``), as they
do in SQLite. ``outbox`` holds the notices waiting to be sent outside the page, one entry per
channel (``id``: insertion order), filed in the transaction of their batch and claimed by ``(status,
next_ms)`` with ``FOR UPDATE SKIP LOCKED``. A version 1 database (before leases) gets the lease
columns and the fence at open, a version 1 or 2 database (before the board) gets the board and the
names, empty, and a version 1 to 3 database gets the outbox, empty.
"""

from __future__ import annotations

from typing import cast
from urllib.parse import urlsplit, urlunsplit

import psycopg

from .._backend import StorageCorruptError, StorageError

#: One connection to the database, as every module of this backend uses it.
Connection = psycopg.AsyncConnection[tuple[object, ...]]

#: The version of the schema below, stored in ``dsh_schema``.
SCHEMA_VERSION = 4

#: Key of the advisory lock held while the schema is checked or created.
_SCHEMA_LOCK = 0x647368_5F7363  # "dsh_sc"

_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS dsh_schema ("
    "singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), "
    "version integer NOT NULL)"
)

_TABLES = (
    (
        "CREATE TABLE sessions ("
        'id text COLLATE "C" PRIMARY KEY, '
        "header text NOT NULL, "
        "created_at bigint NOT NULL, "
        "length bigint NOT NULL CHECK (length >= 0), "
        "epoch bigint NOT NULL DEFAULT 0)"
    ),
    # (Version 2 adds the lease columns and the fence below, on a new database as on an old.)
    "CREATE INDEX sessions_by_creation ON sessions (created_at, id)",
    (
        "CREATE TABLE events ("
        'session_id text COLLATE "C" NOT NULL REFERENCES sessions (id), '
        "seq bigint NOT NULL, "
        "type text NOT NULL, "
        "time bigint NOT NULL, "
        "data text NOT NULL, "
        "PRIMARY KEY (session_id, seq))"
    ),
    (
        "CREATE TABLE wakes ("
        'session_id text COLLATE "C" NOT NULL REFERENCES sessions (id), '
        'plugin text COLLATE "C" NOT NULL, '
        "at_ms bigint NOT NULL, "
        "PRIMARY KEY (session_id, plugin))"
    ),
    "CREATE INDEX wakes_due ON wakes (at_ms, session_id, plugin)",
)

#: Version 2: the lease columns, the database clock and the fence (idempotent statements).
_LEASES = (
    (
        "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner text, "
        "ADD COLUMN IF NOT EXISTS lease_until bigint, "
        "ADD COLUMN IF NOT EXISTS writer bigint NOT NULL DEFAULT 0"
    ),
    "UPDATE sessions SET writer = epoch WHERE writer <> epoch",
    (
        "CREATE OR REPLACE FUNCTION dsh_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS "
        "$$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$"
    ),
    (
        "CREATE OR REPLACE FUNCTION dsh_fence() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN "
        "IF NEW.epoch < OLD.epoch THEN "
        "RAISE EXCEPTION 'dsh_fenced: session % cannot go back from epoch % to %', "
        "OLD.id, OLD.epoch, NEW.epoch; "
        "END IF; "
        "IF NEW.epoch = OLD.epoch AND NEW.writer IS DISTINCT FROM OLD.epoch THEN "
        "RAISE EXCEPTION 'dsh_fenced: session % is at lease epoch %, a write at epoch % "
        "is refused', OLD.id, OLD.epoch, NEW.writer; "
        "END IF; "
        "RETURN NEW; "
        "END $$"
    ),
    "DROP TRIGGER IF EXISTS sessions_fenced ON sessions",
    (
        "CREATE TRIGGER sessions_fenced BEFORE UPDATE ON sessions "
        "FOR EACH ROW EXECUTE FUNCTION dsh_fence()"
    ),
)

#: Version 3: the board and the names (created empty on an older database).
_BOARD = (
    (
        "CREATE TABLE board ("
        'session_id text COLLATE "C" NOT NULL REFERENCES sessions (id), '
        'plugin text COLLATE "C" NOT NULL, '
        'key text COLLATE "C" NOT NULL, '
        'kind text COLLATE "C" NOT NULL, '
        "at_ms bigint NOT NULL, "
        "data text NOT NULL, "
        "PRIMARY KEY (session_id, plugin, key))"
    ),
    "CREATE INDEX board_by_kind ON board (plugin, kind, at_ms, session_id, key)",
    (
        "CREATE TABLE names ("
        'session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id), '
        "name text NOT NULL)"
    ),
)

#: Version 4: the outbox (created empty on an older database; idempotent statements).
_OUTBOX = (
    (
        "CREATE TABLE IF NOT EXISTS outbox ("
        "id bigserial PRIMARY KEY, "
        'session_id text COLLATE "C" NOT NULL REFERENCES sessions (id), '
        'plugin text COLLATE "C" NOT NULL, '
        'key text COLLATE "C" NOT NULL, '
        'channel text COLLATE "C" NOT NULL, '
        "notice text NOT NULL, "
        "status text NOT NULL, "
        "attempts integer NOT NULL, "
        "next_ms bigint NOT NULL, "
        "error text, "
        "updated_ms bigint NOT NULL, "
        "claimed_by text, "
        "claim_until_ms bigint, "
        "UNIQUE (session_id, plugin, key, channel))"
    ),
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_ms)",
    "CREATE INDEX IF NOT EXISTS outbox_by_session ON outbox (session_id, id)",
)

#: What bringing a database of each older version to :data:`SCHEMA_VERSION` runs.
_MIGRATIONS = {1: _LEASES + _BOARD + _OUTBOX, 2: _BOARD + _OUTBOX, 3: _OUTBOX}

#: Every Session with its stored name, oldest first; the columns ``list_sessions`` decodes.
LIST_SQL = (
    "SELECT s.id, s.header, s.length, s.created_at, n.name "
    "FROM sessions s LEFT JOIN names n ON n.session_id = s.id "
    'ORDER BY s.created_at, s.id COLLATE "C"'
)

#: One page of the Session list, newest first, through ``sessions_by_creation`` (``{after}``:
#: the cursor's condition or nothing); the same columns as :data:`LIST_SQL`.
PAGE_SQL = (
    "SELECT s.id, s.header, s.length, s.created_at, n.name "
    "FROM sessions s LEFT JOIN names n ON n.session_id = s.id{after} "
    "ORDER BY s.created_at DESC, s.id DESC LIMIT %(limit)s"
)
PAGE_AFTER = " WHERE (s.created_at, s.id) < (%(created_at)s, %(sid)s)"
#: The same bound, inclusive: a cursor id holding NUL (which no stored id holds) continues
#: after its part before the NUL.
PAGE_THROUGH = " WHERE (s.created_at, s.id) <= (%(created_at)s, %(sid)s)"
#: How many Sessions are stored.
COUNT_SQL = "SELECT count(*) FROM sessions"


#: One page of one plugin's board rows of one kind, soonest first (``{after}``: the cursor's
#: condition or nothing, ``{session}``: the Session's or nothing).
BOARD_PAGE_SQL = (
    "SELECT b.session_id, n.name, b.key, b.kind, b.at_ms, b.data FROM board b "
    "LEFT JOIN names n ON n.session_id = b.session_id "
    "WHERE b.plugin = %(plugin)s AND b.kind = %(kind)s{after}{session} "
    "ORDER BY b.at_ms, b.session_id, b.key LIMIT %(limit)s"
)
BOARD_AFTER = " AND (b.at_ms, b.session_id, b.key) > (%(at)s, %(sid)s, %(key)s)"
BOARD_SESSION = " AND b.session_id = %(session)s"
BOARD_COUNT_SQL = (
    "SELECT count(*) FROM board b WHERE b.plugin = %(plugin)s AND b.kind = %(kind)s{after}{session}"
)
BOARD_COUNT_AFTER = " AND b.at_ms > %(after_ms)s"

#: The wake entries due by ``%(now)s`` whose Session no other live host leases, earliest
#: first, then by Session id and plugin (another host's live Session is its to deliver).
DUE_SQL = (
    "SELECT w.session_id, w.plugin, w.at_ms FROM wakes w JOIN sessions s ON s.id = w.session_id "
    "WHERE w.at_ms <= %(now)s "
    "AND (s.owner IS NULL OR s.owner = %(owner)s OR s.lease_until < dsh_now_ms()) "
    "ORDER BY w.at_ms, w.session_id, w.plugin LIMIT %(limit)s"
)

#: The earliest instant a wake entry may be claimed here: its own, or for a Session another
#: host leases, just after that lease would run out (so a dead host's wakes are taken over).
EARLIEST_SQL = (
    "SELECT min(CASE WHEN "
    "(s.owner IS NULL OR s.owner = %(owner)s OR s.lease_until < dsh_now_ms()) THEN w.at_ms "
    "ELSE greatest(w.at_ms, s.lease_until + 1) END) "
    "FROM wakes w JOIN sessions s ON s.id = w.session_id"
)


#: Several Sessions' headers and events in a single statement (batched loads).
LOAD_MANY_SQL = (
    "SELECT s.id, s.header, s.length, e.seq, e.type, e.time, e.data "
    "FROM sessions s LEFT JOIN events e ON e.session_id = s.id "
    "WHERE s.id = ANY(%s) ORDER BY s.id, e.seq"
)
#: Their wake entries and board rows (read in the same snapshot).
LOAD_MANY_WAKES_SQL = "SELECT session_id, plugin, at_ms FROM wakes WHERE session_id = ANY(%s)"
LOAD_MANY_BOARD_SQL = (
    "SELECT session_id, plugin, key, kind, at_ms, data FROM board WHERE session_id = ANY(%s)"
)


#: The columns of an entry, as :func:`~.._backend.decode_outbox_row` decodes them.
_ENTRY = (
    "o.session_id, o.plugin, o.key, o.channel, o.notice, o.status, o.attempts, o.next_ms, "
    "o.error, o.updated_ms"
)
#: The entries due at ``%(now)s``, earliest ``next_ms`` first, locked for this claim; those
#: another host is claiming at this instant are skipped.
OUTBOX_DUE_SQL = (
    f"SELECT o.id, {_ENTRY} FROM outbox o "  # noqa: S608 - fixed column names
    "WHERE ((o.status = 'pending' AND o.next_ms <= %(now)s) "
    "OR (o.status = 'sending' AND o.claim_until_ms < %(now)s)) "
    "ORDER BY o.next_ms, o.id LIMIT %(limit)s FOR UPDATE SKIP LOCKED"
)
OUTBOX_CLAIM_SQL = (
    "UPDATE outbox SET status = 'sending', attempts = attempts + 1, claimed_by = %(owner)s, "
    "claim_until_ms = %(until)s, updated_ms = %(now)s WHERE id = ANY(%(ids)s)"
)
#: What a claim does to the entries it cannot decode.
OUTBOX_DAMAGED_SQL = (
    "UPDATE outbox SET status = 'failed', error = 'damaged notice', updated_ms = %(now)s, "
    "claimed_by = NULL, claim_until_ms = NULL WHERE id = ANY(%(ids)s)"
)
#: The outcome of a claim, fenced by its owner.
OUTBOX_SETTLE_SQL = (
    "UPDATE outbox SET status = %(status)s, next_ms = coalesce(%(next)s, next_ms), "
    "error = %(error)s, updated_ms = %(now)s, claimed_by = NULL, claim_until_ms = NULL "
    "WHERE session_id = %(sid)s AND plugin = %(plugin)s AND key = %(key)s "
    "AND channel = %(channel)s AND status = 'sending' AND claimed_by = %(owner)s"
)
OUTBOX_OF_SQL = f"SELECT {_ENTRY} FROM outbox o WHERE o.session_id = %s ORDER BY o.id"  # noqa: S608
OUTBOX_EARLIEST_SQL = (
    "SELECT least((SELECT min(next_ms) FROM outbox WHERE status = 'pending'), "
    "(SELECT min(claim_until_ms) FROM outbox WHERE status = 'sending'))"
)


def redacted(url: str) -> str:
    """``url`` without its password (safe to log or show)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port is not None else ""
        user = f"{parts.username}:***@" if parts.username else ":***@"
    except ValueError:
        return "postgresql://(unparsable address)"
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, parts.query, ""))


def plain(exc: BaseException, secret: str | None) -> str:
    """The driver's message on one line, with ``secret`` (the password) never in it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if secret:
        text = text.replace(secret, "***")
    return text


async def ensure_schema(
    conn: psycopg.AsyncConnection[tuple[object, ...]], where: str
) -> tuple[int, int] | None:
    """Create the schema on an empty database, or migrate an older version in one transaction;
    refuse a version this dsh does not know. A migration answers ``(the version it migrated
    from, the number of Sessions stored)``; otherwise ``None``."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        await conn.execute(_VERSION_TABLE)
        cur = await conn.execute("SELECT version FROM dsh_schema")
        row = await cur.fetchone()
        if row is None:
            for ddl in (*_TABLES, *_LEASES, *_BOARD, *_OUTBOX):
                await conn.execute(ddl)
            await conn.execute("INSERT INTO dsh_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            return None
        version = row[0]
        if type(version) is int and version in _MIGRATIONS:  # an older dsh wrote it
            for ddl in _MIGRATIONS[version]:
                await conn.execute(ddl)
            await conn.execute("UPDATE dsh_schema SET version = %s", (SCHEMA_VERSION,))
            counted = await (await conn.execute("SELECT count(*) FROM sessions")).fetchone()
            return version, 0 if counted is None else int(cast(int, counted[0]))
    if type(version) is not int or version < 1:
        raise StorageCorruptError(f"{where}: dsh_schema holds an invalid version {version!r}")
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{where}: the database has dsh schema version {version}, newer than the "
            f"version {SCHEMA_VERSION} this dsh knows; upgrade dsh to use it"
        )
    return None


def is_fenced(exc: BaseException) -> bool:
    """Whether ``exc`` is the fence's refusal of a write made under an old lease epoch."""
    if not isinstance(exc, psycopg.errors.RaiseException):
        return False
    return (exc.diag.message_primary or "").startswith("dsh_fenced")


def is_request_error(exc: BaseException) -> bool:
    """A driver error that fails one request inside its savepoint, not the whole batch."""
    return isinstance(exc, psycopg.IntegrityError | psycopg.DataError) or is_fenced(exc)
