"""What a person calls a Session (issue 13 item 5): its last rename, else its first typed
message that made sense (its turn ran a tool that succeeded: issue 25 item 4), trimmed; a name a
user types is refused, plainly, when nothing of it could be shown. Every name is shown through
one rule (issue 23 item 4): the table in tests/names.py."""

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


def turn(text: str, value: object = None, call: str = "c1") -> list[tuple[str, Any]]:
    """One turn of a typed message; with a ``value``, the model's tool call answered with it."""
    tool: list[tuple[str, Any]] = []
    if value is not None:
        tool = [
            ("tool/call", {"callId": call, "name": "schedule_create", "arguments": {}}),
            ("tool/result", {"callId": call, "name": "schedule_create", "value": value}),
        ]
    return [
        ("turn/start", {"messageId": "m"}),
        ("user/message", {"text": text}),
        *tool,
        ("assistant/message", {"text": "ok"}),
        ("turn/end", {"outcome": "ok"}),
    ]


def typed_log(text: str) -> list[Event]:
    """The log of one typed message whose turn set a reminder (it made sense)."""
    return log(*turn(text, {"id": "schedule-1"}))


def test_a_session_without_a_typed_message_has_no_name_yet() -> None:
    assert session_name([]) is None
    followup = {"text": "[SCHEDULE REMINDER] ...", "source": {"kind": "plugin", "plugin": "x"}}
    assert (
        session_name(log(("user/message", followup), ("user/message", {"text": "  \n "}))) is None
    )


def test_the_first_typed_message_names_it_whitespace_collapsed_and_a_follow_up_never_does() -> None:
    followup = {"text": "[SCHEDULE REMINDER] x", "source": {"kind": "plugin"}}
    events = log(
        ("turn/start", {"messageId": "f"}),
        ("user/message", followup),
        ("tool/call", {"callId": "f1", "name": "schedule_list", "arguments": {}}),
        ("tool/result", {"callId": "f1", "name": "schedule_list", "value": {"items": []}}),
        ("turn/end", {"outcome": "ok"}),
        *turn("  remind me\n\tto  stretch  ", {"id": "schedule-1"}),
        *turn("a later message", {"id": "schedule-2"}, call="c2"),
    )
    assert session_name(events) == "remind me to stretch"


def test_only_a_first_message_that_made_sense_names_it() -> None:
    # Fails before issue 25 item 4: "hello", answered with help, named the Session.
    error = {"code": "invalid_time", "message": "..."}
    user_action = (
        "tool/call",
        {"callId": "u", "name": "x", "arguments": {}, "source": {"kind": "user"}},
    )
    events = log(
        *turn("hello"),  # help: no tool ran
        *turn("remind me at 25 o'clock", error),  # the tool refused it
        ("turn/start", {"messageId": "m"}),
        ("user/message", {"text": "cancel it"}),
        user_action,  # never the model's own call
        ("tool/result", {"callId": "u", "name": "x", "value": {"deleted": True}}),
        ("turn/end", {"outcome": "ok"}),
        # a call whose result comes after its turn ended (it cannot, but a log is data)
        ("turn/start", {"messageId": "m"}),
        ("user/message", {"text": "list them"}),
        ("tool/call", {"callId": "late", "name": "x", "arguments": {}}),
        ("turn/end", {"outcome": "error", "error": "boom"}),
        ("tool/result", {"callId": "late", "name": "x", "value": {}}),
        ("user/message", {"text": 3}),
        ("tool/call", {"callId": "n", "name": "x", "arguments": {}}),
        ("tool/result", {"callId": "n", "name": "x", "value": {}}),
        ("turn/end", {"outcome": "ok"}),
        ("tool/result", "junk"),
    )
    assert session_name(events) is None
    assert session_name([*events, *log(*turn("remind me in 10 minutes to stretch", {"id": "s"}))])
    named = log(*[*turn("hello"), *turn("remind me in 10 minutes to stretch", {"id": "s"})])
    assert session_name(named) == "remind me in 10 minutes to stretch"
    # A result that is not an error names it, whatever the tool answered.
    assert session_name(log(*turn("what reminders do I have?", {"items": []}))) == (
        "what reminders do I have?"
    )
    assert session_name(log(*turn("list", {"code": 3}))) == "list"  # not a domain error


def test_a_long_first_message_is_cut_with_an_ellipsis() -> None:
    text = "word " * 40
    name = session_name(typed_log(text))
    assert name is not None
    assert name.endswith("…")
    assert len(name) <= AUTO_NAME_CHARS + 1
    assert name[:-1] == name[:-1].rstrip()  # no space before the ellipsis
    exact = "x" * AUTO_NAME_CHARS
    assert session_name(typed_log(exact)) == exact


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
    events = log(("user/message", "junk"), ("user/message", {"text": 3}), *turn("ok", {"id": "s"}))
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
    assert session_name(typed_log(typed)) == shown
    # A rename read back from a log written before the rule: shown by it too; one with nothing
    # visible left is passed over like an empty one.
    assert session_name([*typed_log("first"), *log((RENAME, {"name": typed}))]) == (
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
    assert session_name(typed_log(text)) == "y" * AUTO_NAME_CHARS
    name = session_name(typed_log("\u202e" + "z" * 100))
    assert name == "z" * AUTO_NAME_CHARS + "…"
