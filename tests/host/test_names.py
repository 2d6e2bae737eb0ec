"""What a person calls a Session (issue 13 item 5): its last rename, else its first typed
message, trimmed; a name a user types is refused, plainly, when it could not be shown."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_hookspecs import Event
from dsh_host._names import AUTO_NAME_CHARS, MAX_NAME_CHARS, RENAME, clean_name, session_name


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


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "name must be a string"),
        (12, "name must be a string"),
        ("   ", "name must not be blank"),
        ("x" * (MAX_NAME_CHARS + 1), f"name must be at most {MAX_NAME_CHARS} characters"),
        ("tab\tinside", "name must not contain control characters"),
        ("bell\x07", "name must not contain control characters"),
        ("half \ud800 pair", "name must not contain control characters"),
    ],
)
def test_a_name_that_could_not_be_shown_is_refused_plainly(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        clean_name(value)
