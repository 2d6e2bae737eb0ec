"""Storage helpers for the board, name and delete tests: a SQLite backend on disk that records
what each append carried, and the fault injector with a gate on loads (to hold a resume while a
delete runs)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_hookspecs import BoardEntry, Event, SessionHeader
from dsh_host.persistence import NO_POSTS, NO_WAKES, SQLiteBackend
from dsh_host.testing import FaultInjectingBackend

from .board_plugin import PLUGIN, fold


@dataclass(frozen=True)
class Call:
    """One append as the coordinator made it: what it carried (``None``: not passed)."""

    session_id: str
    start: int
    types: tuple[str, ...]
    header: bool
    wakes: dict[str, int | None] | None
    board: dict[tuple[str, str], BoardEntry | None] | None
    name: str | None


class RecordingSQLite(SQLiteBackend):
    """SQLite on disk; every append is recorded (:class:`Call`) before it is stored."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.calls: list[Call] = []

    async def append(  # noqa: PLR0917 - the parameters of Backend.append
        self,
        session_id: str,
        start: int,
        events: Sequence[Event],
        header: SessionHeader | None = None,
        wakes: Mapping[str, int | None] = NO_WAKES,
        board: Mapping[tuple[str, str], BoardEntry | None] = NO_POSTS,
        name: str | None = None,
    ) -> None:
        self.calls.append(
            Call(
                session_id,
                start,
                tuple(e.type for e in events),
                header is not None,
                None if wakes is NO_WAKES else dict(wakes),
                None if board is NO_POSTS else dict(board),
                name,
            )
        )
        await super().append(session_id, start, events, header, wakes, board=board, name=name)

    def of(self, session_id: str) -> list[Call]:
        return [call for call in self.calls if call.session_id == session_id]


class Faults(FaultInjectingBackend):
    """:class:`FaultInjectingBackend` whose ``load_gate``, when set, holds every load until it
    is set."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.load_gate: asyncio.Event | None = None
        self.loads_held = 0

    async def load(self, session_id: str) -> Any:
        gate = self.load_gate
        if gate is not None:
            self.loads_held += 1
            await gate.wait()
        return await super().load(session_id)


async def agrees(backend: Any, session_id: str) -> dict[str, BoardEntry]:
    """The stored rows of the pins plugin, after checking they are what its stored log asks for
    (the board and the log agree)."""
    stored = await backend.load(session_id)
    assert stored is not None
    rows = {key: e for (plugin, key), e in stored.board.items() if plugin == PLUGIN}
    assert rows == fold(stored.events[stored.header.owned_from :])
    return rows
