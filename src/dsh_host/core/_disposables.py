"""Closing what a plugin handed the host to dispose (a start disposable or a per-Agent one)."""

from __future__ import annotations

import inspect

import structlog

from dsh_hookspecs import Disposable

log = structlog.get_logger(__name__)


async def close_disposable(
    plugin: str, disposable: Disposable, *, agent_id: str | None = None
) -> None:
    """Call ``disposable`` (awaiting what it returns); a failure is logged, never raised."""
    try:
        result = disposable()
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("plugin.dispose_failed", plugin=plugin, agent_id=agent_id)
