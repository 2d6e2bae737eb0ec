"""The reminder phrases the plugin offers a host's scripted model (``dsh_scripted_phrases``):
the follow-ups presented as reminders, and what the assistant says about reminders in people's
words (:mod:`dsh_schedule.language._words`). Reading messages is ``test_phrase_corpus.py``'s;
the whole turns (questions back, cancelling) are ``test_scripted_model.py``'s.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_hookspecs import JSONValue, TimeContext, hookspecs
from dsh_schedule import (
    AfterRecord,
    SchedulePlugin,
    batch_framing,
    parse_instant,
    reminder_framing,
)
from dsh_schedule.language import EXAMPLES
from dsh_schedule.language import _words as words

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


# --------------------------------------------------------------------------------------------
# Routines at a time of day (daily, weekly, cron) in words


def routine(kind: str, **fields: Any) -> dict[str, Any]:
    """A calendar reminder as ``schedule_list`` shows it: next tomorrow 09:00 in Shanghai."""
    base = {"timeZone": "Asia/Shanghai", "scheduledAt": "2026-08-06T01:00:00.000Z"}
    return view(kind=kind, **{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "en", "zh"),
    [
        ({"kind": "daily", "time": "22:00:00.000"}, "every day at 22:00", "每天 22:00"),
        ({"kind": "daily", "time": "09:00:30.500"}, "every day at 09:00:30", "每天 09:00:30"),
        (
            {"kind": "weekly", "time": "09:00:00.000", "weekdays": [1, 2, 3, 4, 5]},
            "every weekday at 09:00",
            "每个工作日 09:00",
        ),
        (
            {"kind": "weekly", "time": "10:00:00.000", "weekdays": [6, 7]},
            "on weekends at 10:00",
            "每个周末 10:00",
        ),
        (
            {"kind": "weekly", "time": "09:00:00.000", "weekdays": [1, 2, 3, 4, 5, 6, 7]},
            "every day at 09:00",
            "每天 09:00",
        ),
        (
            {"kind": "weekly", "time": "10:00:00.000", "weekdays": [1]},
            "every Monday at 10:00",
            "每周一 10:00",
        ),
        (
            {"kind": "weekly", "time": "10:00:00.000", "weekdays": [1, 4]},
            "every Monday and Thursday at 10:00",
            "每周一、四 10:00",
        ),
        (
            {"kind": "weekly", "time": "07:00:00.000", "weekdays": [1, 3, 5]},
            "every Monday, Wednesday and Friday at 07:00",
            "每周一、三、五 07:00",
        ),
        (
            {"kind": "weekly", "time": "07:00:00.000", "weekdays": []},
            "every week at 07:00",
            "每周 07:00",
        ),
        (
            {"kind": "weekly", "time": "07:00:00.000", "weekdays": "1"},
            "every week at 07:00",
            "每周 07:00",
        ),
        ({"kind": "cron", "expression": "0 9 * * *"}, "every day at 09:00", "每天 09:00"),
        (
            {"kind": "cron", "expression": "30 7 * * 1-5"},
            "every weekday at 07:30",
            "每个工作日 07:30",
        ),
        ({"kind": "cron", "expression": "0 9 * * 0,6"}, "on weekends at 09:00", "每个周末 09:00"),
        (
            {"kind": "cron", "expression": "0 9 1 * *"},
            "on the 1st of every month at 09:00",
            "每月1日 09:00",
        ),
        (
            {"kind": "cron", "expression": "5 18 2,3,11-13,22,23 * *"},
            "on the 2nd, 3rd, 11th, 12th, 13th, 22nd and 23rd of every month at 18:05",
            "每月2日、3日、11日、12日、13日、22日、23日 18:05",
        ),
        # shapes without words keep the rule as written
        ({"kind": "cron", "expression": "0 9 */2 * 1"}, "cron 0 9 */2 * 1", "cron 0 9 */2 * 1"),
        ({"kind": "cron", "expression": "0 9 1 * 1"}, "cron 0 9 1 * 1", "cron 0 9 1 * 1"),
        ({"kind": "cron", "expression": "0 9 1 6 *"}, "cron 0 9 1 6 *", "cron 0 9 1 6 *"),
        ({"kind": "cron", "expression": "0 */2 * * *"}, "cron 0 */2 * * *", "cron 0 */2 * * *"),
        ({"kind": "cron", "expression": "0 9 * * 1-9"}, "cron 0 9 * * 1-9", "cron 0 9 * * 1-9"),
        ({"kind": "cron", "expression": "0 9 5-3 * *"}, "cron 0 9 5-3 * *", "cron 0 9 5-3 * *"),
        ({"kind": "cron", "expression": "0 9 1,x * *"}, "cron 0 9 1,x * *", "cron 0 9 1,x * *"),
        ({"kind": "cron", "expression": "bad"}, "cron bad", "cron bad"),
        # the zone only when it is not the user's
        (
            {"kind": "daily", "time": "09:00:00.000", "timeZone": "Europe/Paris"},
            "every day at 09:00 (Europe/Paris)",
            "每天 09:00（Europe/Paris）",
        ),
    ],
)
def test_a_routine_is_said_in_words_never_as_a_code(fields, en, zh):
    assert words.rule(routine(**fields), NOON, "en") == en
    assert words.rule(routine(**fields), NOON, "zh") == zh


def test_a_routine_without_a_zone_from_the_browser_says_its_zone():
    daily = routine("daily", time="09:00:00.000", timeZone="UTC")
    assert words.rule(daily, UTC_NOON, "en") == "every day at 09:00 (UTC)"
    assert words.rule(daily, NOON, "en", clock_first=True) == "09:00 every day (UTC)"
    assert words.rule(view(), NOON, "en") is None  # a one-shot has no rule


WEEKDAYS = {"kind": "weekly", "time": "09:00:00.000", "weekdays": [1, 2, 3, 4, 5]}


def test_a_routine_set_listed_and_cancelled_is_said_by_its_rule():
    stand_up = routine(**WEEKDAYS, prompt="stand up")
    assert words.created(stand_up, NOON, "en") == (
        'Reminder set: "stand up", every weekday at 09:00; next tomorrow at 09:00.'
    )
    assert words.created(stand_up, NOON, "zh") == (
        "好的，已设置提醒“stand up”：每个工作日 09:00；下次 明天 09:00。"
    )
    paris = {**stand_up, "timeZone": "Europe/Paris", "scheduledAt": "2026-08-06T07:00:00.000Z"}
    assert words.created(paris, NOON, "en") == (
        'Reminder set: "stand up", every weekday at 09:00 (Europe/Paris); next tomorrow at 15:00.'
    )
    assert words.listing([stand_up], NOON, "en") == (
        "You have 1 reminder:\n"
        '- "stand up", every weekday at 09:00, next tomorrow at 09:00, in 13 hours'
    )
    assert words.listing([stand_up], NOON, "zh") == (
        "你有 1 个提醒：\n- “stand up”，每个工作日 09:00，下一次在明天 09:00（13小时后）"
    )
    done = {"id": "schedule-2", "deleted": True}
    assert (
        words.deleted(stand_up, done, NOON, "en")
        == 'Cancelled "stand up" (every weekday at 09:00).'
    )
    assert words.deleted(stand_up, done, NOON, "zh") == "已取消“stand up”（每个工作日 09:00）。"
    assert words.ask_add(stand_up, "yes, add it", NOON, "en") == (
        'You already have "stand up" every weekday at 09:00. Add another? Say "yes, add it".'
    )


def test_a_title_names_the_reminder_when_it_has_one():
    titled = routine(**WEEKDAYS, prompt="Join the stand-up call on the team link", title="stand up")
    assert words.name(titled) == "stand up"
    assert words.name(routine(**WEEKDAYS, title="")) == "stretch"
    assert words.created(titled, NOON, "en").startswith('Reminder set: "stand up", every weekday')
    assert words.ask_cancel_all([titled], "yes, cancel all", "en") == (
        'Cancel your only reminder, "stand up"? Say "yes, cancel all".'
    )


def test_when_a_reminder_fires_is_said_for_every_kind():
    assert words.said(routine(**WEEKDAYS), NOON, "en") == "every weekday at 09:00"
    every = view(kind="every", everySeconds=1800, scheduledAt="2026-08-05T12:30:00.000Z")
    assert words.said(every, NOON, "en") == "every 30 minutes, next today at 20:30, in 30 minutes"
    assert words.said(every, NOON, "zh") == "每30分钟一次，下一次在今天 20:30（30分钟后）"
    assert words.said(view(), NOON, "zh") == "今天 23:00（3小时后）"
    assert words.local_time("nope", NOON) is None
    assert f"{words.local_time('2026-08-05T12:00:00.000Z', NOON):%H:%M}" == "20:00"


# --------------------------------------------------------------------------------------------
# A change, in words


STAND_UP = routine(**WEEKDAYS, prompt="stand up")


@pytest.mark.parametrize(
    ("before", "value", "change", "en", "zh"),
    [
        (
            STAND_UP,
            {**STAND_UP, "time": "10:00:00.000", "scheduledAt": "2026-08-06T02:00:00.000Z"},
            "time",
            'Moved "stand up" to 10:00 every weekday.',
            "已把“stand up”改到每个工作日 10:00。",
        ),
        (
            STAND_UP,
            {
                **STAND_UP,
                "weekdays": [1],
                "time": "10:00:00.000",
                "scheduledAt": "2026-08-10T02:00:00.000Z",
            },
            "rule",
            'Changed "stand up" to every Monday at 10:00; next on Monday at 10:00.',
            "已把“stand up”改为每周一 10:00；下次 周一 10:00。",
        ),
        (
            view(),
            view(kind="every", everySeconds=1800, scheduledAt="2026-08-05T12:30:00.000Z"),
            "rule",
            'Changed "stretch" to every 30 minutes; next today at 20:30.',
            "已把“stretch”改为每30分钟；下次 今天 20:30。",
        ),
        (
            view(),
            view(kind="at", scheduledAt="2026-08-06T02:00:00.000Z"),
            "time",
            'Moved "stretch" to tomorrow at 10:00, in 14 hours.',
            "已把“stretch”改到明天 10:00（14小时后）。",
        ),
        (
            STAND_UP,
            view(kind="at", prompt="stand up", scheduledAt="2026-08-06T02:00:00.000Z"),
            "rule",
            'Moved "stand up" to tomorrow at 10:00, in 14 hours.',
            "已把“stand up”改到明天 10:00（14小时后）。",
        ),
        (
            STAND_UP,
            {**STAND_UP, "prompt": "daily stand-up"},
            "text",
            'Renamed "stand up" to "daily stand-up".',
            "已把“stand up”改名为“daily stand-up”。",
        ),
        (
            STAND_UP,
            {**STAND_UP, "updated": False},
            "time",
            'Nothing to change: "stand up" is already every weekday at 09:00.',
            "“stand up”本来就是每个工作日 09:00，没有改动。",
        ),
        (
            STAND_UP,
            {**STAND_UP, "updated": False},
            "text",
            'Nothing to change: it is already called "stand up".',
            "它本来就叫“stand up”，没有改动。",
        ),
        (
            STAND_UP,
            {"id": "schedule-2", "updated": False, "code": "schedule_not_found"},
            "time",
            '"stand up" was already gone.',
            "“stand up”已经不在了。",
        ),
        (
            view(),
            {"id": "schedule-2", "updated": False, "code": "schedule_ended"},
            "time",
            '"stretch" has already fired, so there is nothing left to change.',
            "“stretch”已经提醒过了，没有可以修改的了。",
        ),
        (
            view(),
            {"id": "schedule-2", "updated": False, "code": "schedule_conflict"},
            "time",
            '"stretch" changed meanwhile; ask "what reminders do I have?" to see it now.',
            "“stretch”刚刚有了变化；问“我有哪些提醒”可以看到它现在的样子。",
        ),
        (
            view(),
            {"code": "not_future", "message": "m"},
            "time",
            'I could not change "stretch": that time has already passed.',
            "没能修改“stretch”：这个时间已经过去了。",
        ),
        (
            view(),
            {"code": "invalid_time_zone", "message": "m"},
            "time",
            (
                'I could not change "stretch": I do not know that time zone; use a name like '
                "Europe/Paris or UTC."
            ),
            "没能修改“stretch”：不认识这个时区；请用 Asia/Shanghai 或 UTC 这样的名字。",
        ),
        (
            view(),
            ["odd"],
            "time",
            'I could not change "stretch": something went wrong.',
            "没能修改“stretch”：出了点问题。",
        ),
        (
            view(),
            {"id": "schedule-2"},
            "time",
            'I could not change "stretch": something went wrong.',
            "没能修改“stretch”：出了点问题。",
        ),
    ],
)
def test_a_change_is_said_with_the_reminders_name_and_new_time(before, value, change, en, zh):
    assert words.updated(before, value, NOON, "en", change) == en
    assert words.updated(before, value, NOON, "zh", change) == zh
