"""What a person calls a Session: its last ``session/rename``, else its first typed message.

A rename is an event (``session/rename`` with ``{"name"}``) so it survives restarts and a fork
inherits it with the seed. Without one, the first ``user/message`` the user typed (one without
a ``source``: not a plugin's follow-up) names the Session, its whitespace collapsed and cut to
:data:`AUTO_NAME_CHARS` characters plus an ellipsis.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from dsh_hookspecs import Event

__all__ = ["AUTO_NAME_CHARS", "MAX_NAME_CHARS", "RENAME", "clean_name", "session_name"]

#: The event type of a rename.
RENAME: Final = "session/rename"
#: A name is at most this many characters after trimming.
MAX_NAME_CHARS: Final = 120
#: A name taken from the first message is cut to this many characters.
AUTO_NAME_CHARS: Final = 60
_SPACE: Final = re.compile(r"\s+")


def clean_name(value: object) -> str:
    """The trimmed name, or :class:`ValueError` with a message a user can act on."""
    if not isinstance(value, str):
        raise ValueError("name must be a string")  # noqa: TRY004 - the API answers 422
    name = value.strip()
    if not name:
        raise ValueError("name must not be blank")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"name must be at most {MAX_NAME_CHARS} characters")
    if any(unicodedata.category(char) in ("Cc", "Cs") for char in name):
        raise ValueError("name must not contain control characters")
    return name


def _auto_name(text: str) -> str | None:
    collapsed = _SPACE.sub(" ", text).strip()
    if not collapsed:
        return None
    if len(collapsed) <= AUTO_NAME_CHARS:
        return collapsed
    return collapsed[:AUTO_NAME_CHARS].rstrip() + "…"


def session_name(events: Sequence[Event]) -> str | None:
    """The name of a Session whose log is ``events``, or ``None`` when it has none yet."""
    for event in reversed(events):
        if event.type == RENAME and isinstance(event.data, dict):
            name = event.data.get("name")
            if isinstance(name, str) and name:
                return name
    for event in events:
        data = event.data
        if event.type != "user/message" or not isinstance(data, dict) or "source" in data:
            continue
        text = data.get("text")
        if isinstance(text, str) and (name := _auto_name(text)) is not None:
            return name
    return None
