"""What a person calls a Session (issue 13 item 5): its last rename, else its first typed
message, trimmed; a name a user types is refused, plainly, when nothing of it could be shown.
Every name is shown through one rule (issue 23 item 4): the table in tests/names.py."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_hookspecs import Event
from dsh_host._names import (
    AUTO_NAME_CHARS,
    MAX_NAME_CHARS,
    RENAME,
    clean_name,
    session_name,
    shown_name,
)
from tests.names import SHOWN_NAMES


def log(*items: tuple[str, Any]) -> list[Event]:
    return [Event(seq=i, type=kind, time=i, data=data) for i, (kind, data) in enumerate(items)]


def test_a_session_without_a_typed_message_has_no_name_yet() -> None:
    assert session_name([]) is None
    followup = {"text": "[SCHEDULE REMINDER] ...", "source": {"kind": "plugin", "plugin": "x"}}
    assert (
        session_name(log(("user/message", followup), ("user/message", {"text": "  \n "}))) is None
    )


def test_the_first_typed_message_names_it_whitespace_collapsed_and_a_follow_up_never_does() -> None:
    events = log(
        ("user/message", {"text": "[SCHEDULE REMINDER] x", "source": {"kind": "plugin"}}),
        ("assistant/message", {"text": "Hello"}),
        ("user/message", {"text": "  remind me\n\tto  stretch  "}),
        ("user/message", {"text": "a later message"}),
    )
    assert session_name(events) == "remind me to stretch"


def test_a_long_first_message_is_cut_with_an_ellipsis() -> None:
    text = "word " * 40
    name = session_name(log(("user/message", {"text": text})))
    assert name is not None
    assert name.endswith("…")
    assert len(name) <= AUTO_NAME_CHARS + 1
    assert name[:-1] == name[:-1].rstrip()  # no space before the ellipsis
    exact = "x" * AUTO_NAME_CHARS
    assert session_name(log(("user/message", {"text": exact}))) == exact


def test_the_last_rename_wins_over_the_first_message_and_over_earlier_renames() -> None:
    events = log(
        ("user/message", {"text": "first"}),
        (RENAME, {"name": "Deploys"}),
        (RENAME, {"name": "Deploy checks"}),
        (RENAME, {"name": ""}),  # not a name: passed over
        (RENAME, "junk"),
    )
    assert session_name(events) == "Deploy checks"


def test_malformed_messages_are_passed_over() -> None:
    events = log(
        ("user/message", "junk"), ("user/message", {"text": 3}), ("user/message", {"text": "ok"})
    )
    assert session_name(events) == "ok"


def test_a_typed_name_is_trimmed() -> None:
    assert clean_name("  Deploy checks \n") == "Deploy checks"
    assert clean_name("提醒" * (MAX_NAME_CHARS // 2)) == "提醒" * (MAX_NAME_CHARS // 2)
    # The length is the shown name's: invisible characters do not count.
    assert clean_name("x\u200b" * MAX_NAME_CHARS) == "x" * MAX_NAME_CHARS


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "name must be a string"),
        (12, "name must be a string"),
        ("   ", "name must not be blank"),
        ("x" * (MAX_NAME_CHARS + 1), f"name must be at most {MAX_NAME_CHARS} characters"),
        ("\u200b\x07\t\u202e", "name must not be blank"),
        ("x\u200b" * (MAX_NAME_CHARS + 1), f"name must be at most {MAX_NAME_CHARS} characters"),
    ],
)
def test_a_name_that_could_not_be_shown_is_refused_plainly(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        clean_name(value)


_IDS = [case[0] for case in SHOWN_NAMES]


@pytest.mark.parametrize(("typed", "shown"), [case[1:] for case in SHOWN_NAMES], ids=_IDS)
def test_a_first_message_and_a_logged_rename_are_shown_by_one_rule(
    typed: str, shown: str | None
) -> None:
    # Fails before issue 23 item 4: control, bidi and invisible characters were shown as typed.
    assert shown_name(typed) == (shown or "")
    assert session_name(log(("user/message", {"text": typed}))) == shown
    # A rename read back from a log written before the rule: shown by it too; one with nothing
    # visible left is passed over like an empty one.
    assert session_name(log(("user/message", {"text": "first"}), (RENAME, {"name": typed}))) == (
        shown or "first"
    )
    if shown is None:
        with pytest.raises(ValueError, match=r"^name must not be blank$"):
            clean_name(typed)
    else:
        assert clean_name(typed) == shown


def test_the_first_message_is_cleaned_before_it_is_cut() -> None:
    # Invisible characters take no room: the 60 characters are all shown ones.
    text = "\u200b" * 100 + "\x1b" * 10 + "y" * AUTO_NAME_CHARS
    assert session_name(log(("user/message", {"text": text}))) == "y" * AUTO_NAME_CHARS
    name = session_name(log(("user/message", {"text": "\u202e" + "z" * 100})))
    assert name == "z" * AUTO_NAME_CHARS + "…"
