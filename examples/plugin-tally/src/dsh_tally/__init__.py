"""dsh_tally: the example plugin of ``docs/plugins.md``. It counts things in a conversation.

Entry point ``tally`` in group ``dsh.plugins``. It imports nothing of a host, only the contract
(:mod:`dsh_hookspecs`), and shows one of each kind of contribution:

* a tool, ``tally_add {"label"}``, on every root Agent published after the plugin loaded
  (``dsh_agent_published``). It records one ``tally/add`` event, ``{"label": str}``, in the
  Agent's Session and answers ``{"label", "count"}``; a bad label is answered with the value
  ``{"code": "invalid_label", "message"}`` and records nothing. The plugin owns that event type:
  ``dsh_event_validate`` refuses a ``tally/add`` of any other shape, whoever appends it;
* a Session view, ``tally.counts`` (``dsh_session_views``): ``{"counts": {label: n}, "badge":
  total}``, derived from the committed log alone (a fork counts what it inherited too);
* a phrase for the host's keyless scripted model (``dsh_scripted_phrases``): "count coffee"
  calls ``tally_add`` and words its answer.

Config (the overlay's ``[plugins.tally]`` table, optional): ``max_label_chars``, a positive
integer (default 40).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from dsh_hookspecs import (
    Agent,
    Event,
    Host,
    JSONValue,
    ScriptedPhrase,
    Session,
    Tool,
    ToolCall,
    hookimpl,
)

__all__ = ["ADD", "TOOL", "VIEW", "ConfigError", "TallyPlugin"]

#: The event type this plugin owns.
ADD: Final = "tally/add"
#: The tool's name, and the Session view's (namespaced by the plugin, as every view is).
TOOL: Final = "tally_add"
VIEW: Final = "tally.counts"

PARAMETERS: Final[Mapping[str, JSONValue]] = {
    "type": "object",
    "properties": {"label": {"type": "string", "description": "what to count, e.g. 'coffee'"}},
    "required": ["label"],
    "additionalProperties": False,
}


class ConfigError(ValueError):
    """The overlay's ``[plugins.tally]`` table is invalid (the host then does not start)."""


def _label(data: JSONValue) -> str | None:
    """The label of a well-formed ``tally/add`` data object, else ``None``."""
    if not isinstance(data, dict) or set(data) != {"label"}:
        return None
    label = data["label"]
    return label if isinstance(label, str) and label else None


def count(events: Sequence[Event], label: str) -> int:
    """How many ``tally/add`` events of ``label`` the log holds."""
    return sum(event.type == ADD and _label(event.data) == label for event in events)


class TallyPlugin:
    """The plugin object: the host makes one per host and calls its ``@hookimpl`` methods."""

    def __init__(self) -> None:
        self.max_label_chars = 40

    # -- start: read the config table ----------------------------------------------------------
    @hookimpl
    def dsh_plugin_start(self, host: Host, config: Mapping[str, JSONValue]) -> None:
        del host  # this plugin needs none of the host's services beyond what hooks hand it
        unknown = sorted(set(config) - {"max_label_chars"})
        if unknown:
            raise ConfigError(f"unknown config keys {unknown}")
        limit = config.get("max_label_chars", 40)
        if type(limit) is not int or limit <= 0:
            raise ConfigError("max_label_chars must be a positive integer")
        self.max_label_chars = limit

    # -- the tool, on every root Agent ---------------------------------------------------------
    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> Callable[[], None] | None:
        if agent.parent is not None:
            return None  # root Agents only, as the Schedule plugin does
        tool = Tool(
            name=TOOL,
            title="Count",
            description="Count one more of something in this conversation; answers the count.",
            parameters=PARAMETERS,
            handler=self.add,
        )
        # The disposer the registry returns is this Agent's disposable: the host calls it when
        # the Agent is disposed or this plugin is unloaded.
        return agent.tools.register(tool)

    async def add(self, call: ToolCall) -> JSONValue:
        """``tally_add``: the arguments passed the tool's schema; a domain error is a value."""
        label = call.arguments["label"]
        assert isinstance(label, str)  # the schema says so
        label = label.strip()
        if not label or len(label) > self.max_label_chars:
            return {
                "code": "invalid_label",
                "message": f"label must be 1 to {self.max_label_chars} characters after trimming.",
            }
        session = call.agent.session
        session.append(ADD, {"label": label})  # durable with the turn's (or action's) flush
        return {"label": label, "count": count(session.events, label)}

    # -- the event type it owns ----------------------------------------------------------------
    @hookimpl
    def dsh_event_validate(self, session: Session, event: Event) -> None:
        del session
        if event.type == ADD and _label(event.data) is None:
            raise ValueError('tally/add data must be {"label": a non-empty string}')

    # -- the Session view ------------------------------------------------------------------------
    @hookimpl
    def dsh_session_views(
        self, events: Sequence[Event], seed_length: int, session: Session | None
    ) -> Mapping[str, JSONValue]:
        del seed_length, session  # derived from the committed events alone
        counts = Counter(
            label for event in events if event.type == ADD and (label := _label(event.data))
        )
        return {VIEW: {"counts": dict(sorted(counts.items())), "badge": counts.total()}}

    # -- the scripted model's phrase -----------------------------------------------------------
    @hookimpl
    def dsh_scripted_phrases(self) -> Sequence[ScriptedPhrase]:
        return [
            ScriptedPhrase(
                pattern=re.compile(r"count\s+(?P<label>\S.*)$", re.IGNORECASE | re.DOTALL),
                tool=TOOL,
                arguments=lambda match: {"label": match["label"]},
                reply=_reply,
                example="count coffee",
            )
        ]


def _reply(match: re.Match[str], value: JSONValue) -> str:
    """The scripted model's answer: the tool's result in words (a domain error too)."""
    del match
    if isinstance(value, dict) and isinstance(value.get("count"), int):
        return f"{value['label']}: {value['count']} so far."
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return f"I could not count that: {value['message']}"
    return "I could not count that."
