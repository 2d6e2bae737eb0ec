"""What a stored log owes its Agent: the rule the host and a plugin answering a cold wake share."""

from __future__ import annotations

from collections.abc import Sequence

from ._types import Event

__all__ = ["owes_turn"]


def owes_turn(owned: Sequence[Event]) -> bool:
    """Whether ``owned`` (a Session's own events, after its copied prefix) holds an
    ``agent/followup`` whose turn never started (no ``turn/start`` names its ``messageId``), or a
    ``turn/start`` that never ended: work its Agent does as soon as the Session is live, which a
    plugin's cold plan (:func:`~dsh_hookspecs.hookspecs.dsh_wake_due`) leaves to it.

    .. versionadded:: 0.6
    """
    started: set[str] = set()
    followups: list[str] = []
    open_turn = False
    for event in owned:
        kind, data = event.type, event.data
        message_id = data.get("messageId") if isinstance(data, dict) else None
        if kind == "turn/start":
            open_turn = True
            if isinstance(message_id, str):
                started.add(message_id)
        elif kind == "turn/end":
            open_turn = False
        elif kind == "agent/followup" and isinstance(message_id, str):
            followups.append(message_id)
    return open_turn or any(message_id not in started for message_id in followups)
