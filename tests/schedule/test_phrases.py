"""The reminder phrases the plugin offers a host's scripted model (``dsh_scripted_phrases``).

The demo texts are quoted word for word: the README and the browser tests rely on them.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_hookspecs import JSONValue, hookspecs
from dsh_schedule import MESSAGES, AfterRecord, SchedulePlugin, reminder_framing

RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt='stretch "now"\nplease',
    after_seconds=10,
    scheduled_at="2026-08-05T12:00:10.000Z",
)


def answer(text: str, value: JSONValue = None) -> tuple[str | None, Any, str] | None:
    """What the offered phrases make of ``text``: (tool, arguments, reply to ``value``)."""
    for phrase in SchedulePlugin().dsh_scripted_phrases():
        match = phrase.pattern.match(text)
        if match is not None:
            arguments = None if phrase.arguments is None else phrase.arguments(match)
            return phrase.tool, arguments, phrase.reply(match, value)
    return None


def test_hook_dsh_scripted_phrases() -> None:
    phrases = SchedulePlugin().dsh_scripted_phrases()
    assert all(isinstance(phrase, hookspecs.ScriptedPhrase) for phrase in phrases)
    assert [phrase.tool for phrase in phrases] == [
        None,  # the reminder follow-up: presented, no tool
        "schedule_create",
        "schedule_list",
        "schedule_delete",
    ]
    assert [phrase.example for phrase in phrases] == [
        None,
        "remind me in 10 seconds to stretch",
        "list reminders",
        "delete schedule-1",
    ]
    assert answer("hello") is None


@pytest.mark.parametrize(
    ("text", "seconds", "prompt"),
    [
        ("remind me in 10 seconds to stretch", 10, "stretch"),
        ("  Remind me in 2 min drink water  ", 120, "drink water"),
        ("remind me in 1 h to check\nthe log", 3600, "check\nthe log"),
        ("remind me in 3s to x", 3, "x"),
    ],
)
def test_remind_me_creates_a_reminder(text: str, seconds: int, prompt: str) -> None:
    value = {"id": "schedule-1", "scheduledAt": "2026-08-05T12:00:10.000Z", "prompt": prompt}
    tool, arguments, reply = answer(text, value) or (None, None, "")
    assert (tool, arguments) == ("schedule_create", {"prompt": prompt, "after_seconds": seconds})
    assert reply == (
        f'Done: reminder schedule-1 is due at 2026-08-05T12:00:10.000Z ("{prompt}"). '
        "It is delivered in this session only."
    )


def test_a_refused_create_is_worded_with_its_code_and_message() -> None:
    refused = {"code": "invalid_prompt", "message": MESSAGES["invalid_prompt"]}
    assert answer("remind me in 5 seconds to x", refused)[2] == (  # type: ignore[index]
        f"I could not create that reminder (invalid_prompt: {MESSAGES['invalid_prompt']})."
    )
    assert answer("remind me in 5 seconds to x", {"code": "oops"})[2] == (  # type: ignore[index]
        "I could not create that reminder (oops)."
    )
    assert answer("remind me in 5 seconds to x", [])[2] == (  # type: ignore[index]
        "I could not create that reminder (None)."
    )


def test_list_reminders_words_the_active_records() -> None:
    views = [
        {"id": "schedule-1", "prompt": "a", "scheduledAt": "T1", "state": "scheduled"},
        "not a view",
        {"id": "schedule-2", "prompt": "b", "scheduledAt": "T2", "state": "overdue"},
    ]
    for text in ("list reminders", "Show my reminders.", " list reminder "):
        tool, arguments, reply = answer(text, views) or (None, None, "")
        assert (tool, arguments) == ("schedule_list", None)  # called with {}
        assert reply == (
            "Active reminders in this session:\n"
            '- schedule-1: "a" at T1 (scheduled)\n'
            '- schedule-2: "b" at T2 (overdue)'
        )
    assert answer("list reminders", [])[2] == (  # type: ignore[index]
        "You have no active reminders in this session."
    )
    assert answer("list reminders", {"code": "corrupt_schedule_log"})[2] == (  # type: ignore[index]
        "I could not list reminders (corrupt_schedule_log)."
    )


def test_delete_words_deleted_missing_and_refused() -> None:
    tool, arguments, reply = answer("delete schedule-1", {"id": "schedule-1", "deleted": True}) or (
        None,
        None,
        "",
    )
    assert (tool, arguments, reply) == (
        "schedule_delete",
        {"id": "schedule-1"},
        "Deleted reminder schedule-1.",
    )
    missing = {"id": "schedule-9", "deleted": False, "code": "schedule_not_found"}
    assert answer("Cancel reminder schedule-9!", missing)[1:] == (  # type: ignore[index]
        {"id": "schedule-9"},
        "There is no active reminder schedule-9.",
    )
    assert answer("remove schedule-1", {"code": "persistence_uncertain"})[2] == (  # type: ignore[index]
        "I could not delete that reminder (persistence_uncertain)."
    )
    assert answer("remove schedule-1", "odd")[2] == (  # type: ignore[index]
        "I could not delete that reminder (None)."
    )


def test_a_reminder_follow_up_is_presented_as_the_reminder() -> None:
    frame = reminder_framing(RECORD)
    assert answer(frame) == (None, None, f"Reminder: {RECORD.prompt}")


@pytest.mark.parametrize(
    "frame",
    [
        "[SCHEDULE REMINDER]",
        "[SCHEDULE REMINDER]\nreminder_prompt_json: 42",
        '[SCHEDULE REMINDER]\nreminder_prompt_json:  "spaced"',
        '[SCHEDULE REMINDER]\nreminder_prompt_json: "unterminated',
        '[SCHEDULE REMINDER]\nreminder_prompt_json: "\\ud800"',  # a lone surrogate is no text
        '[SCHEDULE REMINDER]\nreminder_prompt_json: "a"\nreminder_prompt_json: nope',
    ],
)
def test_an_unreadable_reminder_follow_up_says_so(frame: str) -> None:
    assert answer(frame) == (None, None, "A reminder is due, but its text could not be read.")


def test_the_last_prompt_line_of_a_follow_up_counts() -> None:
    frame = '[SCHEDULE REMINDER]\nreminder_prompt_json: "a"\nreminder_prompt_json: "b" '
    assert answer(frame) == (None, None, "Reminder: b")


def test_the_phrases_are_anchored_at_the_start_of_the_message() -> None:
    assert answer("please remind me in 5 seconds to x") is None
    assert answer(" [SCHEDULE REMINDER]") is None
    assert answer("list reminders now") is None
    assert all(isinstance(p.pattern, re.Pattern) for p in SchedulePlugin().dsh_scripted_phrases())
