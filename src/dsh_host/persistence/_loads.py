"""Loads asked for together are read together (a herd of resumes shares its reads).

:class:`LoadBatcher` stands behind a backend's ``load``: each call joins the set of Session ids
waiting to be read, and one reader task at a time reads up to ``limit`` of them with the
backend's ``read_many`` (one query per table instead of one round of queries per Session), then
answers every waiter. While a read is under way, new calls gather for the next one, so a single
load costs one read as before and a herd of them costs a few.

``read_many(ids)`` answers, per id, its :class:`StoredSession`, ``None`` (not stored) or the
exception that makes it unreadable (one damaged Session fails alone); when it raises, every id of
that read gets the error. A caller that stops waiting leaves the others their answers.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Sequence

from ._backend import StoredSession

#: What one read answers per Session id.
Loaded = StoredSession | Exception | None
ReadMany = Callable[[Sequence[str]], Awaitable[dict[str, Loaded]]]


class LoadBatcher:
    """Coalesces concurrent loads into reads of up to ``limit`` Sessions."""

    __slots__ = ("_read_many", "_reader", "_waiting", "limit")

    def __init__(self, read_many: ReadMany, *, limit: int) -> None:
        self._read_many = read_many
        self.limit = limit
        #: Session id -> the futures of its callers, not read yet.
        self._waiting: dict[str, list[asyncio.Future[StoredSession | None]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def load(self, session_id: str) -> StoredSession | None:
        loop = asyncio.get_running_loop()
        loaded: asyncio.Future[StoredSession | None] = loop.create_future()
        self._waiting.setdefault(session_id, []).append(loaded)
        if self._reader is None:
            self._reader = loop.create_task(self._read(), name="dsh-batched-loads")
        return await loaded

    async def _read(self) -> None:
        try:
            while self._waiting:
                ids = list(itertools.islice(self._waiting, self.limit))
                waiting = {sid: self._waiting.pop(sid) for sid in ids}
                try:
                    outcomes = await self._read_many(ids)
                except Exception as exc:
                    outcomes = dict.fromkeys(ids, exc)
                for sid, futures in waiting.items():
                    outcome = outcomes.get(sid)
                    for future in futures:
                        if future.done():
                            continue  # its caller stopped waiting
                        if isinstance(outcome, Exception):
                            future.set_exception(outcome)
                        else:
                            future.set_result(outcome)
        finally:
            self._reader = None
