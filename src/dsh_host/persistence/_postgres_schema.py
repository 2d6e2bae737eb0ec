"""The PostgreSQL store's schema, its version check, and the mapping of driver errors.

The schema is created on first start, under a transaction-scoped advisory lock so that hosts
starting together on an empty database create it once. ``dsh_schema`` holds one row, the
schema version; a database written by a newer dsh (a higher version) is refused at open with a
:class:`StorageError` naming both versions, never altered.

``sessions`` has room for the lease of issue 11 item 5 (``epoch``, 0 until leases exist);
``wakes`` is the durable wake index (one entry per plugin per Session, written in the same
transaction as its batch). Session ids and plugin names sort by code point (``COLLATE "C"``),
as they do in SQLite.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg

from ._backend import StorageCorruptError, StorageError

#: The version of the schema below, stored in ``dsh_schema``.
SCHEMA_VERSION = 1

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

#: Every Session, oldest first; the columns :func:`._postgres.listing` decodes.
LIST_SQL = 'SELECT id, header, length, created_at FROM sessions ORDER BY created_at, id COLLATE "C"'

#: The wake entries due by a given instant, earliest first, then by Session id and plugin.
DUE_SQL = (
    "SELECT session_id, plugin, at_ms FROM wakes WHERE at_ms <= %s "
    "ORDER BY at_ms, session_id, plugin LIMIT %s"
)

#: One Session's wake entries (read in the same snapshot as :data:`LOAD_SQL`).
LOAD_WAKES_SQL = "SELECT plugin, at_ms FROM wakes WHERE session_id = %s"

#: One Session's header and events in a single statement.
LOAD_SQL = (
    "SELECT s.header, s.length, e.seq, e.type, e.time, e.data "
    "FROM sessions s LEFT JOIN events e ON e.session_id = s.id "
    "WHERE s.id = %s ORDER BY e.seq"
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


async def ensure_schema(conn: psycopg.AsyncConnection[tuple[object, ...]], where: str) -> None:
    """Create the schema on an empty database; refuse a version this dsh does not know."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        await conn.execute(_VERSION_TABLE)
        cur = await conn.execute("SELECT version FROM dsh_schema")
        row = await cur.fetchone()
        if row is None:
            for ddl in _TABLES:
                await conn.execute(ddl)
            await conn.execute("INSERT INTO dsh_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            return
    version = row[0]
    if type(version) is not int or version < 1:
        raise StorageCorruptError(f"{where}: dsh_schema holds an invalid version {version!r}")
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{where}: the database has dsh schema version {version}, newer than the "
            f"version {SCHEMA_VERSION} this dsh knows; upgrade dsh to use it"
        )


def is_request_error(exc: BaseException) -> bool:
    """A driver error that fails one request inside its savepoint, not the whole batch."""
    return isinstance(exc, psycopg.IntegrityError | psycopg.DataError)
