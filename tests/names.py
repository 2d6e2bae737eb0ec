"""One table of typed names and how they are shown (issue 23 item 4), for both ways a name
arrives: ``session_name`` over a log (tests/host/test_names.py) and the HTTP rename and session
list (tests/web/test_names_http.py). ``None``: nothing visible is left (no auto name; a typed
rename is refused as blank)."""

from __future__ import annotations

from typing import Final

#: An emoji ZWJ sequence: the joiners stay, or it would show as three people.
_FAMILY: Final = "family \U0001f468\u200d\U0001f469\u200d\U0001f467"

#: ``(id, typed, shown)``.
SHOWN_NAMES: Final[list[tuple[str, str, str | None]]] = [
    ("escape", "esc\x1b[2Jcleared \x1b[31mred\x1b[0m", "esc[2Jcleared [31mred[0m"),
    ("bell-nul-del", "bell\x07 nul\x00 del\x7f!", "bell nul del!"),
    ("tabs-newlines", "\ttab\tand\r\nnewline\x0bvt\x0cff\x85nel ", "tab and newline vt ff nel"),
    ("rlo", "invoice\u202egpj.exe", "invoicegpj.exe"),
    ("embeddings", "\u202aa\u202bb\u202cc\u202dd\u202ee", "abcde"),
    ("isolates", "\u2066left\u2069 \u2067right\u2069 \u2068first\u2069", "left right first"),
    ("marks", "mark\u200e\u200f\u061c ed", "mark ed"),
    ("zero-width", "zero\u200bwidth\u2060word\ufeff joiner", "zerowidthword joiner"),
    ("zwj-emoji", "family \U0001f468\u200d\U0001f469\u200d\U0001f467", _FAMILY),
    ("cjk", "提醒我\u3000喝水 \uff0c好吗\uff1f", "提醒我 喝水 \uff0c好吗\uff1f"),
    ("line-separators", "one\u2028two\u2029three\xa0four", "one two three four"),
    ("surrogate", "half\ud800pair", "halfpair"),
    ("blank", "\u200b\u202e \x07\t\u2066\ufeff\x00", None),
]
