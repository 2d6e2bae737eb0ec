"""Storage helpers for the board, name and delete tests: a SQLite backend on disk that records
what each append carried, and the fault injector with a gate on loads (to hold a resume while a
delete runs)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_hookspecs import BoardEntry
from dsh_host.persistence import SQLiteBackend, Write
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

    async def append(self, write: Write) -> None:
        self.calls.append(
            Call(
                write.session_id,
                write.start,
                tuple(e.type for e in write.events),
                write.header is not None,
                dict(write.wakes) or None,
                dict(write.board) or None,
                write.name,
            )
        )
        await super().append(write)

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
