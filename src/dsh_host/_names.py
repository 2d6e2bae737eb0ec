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

:func:`session_name` reads a whole log; :class:`NameTracker` gives the same answer one appended
event at a time (the persistence coordinator stores a live Session's name with the batch that
changed it, without walking its log again at each flush).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

from dsh_hookspecs import Event

__all__ = [
    "AUTO_NAME_CHARS",
    "MAX_NAME_CHARS",
    "RENAME",
    "NameTracker",
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


def _call_key(data: Mapping[str, object]) -> object:
    """What pairs a ``tool/call`` with its ``tool/result``: the ``callId`` (a log is data: one
    that is not a JSON scalar pairs with nothing)."""
    call_id = data.get("callId")
    if call_id is None or isinstance(call_id, str | int | float | bool):
        return call_id
    return object()


class _FirstMessage:
    """The first typed message whose turn ran a tool that succeeded, read one event at a time."""

    __slots__ = ("calls", "candidate", "found")

    def __init__(self) -> None:
        #: The typed message of the turn being read, as a name.
        self.candidate: str | None = None
        #: The model's tool calls in that turn.
        self.calls: set[object] = set()
        #: The name, once a message made sense (then nothing changes it).
        self.found: str | None = None

    def take(self, event: Event) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        kind = event.type
        if kind == "user/message":
            text = data.get("text")
            typed = isinstance(text, str) and "source" not in data  # not a plugin's follow-up
            self.candidate = _auto_name(text) if isinstance(text, str) and typed else None
            self.calls = set()
        elif kind == "turn/end":
            self.candidate = None
        elif self.candidate is None:
            return
        elif kind == "tool/call" and "source" not in data:
            self.calls.add(_call_key(data))
        elif (
            kind == "tool/result"
            and _call_key(data) in self.calls
            and not _is_domain_error(data.get("value"))
        ):
            self.found = self.candidate


def _first_sensible_message(events: Sequence[Event]) -> str | None:
    """The name from the first typed message whose turn ran a tool that succeeded (one pass)."""
    reader = _FirstMessage()
    for event in events:
        reader.take(event)
        if reader.found is not None:
            return reader.found
    return None


def _renamed(event: Event) -> str | None:
    """The name a ``session/rename`` event gives, as shown; ``None`` when it gives none."""
    if event.type == RENAME and isinstance(event.data, dict):
        name = event.data.get("name")
        if isinstance(name, str) and (shown := shown_name(name)):
            return shown
    return None


def session_name(events: Sequence[Event]) -> str | None:
    """The name of a Session whose log is ``events``, or ``None`` when it has none yet."""
    for event in reversed(events):
        if (renamed := _renamed(event)) is not None:
            return renamed
    return _first_sensible_message(events)


class NameTracker:
    """:func:`session_name` of a growing log, taking in each event once.

    :meth:`feed` reads the events not read yet and answers the name of everything read so far:
    always what :func:`session_name` answers for that prefix. Once a name is found only a
    rename changes it, so a named log costs one type check per event.
    """

    __slots__ = ("_first", "_renamed", "read")

    def __init__(self) -> None:
        #: How many leading events of the log were taken in.
        self.read = 0
        self._renamed: str | None = None
        self._first = _FirstMessage()

    @property
    def name(self) -> str | None:
        """The name of the events read so far (``None``: none yet)."""
        return self._renamed if self._renamed is not None else self._first.found

    def feed(self, events: Sequence[Event], end: int | None = None) -> str | None:
        """Take in ``events[read:end]`` (``end``: all of them) and answer :attr:`name`.

        ``events`` is the same log each time, grown only at its end."""
        stop = len(events) if end is None else min(end, len(events))
        if stop > self.read:
            first = self._first
            for event in events[self.read : stop]:
                if (renamed := _renamed(event)) is not None:
                    self._renamed = renamed
                elif first.found is None:
                    first.take(event)
            self.read = stop
        return self.name
