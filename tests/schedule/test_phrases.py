"""The reminder phrases the plugin offers a host's scripted model (``dsh_scripted_phrases``).

The demo texts are quoted word for word: the README and the browser tests rely on them.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_hookspecs import JSONValue, TimeContext, hookspecs
from dsh_schedule import MESSAGES, AfterRecord, SchedulePlugin, parse_instant, reminder_framing
from dsh_schedule._answers import batch_framing

RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt='stretch "now"\nplease',
    after_seconds=10,
    scheduled_at="2026-08-05T12:00:10.000Z",
)


#: The turn's time: 2026-08-05T12:00Z, which is 20:00 in Shanghai and 08:00 in New York.
NOON = TimeContext(now_ms=parse_instant("2026-08-05T12:00:00.000Z"), time_zone="Asia/Shanghai")


def answer(
    text: str, value: JSONValue = None, time: TimeContext = NOON
) -> tuple[str | None, Any, str] | None:
    """What the offered phrases make of ``text`` in a turn at ``time``: (tool, arguments, reply
    to ``value``), as the host's scripted model uses them."""
    for phrase in SchedulePlugin().dsh_scripted_phrases():
        match = phrase.pattern.match(text)
        if match is not None:
            if phrase.timed_arguments is not None:
                arguments = phrase.timed_arguments(match, time)
            else:
                arguments = None if phrase.arguments is None else phrase.arguments(match)
            return phrase.tool, arguments, phrase.reply(match, value)
    return None


def test_hook_dsh_scripted_phrases() -> None:
    phrases = SchedulePlugin().dsh_scripted_phrases()
    assert all(isinstance(phrase, hookspecs.ScriptedPhrase) for phrase in phrases)
    assert [phrase.tool for phrase in phrases] == [
        None,  # the reminder follow-up: presented, no tool
        None,  # the batch follow-up of due fixed-rate reminders, likewise
        *["schedule_create"] * 8,
        "schedule_list",
        "schedule_delete",
    ]
    assert [phrase.example for phrase in phrases] == [
        None,
        None,
        "remind me in 10 seconds to stretch",
        "remind me to stretch in 10 minutes",
        "remind me at 18:30 Europe/Paris to join the call",
        "remind me tomorrow at 9am to call mom",
        "every 30 minutes remind me to drink water",
        "remind me every 2 hours to stand up",
        "提醒我10分钟后伸展一下",
        "30秒后提醒我喝水",
        "list reminders",
        "delete schedule-1",
    ]
    # Each example is understood by its own phrase.
    for phrase in phrases[2:]:
        assert phrase.example is not None
        assert phrase.pattern.match(phrase.example)
        assert answer(phrase.example) is not None
        assert answer(phrase.example)[0] == phrase.tool  # type: ignore[index]
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


@pytest.mark.parametrize(
    ("text", "seconds", "prompt"),
    [
        ("提醒我10分钟后伸展一下", 600, "伸展一下"),
        ("提醒我10秒后喝水", 10, "喝水"),
        ("提醒我10秒钟以后喝水。", 10, "喝水"),
        ("请提醒我在 2 小时之后 开会", 7200, "开会"),
        ("30秒后提醒我喝水！", 30, "喝水"),
        ("请在1个小时后提醒我打电话", 3600, "打电话"),
        ("5分后提醒我看一下部署", 300, "看一下部署"),
    ],
)
def test_the_chinese_phrase_creates_a_reminder_and_answers_in_chinese(
    text: str, seconds: int, prompt: str
) -> None:
    value = {"id": "schedule-1", "scheduledAt": "2026-08-05T12:00:10.000Z", "prompt": prompt}
    tool, arguments, reply = answer(text, value) or (None, None, "")
    assert (tool, arguments) == ("schedule_create", {"prompt": prompt, "after_seconds": seconds})
    assert reply == (
        "好的：提醒 schedule-1 将于 2026-08-05T12:00:10.000Z 到期"
        f"（“{prompt}”），只在当前会话中送达。"
    )
    refused = {"code": "invalid_prompt", "message": "m"}
    assert answer(text, refused)[2] == "无法设置这个提醒（invalid_prompt: m）。"  # type: ignore[index]
    assert answer(text, [])[2] == "无法设置这个提醒（None）。"  # type: ignore[index]


@pytest.mark.parametrize(
    "text", ["提醒我喝水", "提醒我十分钟后喝水", "10分钟提醒我喝水", "提醒我10天后喝水"]
)
def test_chinese_the_phrase_does_not_understand_gets_the_help(text: str) -> None:
    assert answer(text) is None


def test_a_chinese_reminder_is_presented_in_chinese() -> None:
    record = AfterRecord(
        id="schedule-2", kind="after", prompt="喝水", after_seconds=10,
        scheduled_at="2026-08-05T12:00:10.000Z",
    )  # fmt: skip
    assert answer(reminder_framing(record)) == (None, None, "提醒：喝水")


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
        {
            "id": "schedule-3",
            "kind": "every",
            "prompt": "c",
            "everySeconds": 1800,
            "scheduledAt": "T3",
            "state": "scheduled",
        },
    ]
    for text in ("list reminders", "Show my reminders.", " list reminder "):
        tool, arguments, reply = answer(text, views) or (None, None, "")
        assert (tool, arguments) == ("schedule_list", None)  # called with {}
        assert reply == (
            "Active reminders in this session:\n"
            '- schedule-1: "a" at T1 (scheduled)\n'
            '- schedule-2: "b" at T2 (overdue)\n'
            '- schedule-3: "c" every 30 minutes, next at T3 (scheduled)'
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


# --------------------------------------------------------------------------------------------
# The phrases of issue 12: the suffix order, at a time of day, tomorrow, and every N


@pytest.mark.parametrize(
    ("text", "seconds", "prompt"),
    [
        ("remind me to stretch in 10 minutes", 600, "stretch"),
        ("Remind me to check in on Sam in 2 hours.", 7200, "check in on Sam"),
        ("remind me to drink water in 30s", 30, "drink water"),
        ("  remind me to call\nmom in 1 hour  ", 3600, "call\nmom"),
    ],
)
def test_remind_me_to_x_in_n_creates_an_after_reminder(text, seconds, prompt):
    tool, arguments, _ = answer(text) or (None, None, "")
    assert (tool, arguments) == ("schedule_create", {"prompt": prompt, "after_seconds": seconds})


def at_of(text: str, time: TimeContext = NOON) -> dict[str, object]:
    tool, arguments, _ = answer(text, None, time) or (None, None, "")
    assert tool == "schedule_create", text
    assert isinstance(arguments, dict)
    assert set(arguments) == {"prompt", "at"}
    return {"prompt": arguments["prompt"], **arguments["at"]}


def turn_at(instant: str, time_zone: str | None) -> TimeContext:
    return TimeContext(now_ms=parse_instant(instant), time_zone=time_zone)


def test_remind_me_at_a_time_is_the_next_such_time_in_the_turns_zone():
    # 20:00 in Shanghai: 18:30 has passed there today, 20:30 has not.
    assert at_of("remind me at 18:30 to join the call") == {
        "prompt": "join the call",
        "date": "2026-08-06",
        "time": "18:30:00",
        "time_zone": "Asia/Shanghai",
    }
    assert at_of("remind me at 20:30 to eat")["date"] == "2026-08-05"
    assert at_of("remind me at 20:00 to eat")["date"] == "2026-08-06"  # this minute has begun
    assert at_of("remind me at 20:01 to eat")["date"] == "2026-08-05"
    assert at_of("remind me at 8:30pm to eat")["time"] == "20:30:00"


def test_remind_me_at_a_time_in_a_named_zone_uses_that_zone():
    # 08:00 in New York, whatever the browser's zone
    assert at_of("remind me at 18:30 America/New_York to join the call") == {
        "prompt": "join the call",
        "date": "2026-08-05",
        "time": "18:30:00",
        "time_zone": "America/New_York",
    }
    assert at_of("remind me at 7:00 America/New_York to run")["date"] == "2026-08-06"
    assert at_of("remind me at 9am UTC to stand up")["time_zone"] == "UTC"
    assert at_of("remind me at 9am UTC to stand up")["date"] == "2026-08-06"  # 12:00 UTC now
    assert at_of("Remind me at 9am utc to stand up")["time_zone"] == "UTC"
    # other zones keep their spelling: the tool refuses a wrongly cased one
    assert at_of("remind me at 9am asia/shanghai to x")["time_zone"] == "asia/shanghai"


def test_without_a_zone_from_the_browser_times_are_utc():
    no_zone = turn_at("2026-08-05T12:00:00.000Z", None)
    assert at_of("remind me at 18:30 to x", no_zone) == {
        "prompt": "x",
        "date": "2026-08-05",
        "time": "18:30:00",
        "time_zone": "UTC",
    }
    assert at_of("remind me tomorrow at 9am to call mom", no_zone) == {
        "prompt": "call mom",
        "date": "2026-08-06",
        "time": "09:00:00",
        "time_zone": "UTC",
    }


def test_a_zone_tzdata_lacks_is_passed_on_for_the_tool_to_refuse():
    # The date is worked out in UTC; the tool answers invalid_time_zone.
    assert at_of("remind me at 18:30 Mars/Olympus_Mons to wave") == {
        "prompt": "wave",
        "date": "2026-08-05",
        "time": "18:30:00",
        "time_zone": "Mars/Olympus_Mons",
    }


@pytest.mark.parametrize(
    ("clock", "time"),
    [
        ("9am", "09:00:00"),
        ("9 AM", "09:00:00"),
        ("9:15am", "09:15:00"),
        ("9pm", "21:00:00"),
        ("9 p.m.", "21:00:00"),
        ("21:00", "21:00:00"),
        ("12am", "00:00:00"),
        ("12pm", "12:00:00"),
        ("12:30am", "00:30:00"),
        ("00:05", "00:05:00"),
        # nonsense goes to the tool, which refuses it in its words
        ("13pm", "37:00:00"),
        ("0am", "24:00:00"),
        ("25:00", "25:00:00"),
        ("9:75", "09:75:00"),
    ],
)
def test_remind_me_tomorrow_reads_12_and_24_hour_clocks(clock, time):
    assert at_of(f"remind me tomorrow at {clock} to call mom") == {
        "prompt": "call mom",
        "date": "2026-08-06",
        "time": time,
        "time_zone": "Asia/Shanghai",
    }


def test_tomorrow_is_the_next_day_where_the_user_is():
    # 16:30 UTC is already 00:30 on the 6th in Shanghai, still the 5th in New York.
    late = turn_at("2026-08-05T16:30:00.000Z", "Asia/Shanghai")
    assert at_of("remind me tomorrow at 9am to call mom", late)["date"] == "2026-08-07"
    assert at_of("remind me tomorrow at 9am America/New_York to call", late) == {
        "prompt": "call",
        "date": "2026-08-06",
        "time": "09:00:00",
        "time_zone": "America/New_York",
    }
    assert at_of("remind me at 9am to call mom", late)["date"] == "2026-08-06"  # today there


@pytest.mark.parametrize(
    ("text", "seconds", "prompt"),
    [
        ("every 30 minutes remind me to drink water", 1800, "drink water"),
        ("Every 2 hours, remind me to stand up.", 7200, "stand up."),
        ("every 1 h remind me to x", 3600, "x"),
        ("every 1 minute remind me to blink", 60, "blink"),  # the tool refuses it
        ("remind me every 10 minutes to stretch", 600, "stretch"),
        ("remind me every 3 hours to eat", 10800, "eat"),
        ("remind me every 45 seconds to breathe", 45, "breathe"),
    ],
)
def test_every_n_creates_a_fixed_rate_reminder(text, seconds, prompt):
    tool, arguments, _ = answer(text) or (None, None, "")
    assert (tool, arguments) == ("schedule_create", {"prompt": prompt, "every_seconds": seconds})


def view(**fields: object) -> dict[str, object]:
    return {
        "id": "schedule-2",
        "prompt": "drink water",
        "scheduledAt": "2026-08-05T12:30:00.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
        **fields,
    }


@pytest.mark.parametrize(
    ("every", "words"),
    [
        (1800, "every 30 minutes"),
        (3600, "every hour"),
        (7200, "every 2 hours"),
        (5400, "every 90 minutes"),
        (300, "every 5 minutes"),
        (301, "every 301 seconds"),
        (None, "at a fixed rate"),
        ("1800", "at a fixed rate"),
    ],
)
def test_a_created_fixed_rate_reminder_is_worded_with_its_rate_and_next_time(every, words):
    value = view(kind="every", everySeconds=every)
    if every is None:
        del value["everySeconds"]
    reply = answer("every 30 minutes remind me to drink water", value)[2]  # type: ignore[index]
    assert reply == (
        f"Done: reminder schedule-2 repeats {words}, next at 2026-08-05T12:30:00.000Z "
        '("drink water"). It is delivered in this session only.'
    )


def test_a_created_at_reminder_is_worded_with_its_utc_instant():
    value = view(kind="at", prompt="call mom", scheduledAt="2026-08-06T01:00:00.000Z")
    assert answer("remind me tomorrow at 9am to call mom", value)[2] == (  # type: ignore[index]
        'Done: reminder schedule-2 is due at 2026-08-06T01:00:00.000Z ("call mom"). '
        "It is delivered in this session only."
    )


def test_refusals_a_demo_user_meets_say_what_to_do():
    too_often = {"code": "frequency_too_high", "message": "every_seconds must be at least 300."}
    assert answer("every 1 minute remind me to blink", too_often)[2] == (  # type: ignore[index]
        "I could not create that reminder (frequency_too_high: every_seconds must be at least "
        "300.). A reminder can repeat at most every 5 minutes."
    )
    past = {"code": "not_future", "message": "The scheduled time must be strictly in the future."}
    assert answer("remind me at 9am to x", past)[2] == (  # type: ignore[index]
        "I could not create that reminder (not_future: The scheduled time must be strictly in "
        "the future.). That time has already passed."
    )


@pytest.mark.parametrize(
    "text",
    [
        "remind me at 9 to x",  # a bare hour: am or pm?
        "remind me at 18:30",  # nothing to remind of
        "remind me at 18:30 Europe/Paris",
        "remind me tomorrow to call mom",
        "remind me tomorrow at noon to call mom",
        "every 30 minutes drink water",
        "remind me every day to x",
        "remind me to stretch",
        "remind me to stretch in a while",
    ],
)
def test_what_the_phrases_do_not_understand_gets_the_help(text):
    assert answer(text) is None


# --------------------------------------------------------------------------------------------
# The batch follow-up of due fixed-rate reminders


def test_a_batch_follow_up_is_presented_as_its_reminders_in_order():
    two = batch_framing(
        [
            ("schedule-1", "2026-08-05T12:00:00.000Z", "Check primary metrics"),
            ("schedule-2", "2026-08-05T11:59:00.000Z", 'line\n"quoted"'),
        ]
    )
    assert answer(two) == (None, None, 'Reminders: Check primary metrics; line\n"quoted"')
    one = batch_framing([("schedule-3", "2026-08-05T12:05:00.000Z", "drink water")])
    assert answer(one) == (None, None, "Reminder: drink water")


@pytest.mark.parametrize(
    "frame",
    [
        "[SCHEDULE REMINDER BATCH]",
        "[SCHEDULE REMINDER BATCH]\nPresent all due reminders.\nreminders_json: []",
        batch_framing([("schedule-1", "2026-08-05T12:00:00.000Z", "x")]) + " ",
        batch_framing([("schedule-1", "2026-08-05T12:00:00.000Z", "\ud800")]),  # no text
    ],
)
def test_an_unreadable_batch_follow_up_says_so(frame):
    assert answer(frame) == (None, None, "Reminders are due, but their text could not be read.")
