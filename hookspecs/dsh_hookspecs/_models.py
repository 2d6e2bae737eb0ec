"""The model-adapter contract: what a model adapter is given for one turn, and how a plugin
offers one (:func:`dsh_hookspecs.hookspecs.dsh_model_adapters`).

A host runs each Agent turn through one :class:`ModelAdapter`, chosen by name when the host
starts (``dsh serve --model NAME``). The adapter reads the turn through :class:`Turn` and acts
only through it: tool calls go through the Agent's ordinary tool pipeline (recorded in the log,
the plugins' rules hold), :meth:`Turn.say` appends a durable ``assistant/message``, and
:meth:`Turn.stream` sends ephemeral text that is never logged.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ._protocols import Tool
from ._types import Event, JSONValue
from ._zones import load_time_zone

__all__ = [
    "DEFAULT_MAX_STEPS",
    "ModelAdapter",
    "ModelAdapterSpec",
    "ModelSettings",
    "ScriptedPhrase",
    "TimeContext",
    "Turn",
    "TurnInput",
]

#: Model steps (requests to the model) one turn may take before it ends with a visible note.
DEFAULT_MAX_STEPS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeContext:
    """What time it is for one turn.

    ``now_ms`` is the host clock's UTC instant (epoch milliseconds) when the turn's model work
    began. ``time_zone`` is the IANA zone the user's client sent with the message that started
    the turn (validated by the host), or ``None``: a plugin's follow-up, or a client that sent
    none; then the user's zone is unknown and times read in UTC. It is request-local: never
    stored as Session state.
    """

    now_ms: int
    time_zone: str | None = None

    def utc(self) -> dt.datetime:
        """``now_ms`` as an aware UTC datetime."""
        return dt.datetime.fromtimestamp(self.now_ms / 1000, tz=dt.UTC)

    def local(self) -> dt.datetime:
        """``now_ms`` in ``time_zone`` (UTC when it is ``None``)."""
        if self.time_zone is None:
            return self.utc()
        return self.utc().astimezone(load_time_zone(self.time_zone))

    def describe(self) -> str:
        """The lines a model is told: the UTC instant, the user's zone and local time."""
        utc = self.utc().isoformat(timespec="seconds").replace("+00:00", "Z")
        if self.time_zone is None:
            zone = (
                "The user's time zone is unknown for this turn: read and write times in UTC, "
                "or ask the user which zone they mean."
            )
        else:
            local = self.local().isoformat(timespec="seconds")
            zone = (
                f"The user's time zone is {self.time_zone}; their local time is {local} "
                f"({self.local():%A}). Interpret dates and times the user gives without a zone "
                "in this zone."
            )
        return f"Current time: {utc} (UTC).\n{zone}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnInput:
    """The inbox message that opened a turn: a user's message or a plugin's follow-up."""

    message_id: str
    text: str
    #: ``None`` for a user's message; ``{"kind": "plugin", "plugin": NAME}`` for a follow-up.
    source: Mapping[str, JSONValue] | None = None


class Turn(Protocol):
    """What a model adapter may read and do during one turn (the host implements it)."""

    @property
    def input(self) -> TurnInput:
        """The message this turn answers."""
        ...

    @property
    def time(self) -> TimeContext:
        """The current instant and the user's zone for this turn."""
        ...

    def transcript(self) -> Sequence[Event]:
        """Every event of the Session so far (the inherited prefix of a fork included), this
        turn's ``turn/start``, ``user/message`` and the tool calls already made included."""
        ...

    @property
    def owned_from(self) -> int:
        """Index in :meth:`transcript` of the first event the Session owns: a fork's
        ``seedLength`` (its inherited prefix comes before), 0 otherwise.

        .. versionadded:: 0.4
        """
        ...

    def tools(self) -> Sequence[Tool]:
        """The tools this Agent can call now: its own layer first, then the host's global
        tools it does not shadow; each with its description and JSON-Schema parameters."""
        ...

    async def call_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue:
        """Run one tool call through the Agent's pipeline: ``tool/call`` and ``tool/result`` are
        appended (``call_id`` is the model's id of the call when it has one), the arguments are
        validated against the tool's schema, and the value (a domain error is a value) is
        returned. Calls run one after another; never raises for a tool's own failure."""
        ...

    def say(self, text: str) -> None:
        """Append a durable ``assistant/message`` with ``text``."""
        ...

    def stream(self, text: str) -> None:
        """Send a piece of the assistant text being generated to the Session's viewers.

        Ephemeral: never written to the log, never replayed. The pieces since the last
        :meth:`say` (or since the turn began) form one message in progress; the durable
        ``assistant/message`` that :meth:`say` appends replaces them, and a turn that ends
        without one discards them."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedPhrase:
    """A phrase a plugin teaches a host's keyless ``scripted`` demo model
    (:func:`dsh_hookspecs.hookspecs.dsh_scripted_phrases`).

    A user message that ``pattern`` matches (``pattern.match(text)``, so at its start) is this
    phrase's. With a ``tool``, the model calls that tool with ``arguments(match)`` (``{}`` when
    ``arguments`` is ``None``), or ``timed_arguments(match, time)`` when that is set (``time``
    is the turn's :class:`TimeContext`: "tomorrow at 9" in the user's zone), and then says
    ``reply(match, value)``, ``value`` being the tool's JSON result (a domain error is a value
    too); without a ``tool`` (a follow-up the plugin itself queued, which the model should
    present) it says ``reply(match, None)`` at once. ``example`` is a message the model's help
    text may quote (``None``: not quoted), and ``examples`` more of them, in any language: the
    help quotes three that fit the message it did not understand, in that message's language.
    A raise in ``arguments`` or ``reply`` fails that turn.

    ``respond`` is the whole-turn form, for a phrase that needs more than one tool call or the
    conversation so far (a question it asked before): when it is set, the model awaits
    ``respond(match, turn)`` instead (``tool``, ``arguments``, ``timed_arguments`` and
    ``reply`` are not used). It may call tools and read ``turn.time`` and
    ``turn.transcript()``; the text it returns is said, and ``None`` passes the message on to
    the next phrase (return ``None`` only before calling a tool). A raise fails the turn. A
    phrase needs ``reply`` or ``respond`` (``ValueError`` otherwise).

    .. versionchanged:: 0.3 ``timed_arguments``.
    .. versionchanged:: 0.4 ``respond`` and ``examples``; ``reply`` is optional with ``respond``.
    """

    pattern: re.Pattern[str]
    reply: Callable[[re.Match[str], JSONValue], str] | None = None
    tool: str | None = None
    arguments: Callable[[re.Match[str]], JSONValue] | None = None
    timed_arguments: Callable[[re.Match[str], TimeContext], JSONValue] | None = None
    example: str | None = None
    respond: Callable[[re.Match[str], Turn], Awaitable[str | None]] | None = None
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.reply is None and self.respond is None:
            msg = "a ScriptedPhrase needs reply or respond"
            raise ValueError(msg)


class ModelAdapter(Protocol):
    """Runs turns. A raise fails the turn visibly (``turn/end`` with the error's text), so the
    text must never carry a secret."""

    name: str

    async def run_turn(self, turn: Turn) -> None:
        """Answer ``turn.input`` by acting through ``turn``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """What ``dsh serve`` (or a host's caller) tells the chosen adapter.

    Adapters ignore what they do not use; ``environ`` is where secrets such as API keys come
    from (never a command-line flag).
    """

    model_name: str | None = None
    base_url: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    #: Seconds to wait to connect, and for each piece of a reply.
    timeout_seconds: float = 60.0
    #: The most characters of transcript sent per request; the oldest whole exchanges go first.
    context_chars: int = 200_000
    #: The longest one model step may take, its request, retries and whole streamed reply
    #: together (seconds); past it the turn ends with a plain error and keeps nothing of the step.
    step_timeout_seconds: float = 120.0
    #: The most characters of one reply's text kept and said (the rest is cut, with a note), and
    #: of one tool call's arguments (a call past it is not run); the stream stops there.
    max_reply_chars: int = 200_000
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAdapterSpec:
    """A model adapter a plugin offers: ``create(settings)`` builds it when a host selects
    ``name``. ``create`` raises ``ValueError`` with a plain message when the settings do not
    suffice (a missing model name or key); the host reports it and does not start."""

    name: str
    create: Callable[[ModelSettings], ModelAdapter]
    description: str = ""
