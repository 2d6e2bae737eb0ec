"""Model adapters: the keyless ``scripted`` demo model and the ``none`` adapter (DESIGN section 4).

``scripted`` is deterministic and knows no plugin:

* ``/tool NAME {json}`` calls that tool with those arguments, then replies with the result;
* otherwise the first phrase a plugin offers (``dsh_scripted_phrases``) that matches the message
  answers it: it may call a tool and word the result, or present a plugin's follow-up;
* anything else gets a short help text that quotes the offered phrases' examples.

``none`` fails every turn with a visible error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dsh_hookspecs import JSONValue, hookspecs

from . import _json
from ._agent import ModelAdapter, Turn


class ModelUnavailableError(RuntimeError):
    """The ``none`` adapter: no model is configured."""


class NoModel:
    name = "none"

    async def run_turn(self, turn: Turn) -> None:  # noqa: ARG002 - the adapter protocol
        raise ModelUnavailableError("no model is configured (--model none); this turn cannot run")


_TOOL = re.compile(r"^/tool\s+(?P<name>[A-Za-z0-9_.\-]+)(?:\s+(?P<args>.*))?$", re.DOTALL)


def help_text(phrases: Sequence[hookspecs.ScriptedPhrase]) -> str:
    """What the scripted model answers a message no phrase matches."""
    tries = [f'"{phrase.example}"' for phrase in phrases if phrase.example is not None]
    tool = '"/tool NAME {json}"'
    return (
        f"I am the scripted demo model. Try {', '.join([*tries, f'or {tool}']) if tries else tool}."
    )


class ScriptedModel:
    name = "scripted"

    async def run_turn(self, turn: Turn) -> None:
        text = turn.message.text
        match = _TOOL.match(text.strip())
        if match:
            raw = (match["args"] or "{}").strip()
            try:
                arguments = _json.loads(raw)
            except _json.JSONError as exc:
                turn.say(f"Those tool arguments are not valid JSON: {exc}")
                return
            value = await turn.call_tool(match["name"], arguments)
            turn.say(_json.dumps(value))
            return
        phrases = turn.scripted_phrases()
        for phrase in phrases:
            found = phrase.pattern.match(text)
            if found is None:
                continue
            result: JSONValue = None
            if phrase.tool is not None:
                arguments = {} if phrase.arguments is None else phrase.arguments(found)
                result = await turn.call_tool(phrase.tool, arguments)
            turn.say(phrase.reply(found, result))
            return
        turn.say(help_text(phrases))


def make_model(name: str) -> ModelAdapter:
    if name == "scripted":
        return ScriptedModel()
    if name == "none":
        return NoModel()
    raise ValueError(f"unknown model adapter {name!r} (choose scripted or none)")
