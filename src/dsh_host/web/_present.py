"""The one presentation step of the Web host: an event's view, as the wire carries it.

The stream's replay, its late-view frames and every history page ask :func:`present`; what
decides *whether* a seq may carry a view (the durable length, the proven stored prefix) is
the caller's, never this function's.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from dsh_hookspecs import Event, JSONValue

from .. import _json
from ..core import LiveSession, PluginManager

log = structlog.get_logger(__name__)


def present(
    plugins: PluginManager,
    events: Sequence[Event],
    seq: int,
    seed_length: int,
    session: LiveSession | None,
) -> JSONValue | None:
    """The sidecar for ``events[seq]`` (``{"for": "event", "view": ...}``) or ``None``.

    ``events`` is the whole log and ``seed_length`` the Session's ``seedLength``, so a dispatch
    pairs with a create anywhere before it; ``session`` is the live Session whose log
    ``events`` is (``None`` for a stored log). The facade already logs and skips a failing plugin;
    this also contains a view that is not strict JSON, so a presentation problem only ever means
    "served raw".
    """
    try:
        view = plugins.event_present(events, seq, seed_length, session)
        if view is None:
            return None
        return {"for": "event", "view": _json.canonical(view)}
    except Exception:
        log.exception("web.present_failed", seq=seq)
        return None
