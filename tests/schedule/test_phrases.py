"""The reminder phrases the plugin offers a host's scripted model (``dsh_scripted_phrases``):
the follow-ups presented as reminders, and what the assistant says about reminders in people's
words (:mod:`dsh_schedule._words`). Reading messages is ``test_phrase_corpus.py``'s; the whole
turns (questions back, cancelling) are ``test_scripted_model.py``'s.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_hookspecs import JSONValue, TimeContext, hookspecs
from dsh_schedule import AfterRecord, SchedulePlugin, parse_instant, reminder_framing
from dsh_schedule import _words as words
from dsh_schedule._answers import batch_framing
from dsh_schedule._phrases import EXAMPLES

RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt='stretch "now"\nplease',
    after_seconds=10,
    scheduled_at="2026-08-05T12:00:10.000Z",
)


#: The turn's time: 2026-08-05T12:00Z, which is 20:00 in Shanghai and 08:00 in New York.
NOON = TimeContext(now_ms=parse_instant("2026-08-05T12:00:00.000Z"), time_zone="Asia/Shanghai")
UTC_NOON = TimeContext(now_ms=NOON.now_ms)


def answer(text: str, value: JSONValue = None) -> tuple[str | None, Any, str] | None:
    """What the follow-up phrases make of ``text``: (tool, arguments, reply)."""
    for phrase in SchedulePlugin().dsh_scripted_phrases():
        match = phrase.pattern.match(text)
        if match is not None and phrase.reply is not None:
            return phrase.tool, None, phrase.reply(match, value)
    return None


def test_hook_dsh_scripted_phrases() -> None:
    phrases = SchedulePlugin().dsh_scripted_phrases()
    assert all(isinstance(phrase, hookspecs.ScriptedPhrase) for phrase in phrases)
    follow, batch, conversation = phrases
    assert (follow.tool, batch.tool, follow.respond, batch.respond) == (None, None, None, None)
    assert conversation.respond is not None
    assert conversation.reply is None
    assert (conversation.example, *conversation.examples) == EXAMPLES
    assert conversation.pattern.match("anything at all")
    # The examples are in both languages, and each is understood.
    assert sum(bool(re.search(r"[\u4e00-\u9fff]", e)) for e in EXAMPLES) == 7


def test_a_phrase_needs_a_reply_or_respond() -> None:
    with pytest.raises(ValueError, match="reply or respond"):
        hookspecs.ScriptedPhrase(pattern=re.compile("x"))


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


def test_a_chinese_reminder_is_presented_in_chinese() -> None:
    record = AfterRecord(
        id="schedule-2", kind="after", prompt="喝水", after_seconds=10,
        scheduled_at="2026-08-05T12:00:10.000Z",
    )  # fmt: skip
    assert answer(reminder_framing(record)) == (None, None, "提醒：喝水")


@pytest.mark.parametrize(
    ("instant", "time", "lang", "said"),
    [
        ("2026-08-05T12:00:10.000Z", NOON, "en", "today at 20:00, in 10 seconds"),
        ("2026-08-05T12:10:00.000Z", NOON, "en", "today at 20:10, in 10 minutes"),
        ("2026-08-05T15:00:00.000Z", NOON, "en", "today at 23:00, in 3 hours"),
        ("2026-08-05T13:30:00.000Z", NOON, "en", "today at 21:30, in 1 hour 30 minutes"),
        ("2026-08-06T01:00:00.000Z", NOON, "en", "tomorrow at 09:00, in 13 hours"),
        ("2026-08-07T01:00:00.000Z", NOON, "en", "on Friday at 09:00, in 1 day 13 hours"),
        ("2026-08-09T01:00:00.000Z", NOON, "en", "on Sunday at 09:00, in 4 days"),
        ("2026-09-01T01:00:00.000Z", NOON, "en", "on 1 September at 09:00, in 27 days"),
        ("2027-01-01T01:00:00.000Z", NOON, "en", "on 1 January 2027 at 09:00, in 149 days"),
        ("2026-08-05T11:00:00.000Z", NOON, "en", "today at 19:00, due now"),
        ("2026-08-05T17:00:00.000Z", UTC_NOON, "en", "today at 17:00 UTC, in 5 hours"),
        ("2026-08-06T01:00:00.000Z", NOON, "zh", "明天 09:00（13小时后）"),
        ("2026-08-05T12:10:00.000Z", NOON, "zh", "今天 20:10（10分钟后）"),
        ("2026-08-07T01:00:00.000Z", NOON, "zh", "后天 09:00（1天13小时后）"),
        ("2026-08-09T01:00:00.000Z", NOON, "zh", "周日 09:00（4天后）"),
        ("2026-09-01T01:00:00.000Z", NOON, "zh", "9月1日 09:00（27天后）"),
        ("2027-01-01T01:00:00.000Z", NOON, "zh", "2027年1月1日 09:00（149天后）"),
        ("2026-08-05T11:00:00.000Z", NOON, "zh", "今天 19:00（已到期）"),
        ("not an instant", NOON, "en", "at some time"),
        ("not an instant", NOON, "zh", "在某个时间"),
    ],
)
def test_a_time_is_said_in_the_users_zone_and_language(instant, time, lang, said):
    assert words.when(instant, time, lang) == said


def view(**fields: Any) -> dict[str, Any]:
    return {
        "id": "schedule-2",
        "kind": "after",
        "prompt": "stretch",
        "scheduledAt": "2026-08-05T15:00:00.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
        **fields,
    }


@pytest.mark.parametrize(
    ("every", "en", "zh"),
    [
        (1800, "every 30 minutes", "每30分钟"),
        (3600, "every hour", "每1小时"),
        (7200, "every 2 hours", "每2小时"),
        (5400, "every 1 hour 30 minutes", "每1小时30分钟"),
        (None, "at a fixed rate", "定时"),
        ("1800", "at a fixed rate", "定时"),
    ],
)
def test_a_created_reminder_is_named_by_its_text_with_its_time(every, en, zh):
    assert words.created(view(), NOON, "en") == (
        'Reminder set: "stretch", today at 23:00, in 3 hours.'
    )
    assert words.created(view(), NOON, "zh") == "好的，已设置提醒“stretch”：今天 23:00（3小时后）。"
    repeating = view(kind="every", everySeconds=every)
    assert words.created(repeating, NOON, "en") == (
        f'Reminder set: "stretch", {en}; the first is today at 23:00, in 3 hours.'
    )
    assert words.created(repeating, NOON, "zh") == (
        f"好的，已设置提醒“stretch”，{zh}一次，第一次在今天 23:00（3小时后）。"
    )


@pytest.mark.parametrize(
    ("code", "en", "zh"),
    [
        (
            "frequency_too_high",
            "a reminder can repeat at most every 5 minutes",
            "提醒最多每5分钟重复一次",
        ),
        ("not_future", "that time has already passed", "这个时间已经过去了"),
        ("invalid_prompt", "the reminder needs some text", "提醒需要有内容"),
        (
            "too_many_active",
            "this conversation already has too many reminders; cancel some first",
            "这个对话里的提醒太多了，请先取消一些",
        ),
        ("internal_error", "something went wrong", "出了点问题"),
        ("made_up", "something went wrong", "出了点问题"),
    ],
)
def test_a_refusal_is_said_in_plain_words_never_its_code(code, en, zh):
    refused = {"code": code, "message": "m"}
    assert words.created(refused, NOON, "en") == f"I could not set that reminder: {en}."
    assert words.created(refused, NOON, "zh") == f"没能设置这个提醒：{zh}。"
    assert words.listing(refused, NOON, "en") == f"I could not list your reminders: {en}."
    assert words.listing(refused, NOON, "zh") == f"没能列出提醒：{zh}。"
    assert words.deleted(view(), refused, NOON, "en") == f'I could not cancel "stretch": {en}.'
    assert words.deleted(view(), refused, NOON, "zh") == f"没能取消“stretch”：{zh}。"


def test_odd_tool_values_are_said_plainly():
    assert words.created([], NOON, "en") == "I could not set that reminder: something went wrong."
    assert words.created([], NOON, "zh") == "没能设置这个提醒：出了点问题。"
    assert words.listing({}, NOON, "en") == "I could not list your reminders: something went wrong."
    assert words.listing({}, NOON, "zh") == "没能列出提醒：出了点问题。"
    assert words.deleted(view(), "odd", NOON, "en") == (
        'I could not cancel "stretch": something went wrong.'
    )
    assert words.problem([], "en") is None


def test_a_list_names_each_reminder_by_its_text_and_time():
    views = [
        view(),
        "not a view",
        view(kind="every", everySeconds=1800, prompt="drink water",
             scheduledAt="2026-08-05T12:30:00.000Z"),
    ]  # fmt: skip
    assert words.listing(views, NOON, "en") == (
        "You have 2 reminders:\n"
        '- "stretch", today at 23:00, in 3 hours\n'
        '- "drink water", every 30 minutes, next today at 20:30, in 30 minutes'
    )
    assert words.listing(views, NOON, "zh") == (
        "你有 2 个提醒：\n"
        "- “stretch”，今天 23:00（3小时后）\n"
        "- “drink water”，每30分钟一次，下一次在今天 20:30（30分钟后）"
    )
    assert words.listing([view()], NOON, "en").startswith("You have 1 reminder:\n")
    assert words.listing([], NOON, "en") == "You have no reminders in this conversation."
    assert words.listing([], NOON, "zh") == "这个对话里没有提醒。"


def test_a_cancel_is_said_with_the_text_it_cancelled():
    done = {"id": "schedule-2", "deleted": True}
    gone = {"id": "schedule-2", "deleted": False, "code": "schedule_not_found"}
    assert words.deleted(view(), done, NOON, "en") == (
        'Cancelled "stretch" (it was today at 23:00).'
    )
    assert words.deleted(view(), done, NOON, "zh") == "已取消“stretch”（原定今天 23:00）。"
    assert words.deleted(view(), gone, NOON, "en") == '"stretch" was already gone.'
    assert words.deleted(view(), gone, NOON, "zh") == "“stretch”已经不在了。"
    assert words.deleted_all(3, [], "en") == "Cancelled 3 reminders."
    assert words.deleted_all(1, ["a"], "en") == 'Cancelled 1 reminder. I could not cancel "a".'
    assert words.deleted_all(2, [], "zh") == "已取消 2 个提醒。"
    assert words.deleted_all(0, ["a", "b"], "zh") == "已取消 0 个提醒。没能取消：“a”、“b”。"


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


def test_a_batch_follow_up_speaks_chinese_when_a_reminder_does():
    one = batch_framing([("schedule-3", "2026-08-05T12:05:00.000Z", "喝水")])
    assert answer(one) == (None, None, "提醒：喝水")
    two = batch_framing(
        [
            ("schedule-1", "2026-08-05T12:00:00.000Z", "喝水"),
            ("schedule-2", "2026-08-05T12:00:00.000Z", "stretch"),
        ]
    )
    assert answer(two) == (None, None, "提醒：喝水；stretch")


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
