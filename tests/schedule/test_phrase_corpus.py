# ruff: noqa: RUF001  (Chinese punctuation on purpose)
"""The phrase corpus (``phrase_corpus.py``): every message is read as expected, on one clock."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_hookspecs import TimeContext
from dsh_schedule.language._grammar import (
    Ask,
    Cancel,
    CancelAll,
    Confirm,
    Create,
    ListAll,
    Snooze,
    read,
)

from .phrase_corpus import CLOCK, CORPUS, ON_OTHER_DAYS, at

_CJK = re.compile(r"[\u3400-\u9fff]")


def expected_of(reading: object) -> Any:
    """A reading in the corpus's terms."""
    if isinstance(reading, Create):
        name, value = reading.selector
        return ("create", reading.prompt, {name: value})
    if isinstance(reading, Ask):
        return ("ask", reading.text)
    if isinstance(reading, ListAll):
        return ("list",)
    if isinstance(reading, Cancel):
        return ("cancel", reading.what)
    if isinstance(reading, CancelAll):
        return ("cancel_all", reading.what)
    if isinstance(reading, Confirm):
        return ("confirm", reading.kind)
    if isinstance(reading, Snooze):
        return ("snooze", reading.minutes)
    assert reading is None
    return None


@pytest.mark.parametrize(("message", "expected"), CORPUS, ids=[m for m, _ in CORPUS])
def test_the_corpus_message_is_read_as_expected(message: str, expected: Any) -> None:
    reading = read(message, CLOCK)
    assert expected_of(reading) == expected
    if reading is not None:
        # answered in the message's language
        assert reading.lang == ("zh" if _CJK.search(message) else "en")
    if isinstance(reading, Create):
        # the text never keeps trailing punctuation nor a piece of the time
        assert reading.prompt == reading.prompt.strip(" .!?。！？,，")


@pytest.mark.parametrize(
    ("clock", "message", "expected"), ON_OTHER_DAYS, ids=[m for _, m, _ in ON_OTHER_DAYS]
)
def test_a_day_of_the_week_is_read_on_the_day_it_is_said(
    clock: TimeContext, message: str, expected: Any
) -> None:
    reading = read(message, clock)
    assert expected_of(reading) == expected
    assert reading is not None
    assert reading.lang == ("zh" if _CJK.search(message) else "en")


def test_the_corpus_is_large_and_in_both_languages() -> None:
    messages = [message for message, _ in CORPUS] + [message for _, message, _ in ON_OTHER_DAYS]
    assert len(messages) >= 450
    chinese = [message for message in messages if _CJK.search(message)]
    assert len(chinese) >= 150
    assert len(messages) - len(chinese) >= 280
    kinds = {expected[0] if expected else None for _, expected in CORPUS}
    assert kinds == {"create", "ask", "list", "cancel", "cancel_all", "confirm", "snooze", None}
    assert len({message for message, _ in CORPUS}) == len(CORPUS)


def test_what_a_new_user_first_typed_is_understood() -> None:
    """The phrasings people typed first, and the ones that were once silently wrong."""
    corpus = dict(CORPUS)
    assert corpus["set a reminder for 3:45pm to pick up the kids"] == (
        "create", "pick up the kids", at("2026-08-05", "15:45:00"),
    )  # fmt: skip
    assert corpus["anything scheduled?"] == ("list",)
    assert corpus["wake me up at 6:15 tomorrow"] == (
        "create", "wake up", at("2026-08-06", "06:15:00"),
    )  # fmt: skip
    assert corpus["remind me in a fortnight to water the cactus"] == (
        "create", "water the cactus", {"after_seconds": 14 * 24 * 3600},
    )  # fmt: skip
    assert corpus["我都有什么提醒"] == ("list",)
    # said on a Monday, "next tuesday" names both dates instead of choosing tomorrow
    said_on_monday = {message: expected for _, message, expected in ON_OTHER_DAYS}
    question = said_on_monday["remind me next tuesday morning to call the plumber"]
    assert question[0] == "ask"
    assert "August 11" in question[1]
    assert "August 18" in question[1]
    # "晚上12点" is the midnight that ends the evening, never noon
    assert corpus["晚上12点提醒我关灯"] == ("create", "关灯", at("2026-08-06", "00:00:00"))
    # tomorrow's midnight names both instants; the coming midnight does not ask
    question = corpus["remind me tomorrow at midnight to take out the bins"]
    assert question[0] == "ask"
    assert "August 6 at 00:00" in question[1]
    assert "August 7 at 00:00" in question[1]
    assert corpus["明晚12点提醒我关灯"][0] == "ask"
    for message in ("remind me tonight at midnight to take out the bins", "今晚12点提醒我关灯"):
        assert corpus[message][2] == at("2026-08-06", "00:00:00"), message
    # "remind me again in 10 minutes" snoozes; it never sets a reminder that says "again"
    assert corpus["remind me again in 10 minutes"] == ("snooze", 10)
    for message in (
        "remind me tomorrow morning to water the plants",
        "remind me tonight at 8pm to call dad",
        "remind me to call mom at 5pm",
        "in 10 minutes remind me to check the oven",
        "remind me in an hour to stretch",
        "明天早上9点提醒我开会",
        "提醒我半小时后出门",
        "下午3点提醒我取快递",
    ):
        assert corpus[message][0] == "create", message
    assert corpus["remind me in 1 hour and 30 minutes to leave"] == (
        "create", "leave", {"after_seconds": 5400},
    )  # fmt: skip
    assert corpus["what reminders do I have?"] == ("list",)
    assert corpus["我有哪些提醒？"] == ("list",)
    assert corpus["cancel the oven reminder"] == ("cancel", "oven")
    assert corpus["cancel all my reminders"] == ("cancel_all", None)
    assert corpus["取消所有提醒"] == ("cancel_all", None)


def test_what_dateparser_cannot_read_is_no_time() -> None:
    """The two places the grammar hands words to dateparser answer ``None`` for words it cannot
    read (the grammar then asks back)."""
    import datetime as dt

    from dsh_schedule.language._grammar import _day_date, _duration_seconds, _When

    now = dt.datetime(2026, 8, 5, 9, 0)  # noqa: DTZ001 (wall time in the user's zone)
    assert _duration_seconds("blue moons", "en", now) is None
    assert _duration_seconds("1 hour 30 minutes", "en", now) == 5400
    assert _day_date(_When(day="the blue moon"), now, "en") is None
    assert _day_date(_When(day="friday"), now, "en") == dt.date(2026, 8, 7)
    assert _day_date(_When(month_day=(2, 29)), now, "zh") is None  # not in 2027
    assert _day_date(_When(month_day=(8, 5)), now, "zh") == dt.date(2026, 8, 5)
