"""The ``scripted`` model adapter: keyless and deterministic, it knows no plugin.

* ``/tool NAME {json}`` calls that tool with those arguments, then replies with the result;
* otherwise the first phrase a plugin offers that matches the message answers it: it may call a
  tool and word the result, or present a plugin's follow-up;
* anything else gets a short help text naming what it understands.

The phrases come from the ``phrases`` callable it is created with (the default plugin passes
one that gathers ``dsh_scripted_phrases`` from the loaded plugins), asked again on every turn
so that a plugin loaded later teaches it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dsh_hookspecs import JSONValue, ScriptedPhrase, Turn

from .. import _json

_TOOL = re.compile(r"^/tool\s+(?P<name>[A-Za-z0-9_.\-]+)(?:\s+(?P<args>.*))?$", re.DOTALL)

#: Where a scripted model gets its phrases: the loaded plugins' ``dsh_scripted_phrases``.
PhraseSource = Callable[[], Sequence[ScriptedPhrase]]


def help_text(phrases: Sequence[ScriptedPhrase]) -> str:
    """What the scripted model answers a message no phrase matches."""
    tries = [f'"{phrase.example}"' for phrase in phrases if phrase.example is not None]
    tool = '"/tool NAME {json}"'
    return (
        f"I am the scripted demo model. Try {', '.join([*tries, f'or {tool}']) if tries else tool}."
    )


class ScriptedModel:
    name = "scripted"

    def __init__(self, phrases: PhraseSource = tuple) -> None:
        """``phrases()`` answers the phrases to match, on each turn (none by default)."""
        self._phrases = phrases

    async def run_turn(self, turn: Turn) -> None:
        text = turn.input.text
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
        phrases = self._phrases()
        for phrase in phrases:
            found = phrase.pattern.match(text)
            if found is None:
                continue
            result: JSONValue = None
            if phrase.tool is not None:
                if phrase.timed_arguments is not None:
                    arguments = phrase.timed_arguments(found, turn.time)
                else:
                    arguments = {} if phrase.arguments is None else phrase.arguments(found)
                result = await turn.call_tool(phrase.tool, arguments)
            turn.say(phrase.reply(found, result))
            return
        turn.say(help_text(phrases))
