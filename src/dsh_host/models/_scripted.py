"""The ``scripted`` model adapter: keyless and deterministic, it knows no plugin.

* ``/tool NAME {json}`` calls that tool with those arguments, then replies with the result;
* otherwise the first phrase a plugin offers that matches the message answers it: it may call a
  tool and word the result, present a plugin's follow-up, or (``respond``) act through the
  whole turn, or pass the message on to the next phrase;
* anything else gets a short answer in the message's language (Chinese for a message with
  Chinese characters, else English) quoting three of the offered examples that fit what was
  typed (those sharing the most words with it; the first ones when none do). With no example
  offered, it names ``/tool NAME {json}``.

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
_CJK = re.compile(r"[\u3400-\u9fff]")
#: The words that make an example fit a message: three letters or more, or one Chinese character.
_WORD = re.compile(r"[a-z0-9']{3,}|[\u3400-\u9fff]")
#: How many examples the help quotes.
HELP_EXAMPLES = 3

#: Where a scripted model gets its phrases: the loaded plugins' ``dsh_scripted_phrases``.
PhraseSource = Callable[[], Sequence[ScriptedPhrase]]


def _fit(example: str, typed: set[str]) -> int:
    return len(set(_WORD.findall(example.lower())) & typed)


def help_text(phrases: Sequence[ScriptedPhrase], text: str = "") -> str:
    """What the scripted model answers ``text`` when no phrase took it: three offered examples
    in the message's language that share the most words (a Chinese character counts as one)
    with it (words of three letters or more), in the order offered when they tie."""
    offered = [
        example
        for phrase in phrases
        for example in (
            *((phrase.example,) if phrase.example is not None else ()),
            *phrase.examples,
        )
    ]
    chinese = _CJK.search(text) is not None
    same = [example for example in offered if (_CJK.search(example) is not None) == chinese]
    pool = list(dict.fromkeys(same or offered))
    if not pool:
        return 'I am the scripted demo model. Try "/tool NAME {json}".'
    typed = set(_WORD.findall(text.lower()))
    ranked = sorted(pool, key=lambda example: -_fit(example, typed))[:HELP_EXAMPLES]
    if chinese:
        quoted = [f"“{example}”" for example in ranked]
        tail = "、".join(quoted[:-1]) + "或" + quoted[-1] if len(quoted) > 1 else quoted[0]
        return f"我没有听懂。可以试试：{tail}。"  # noqa: RUF001
    quoted = [f'"{example}"' for example in ranked]
    tail = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]
    return f"I did not understand that. Try {tail}."


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
            if phrase.respond is not None:
                answer = await phrase.respond(found, turn)
                if answer is None:
                    continue
                turn.say(answer)
                return
            result: JSONValue = None
            if phrase.tool is not None:
                if phrase.timed_arguments is not None:
                    arguments = phrase.timed_arguments(found, turn.time)
                else:
                    arguments = {} if phrase.arguments is None else phrase.arguments(found)
                result = await turn.call_tool(phrase.tool, arguments)
            assert phrase.reply is not None  # a phrase without respond has one
            turn.say(phrase.reply(found, result))
            return
        turn.say(help_text(phrases, text))
