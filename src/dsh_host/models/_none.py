"""The ``none`` model adapter: every turn fails with a visible error."""

from __future__ import annotations

from dsh_hookspecs import Turn


class ModelUnavailableError(RuntimeError):
    """The ``none`` adapter: no model is configured."""


class NoModel:
    name = "none"

    async def run_turn(self, turn: Turn) -> None:  # noqa: ARG002 - the adapter protocol
        raise ModelUnavailableError("no model is configured (--model none); this turn cannot run")
