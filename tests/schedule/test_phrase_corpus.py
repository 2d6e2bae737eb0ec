# ruff: noqa: RUF001  (Chinese punctuation on purpose)
"""The phrase corpus (``phrase_corpus.py``): every message is read as expected, on one clock."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_schedule.language._grammar import Ask, Cancel, CancelAll, Confirm, Create, ListAll, read

from .phrase_corpus import CLOCK, CORPUS

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


def test_the_corpus_is_large_and_in_both_languages() -> None:
    assert len(CORPUS) >= 150
    chinese = [message for message, _ in CORPUS if _CJK.search(message)]
    assert len(chinese) >= 60
    assert len(CORPUS) - len(chinese) >= 60
    kinds = {expected[0] if expected else None for _, expected in CORPUS}
    assert kinds == {"create", "ask", "list", "cancel", "cancel_all", "confirm", None}
    assert len({message for message, _ in CORPUS}) == len(CORPUS)


def test_the_issues_phrasings_are_understood() -> None:
    """Every phrasing issue 25 names, and the one that was silently wrong."""
    corpus = dict(CORPUS)
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
