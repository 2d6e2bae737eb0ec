"""The PostgreSQL backend: Session headers, event logs and leases in a shared database.

:class:`PostgresBackend` (:mod:`._store`) creates and checks its schema (:mod:`._schema`),
commits appends in groups (:mod:`._writer`, each batch with a fixed number of statements:
:mod:`._batch`) and holds this process's Session leases (:mod:`._leases`) so that several hosts
can share one database.
"""

from __future__ import annotations

from ._store import SCHEMA_VERSION, PostgresBackend, is_postgres_url, redacted

__all__ = ["SCHEMA_VERSION", "PostgresBackend", "is_postgres_url", "redacted"]
