"""Changing a reminder in words (``phrase_corpus.UPDATES``): what the grammar reads, on the
corpus clock; the whole turn (finding the reminder, the tool call, the reply) is
``test_conversation.py``'s."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_schedule.language._grammar import Ask, Update, read

from .phrase_corpus import CLOCK, CORPUS, UPDATES

_CJK = re.compile(r"[\u3400-\u9fff]")


def expected_of(reading: object) -> Any:
    """A reading in the corpus's terms."""
    if isinstance(reading, Ask):
        return ("ask", reading.text)
    if reading is None:
        return None
    assert isinstance(reading, Update), reading
    change: dict[str, Any] = {}
    if reading.at:
        change["at"] = reading.at
    if reading.times:
        change["times"] = reading.times
    if reading.time_zone is not None:
        change["time_zone"] = reading.time_zone
    if reading.selector is not None:
        name, value = reading.selector
        change[name] = value
    if reading.text is not None:
        change["text"] = reading.text
    return ("update", reading.what, change)


@pytest.mark.parametrize(("message", "expected"), UPDATES, ids=[m for m, _ in UPDATES])
def test_a_change_is_read_as_expected(message: str, expected: Any) -> None:
    reading = read(message, CLOCK)
    assert expected_of(reading) == expected
    if reading is not None:
        assert reading.lang == ("zh" if _CJK.search(message) else "en")
    if isinstance(reading, Update):
        # exactly one change
        assert sum(bool(x) for x in (reading.times, reading.selector, reading.text)) == 1


def test_the_calendar_corpus_is_large_and_in_both_languages() -> None:
    routines = [
        message
        for message, expected in CORPUS
        if expected and expected[0] == "create" and {"daily", "weekly", "cron"} & set(expected[2])
    ]
    messages = routines + [message for message, _ in UPDATES]
    assert len(messages) >= 60
    chinese = [message for message in messages if _CJK.search(message)]
    assert len(chinese) >= 25
    assert len(messages) - len(chinese) >= 25
    assert len({message for message, _ in UPDATES}) == len(UPDATES)
    assert not {message for message, _ in UPDATES} & {message for message, _ in CORPUS}
