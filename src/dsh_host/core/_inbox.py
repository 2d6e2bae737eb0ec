"""An Agent's inbox messages, and what a resumed log leaves for the inbox.

Read from the part of the log the Session owns: a last turn that never ended (the process died
in it), and a user's tool call that never got its result, are closed by
:func:`interrupted_turn_closure`; follow-ups recorded as ``agent/followup`` whose ``turn/start``
never came are queued again by :func:`unstarted_followups`. :func:`dsh_hookspecs.owes_turn`
(shared with plugins that answer cold wakes) says whether either is left (the host keeps a wake
entry while it is, so a cold Session is resumed for it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_hookspecs import Event, JSONValue

#: The ``turn/end`` error and ``tool/result`` code of a turn the process died in.
INTERRUPTED = "interrupted"
INTERRUPTED_RESULT: dict[str, JSONValue] = {
    "code": INTERRUPTED,
    "message": "the host stopped before this tool call finished; it may or may not have run",
}


#: The ``source`` of a ``tool/call`` the user made from the browser (not the model).
USER_SOURCE: dict[str, JSONValue] = {"kind": "user"}


@dataclass(frozen=True, slots=True, eq=False)
class UserToolCall:
    """A tool the user runs by hand (a Cancel button): it waits its place in the inbox."""

    name: str
    arguments: JSONValue
    #: Resolved with ``(value, durable)`` once the call and its result are logged.
    outcome: asyncio.Future[tuple[JSONValue, bool]]


@dataclass(frozen=True, slots=True)
class InboxMessage:
    message_id: str
    text: str
    source: dict[str, JSONValue] | None = None
    #: The log length that must be durable before this message's turn may start (a follow-up:
    #: just past its record and the events appended with it; 0 for client input).
    durable_through: int = 0
    #: The user's IANA zone sent with a client's message (request-local, never stored).
    time_zone: str | None = None
    #: Set for a user's tool call: the driver runs it instead of a turn (``message_id`` is
    #: its call id; ``text`` is unused).
    action: UserToolCall | None = None


def interrupted_turn_closure(owned: Sequence[Event]) -> list[tuple[str, JSONValue]] | None:
    """The events that close what ``owned`` left open (``None`` when nothing is): a
    ``tool/result`` (``interrupted``) answering each orphan ``tool/call`` of an open last turn
    and each user's tool call (outside turns) without a result, then, for an open turn,
    ``turn/end`` (``interrupted``)."""
    open_calls: dict[str, str] = {}  # the open turn's calls, then the user's calls
    user_calls: dict[str, str] = {}
    open_turn = False
    for event in owned:
        if event.type == "turn/start":
            open_turn, open_calls = True, {}
        elif event.type == "turn/end":
            open_turn, open_calls = False, {}
        elif isinstance(event.data, dict):
            call_id, name = event.data.get("callId"), event.data.get("name")
            calls = open_calls if open_turn else user_calls
            if not isinstance(call_id, str):
                continue
            if event.type == "tool/call":
                calls[call_id] = name if isinstance(name, str) else ""
            elif event.type == "tool/result":
                calls.pop(call_id, None)
    if not open_turn and not user_calls:
        return None
    closure: list[tuple[str, JSONValue]] = [
        ("tool/result", {"callId": call_id, "name": name, "value": INTERRUPTED_RESULT})
        for call_id, name in {**user_calls, **open_calls}.items()
    ]
    if open_turn:
        closure.append(("turn/end", {"outcome": "error", "error": INTERRUPTED}))
    return closure


def unstarted_followups(owned: Sequence[Event]) -> list[InboxMessage]:
    """The follow-ups recorded in ``owned`` whose turn never started, in record order."""
    pending: dict[str, InboxMessage] = {}
    for event in owned:
        data = event.data
        if not isinstance(data, dict):
            continue
        message_id = data.get("messageId")
        if not isinstance(message_id, str):
            continue
        if event.type == "agent/followup":
            text, source = data.get("text"), data.get("source")
            if isinstance(text, str) and isinstance(source, dict):
                pending[message_id] = InboxMessage(
                    message_id, text, source, durable_through=event.seq + 1
                )
        elif event.type == "turn/start":
            pending.pop(message_id, None)
    return list(pending.values())
