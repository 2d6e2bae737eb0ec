"""One turn as a model adapter sees it: the host's :class:`dsh_hookspecs.Turn`.

The adapter reads the message, the time context, the transcript and the Agent's tools, and acts
only through the turn: tool calls run through the Agent's pipeline, :meth:`LiveTurn.say` appends a
durable ``assistant/message``, :meth:`LiveTurn.stream` sends ephemeral text to the Session's
viewers (never logged).

Once the user has stopped the turn (:meth:`LiveAgent.cancel_turn`), it says and streams nothing
more and a new tool call raises :class:`asyncio.CancelledError`, even for an adapter that
catches the cancellation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dsh_hookspecs import Event, JSONValue, Session, TimeContext, Tool, TurnInput

from ._inbox import InboxMessage


class TurnAgent(Protocol):
    """What a turn asks of the Agent running it (the host's :class:`~dsh_host.LiveAgent`)."""

    @property
    def session(self) -> Session: ...

    @property
    def turn_stop_requested(self) -> bool: ...

    def available_tools(self) -> Sequence[Tool]: ...

    async def turn_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue: ...

    def stream_text(self, message_id: str, text: str) -> None: ...


class LiveTurn:
    """What a model adapter may do during one turn (implements :class:`dsh_hookspecs.Turn`).

    ``agent`` and ``message`` are the host's own objects, for host tests and host adapters.
    """

    __slots__ = ("_input", "_time", "agent", "message")

    def __init__(self, agent: TurnAgent, message: InboxMessage, time: TimeContext) -> None:
        self.agent = agent
        self.message = message
        self._time = time
        self._input = TurnInput(
            message_id=message.message_id, text=message.text, source=message.source
        )

    @property
    def input(self) -> TurnInput:
        return self._input

    @property
    def time(self) -> TimeContext:
        return self._time

    def transcript(self) -> Sequence[Event]:
        return self.agent.session.events

    @property
    def owned_from(self) -> int:
        return self.agent.session.header.owned_from

    def tools(self) -> Sequence[Tool]:
        return self.agent.available_tools()

    async def call_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue:
        return await self.agent.turn_tool(name, arguments, call_id=call_id)

    def say(self, text: str) -> None:
        if not self.agent.turn_stop_requested:
            self.agent.session.append("assistant/message", {"text": text})

    def stream(self, text: str) -> None:
        if text and not self.agent.turn_stop_requested:
            self.agent.stream_text(self.message.message_id, text)
