"""What a person calls a Session: its last ``session/rename``, else its first typed message that
made sense.

A rename is an event (``session/rename`` with ``{"name"}``) so it survives restarts and a fork
inherits it with the seed. Without one, the first ``user/message`` the user typed (one without
a ``source``: not a plugin's follow-up) *whose turn ran a tool that succeeded* names the
Session, cut to :data:`AUTO_NAME_CHARS` characters plus an ellipsis. "Made sense" needs a signal
the log already holds: in that message's turn (up to its ``turn/end``) the model called a tool
(a ``tool/call`` without a ``source``) and its ``tool/result`` value is not a domain error
(``{"code", "message"}``). So "hello" or "asdf", answered with help, names nothing; "remind me in
10 minutes to stretch", which set a reminder, does. A Session with no such message has no name
yet (the page calls it "Untitled session").

Every name is shown through one rule, :func:`shown_name`, wherever it comes from: a typed rename
(:func:`clean_name`), a first message, and a rename read back from a log written before the rule
existed. It keeps a list entry from reading differently from what it holds: no terminal escapes,
no right-to-left overrides, no invisible characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from dsh_hookspecs import Event

__all__ = [
    "AUTO_NAME_CHARS",
    "MAX_NAME_CHARS",
    "RENAME",
    "clean_name",
    "session_name",
    "shown_name",
]

#: The event type of a rename.
RENAME: Final = "session/rename"
#: A name is at most this many characters once shown (:func:`shown_name`).
MAX_NAME_CHARS: Final = 120
#: A name taken from the first message is cut to this many characters.
AUTO_NAME_CHARS: Final = 60
#: ZERO WIDTH JOINER: the one format character kept, since emoji sequences need it.
_ZWJ: Final = "\u200d"
_SPACE: Final = re.compile(r"\s+")


def _shown_char(char: str) -> str:
    category = unicodedata.category(char)
    if category in ("Cc", "Cs"):
        return " " if char.isspace() else ""
    if category == "Cf" and char != _ZWJ:
        return ""
    return char


def shown_name(text: str) -> str:
    """``text`` as a name is shown; ``""`` when nothing visible is left.

    Control characters (category Cc: ESC, BEL, NUL, ...) and lone surrogates are dropped, except
    whitespace-like ones (tab, newline, NEL, ...), which become a space. Format characters
    (category Cf) are dropped: bidi embeddings, overrides, isolates and marks (U+202A..U+202E,
    U+2066..U+2069, U+200E, U+200F, U+061C), zero-width spaces (U+200B, U+2060, U+FEFF), soft
    hyphens; only U+200D ZERO WIDTH JOINER is kept, which emoji sequences need. Then every run
    of whitespace becomes one space, and the ends are trimmed.
    """
    return _SPACE.sub(" ", "".join(map(_shown_char, text))).strip()


def clean_name(value: object) -> str:
    """A typed name as it is stored and shown (:func:`shown_name`), or :class:`ValueError` with
    a message a user can act on when nothing is left of it or it is too long."""
    if not isinstance(value, str):
        raise ValueError("name must be a string")  # noqa: TRY004 - the API answers 422
    name = shown_name(value)
    if not name:
        raise ValueError("name must not be blank")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"name must be at most {MAX_NAME_CHARS} characters")
    return name


def _auto_name(text: str) -> str | None:
    shown = shown_name(text)
    if not shown:
        return None
    if len(shown) <= AUTO_NAME_CHARS:
        return shown
    return shown[:AUTO_NAME_CHARS].rstrip() + "…"


def _is_domain_error(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("code"), str)


def _first_sensible_message(events: Sequence[Event]) -> str | None:
    """The name from the first typed message whose turn ran a tool that succeeded (one pass)."""
    candidate: str | None = None  # the typed message of the turn being read, as a name
    calls: set[object] = set()  # the model's tool calls in that turn
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        if event.type == "user/message":
            text = data.get("text")
            typed = isinstance(text, str) and "source" not in data  # not a plugin's follow-up
            candidate = _auto_name(text) if isinstance(text, str) and typed else None
            calls = set()
        elif event.type == "turn/end":
            candidate = None
        elif candidate is None:
            continue
        elif event.type == "tool/call" and "source" not in data:
            calls.add(data.get("callId"))
        elif (
            event.type == "tool/result"
            and data.get("callId") in calls
            and not _is_domain_error(data.get("value"))
        ):
            return candidate
    return None


def session_name(events: Sequence[Event]) -> str | None:
    """The name of a Session whose log is ``events``, or ``None`` when it has none yet."""
    for event in reversed(events):
        if event.type == RENAME and isinstance(event.data, dict):
            name = event.data.get("name")
            if isinstance(name, str) and (shown := shown_name(name)):
                return shown
    return _first_sensible_message(events)
