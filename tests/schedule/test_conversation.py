# ruff: noqa: RUF001  (Chinese replies use Chinese punctuation)
"""The whole-turn phrase (``respond``) against a scripted turn: what it does when a tool refuses,
when the conversation so far holds no question, and what it asks when several reminders match.

The turns here are fakes that answer each tool call from a script, so every refusal the tools can
give is reachable, and whose transcript holds the ``schedule/change`` events the duplicate check
folds; ``test_scripted_model.py`` runs the same phrase through a real host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dsh_hookspecs import Event, JSONValue, TimeContext, Tool, TurnInput
from dsh_schedule import (
    SCHEDULE_CHANGE,
    AfterRecord,
    Create,
    Delete,
    SchedulePlugin,
    encode_change,
    parse_instant,
)

NOW = TimeContext(now_ms=parse_instant("2026-08-05T12:00:00.000Z"), time_zone="Asia/Shanghai")
UNCERTAIN = {"code": "persistence_uncertain", "message": "m"}


def view(prompt: str, at: str = "2026-08-05T15:00:00.000Z", sid: str = "schedule-1") -> dict:
    return {"id": sid, "kind": "after", "prompt": prompt, "scheduledAt": at, "state": "scheduled"}


def created(prompt: str, at: str = "2026-08-05T15:00:00.000Z", sid: str = "schedule-1") -> tuple:
    """A ``schedule/change`` create of an after record, as the tool writes it."""
    record = AfterRecord(id=sid, kind="after", prompt=prompt, after_seconds=10_800, scheduled_at=at)
    return SCHEDULE_CHANGE, encode_change(Create(record=record))


def deleted(sid: str) -> tuple:
    return SCHEDULE_CHANGE, encode_change(Delete(id=sid))


END_SEED = ("session/end-seed", {})


def _created_answer() -> dict[str, list[JSONValue]]:
    return {
        "schedule_create": [
            {
                "id": "schedule-2",
                "kind": "after",
                "prompt": "Stretch",
                "afterSeconds": 10_800,
                "scheduledAt": "2026-08-05T15:00:00.000Z",
                "state": "scheduled",
            }
        ]
    }


class FakeTurn:
    """A turn whose tools answer from ``answers`` (tool name -> values, in call order) and whose
    transcript is ``log`` (``(type, data)`` events), then ``earlier`` (``(type, text)``
    messages), then this turn's message."""

    def __init__(
        self,
        text: str,
        answers: dict[str, list[JSONValue]] | None = None,
        earlier: Sequence[tuple[str, str]] = (),
        log: Sequence[tuple[str, JSONValue]] = (),
        owned_from: int = 0,
    ) -> None:
        self._input = TurnInput(message_id="m", text=text)
        self._owned_from = owned_from
        self.answers = answers or {}
        self.calls: list[tuple[str, JSONValue]] = []
        entries = [
            *log,
            *((kind, {"text": said}) for kind, said in [*earlier, ("user/message", text)]),
        ]
        self.events = [
            Event(seq=seq, type=kind, time=NOW.now_ms - 60_000, data=data)
            for seq, (kind, data) in enumerate(entries)
        ]

    @property
    def input(self) -> TurnInput:
        return self._input

    @property
    def time(self) -> TimeContext:
        return NOW

    @property
    def owned_from(self) -> int:
        return self._owned_from

    def transcript(self) -> Sequence[Event]:
        return self.events

    def tools(self) -> Sequence[Tool]:
        return ()

    async def call_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> Any:
        self.calls.append((name, arguments))
        return self.answers[name].pop(0)

    def say(self, text: str) -> None:  # pragma: no cover - respond returns its text
        raise AssertionError(text)

    def stream(self, text: str) -> None:  # pragma: no cover
        raise AssertionError(text)


async def respond(turn: FakeTurn) -> str | None:
    phrase = SchedulePlugin().dsh_scripted_phrases()[-1]
    assert phrase.respond is not None
    match = phrase.pattern.match(turn.input.text)
    assert match is not None
    return await phrase.respond(match, turn)


async def test_a_message_about_something_else_is_passed_on_without_a_tool_call() -> None:
    turn = FakeTurn("what's the weather like?")
    assert await respond(turn) is None
    assert turn.calls == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "cancel the oven reminder",
            (
                "I could not list your reminders: I am not sure it was saved; "
                'ask "what reminders do I have?" to check.'
            ),
        ),
        (
            "cancel all my reminders",
            (
                "I could not list your reminders: I am not sure it was saved; "
                'ask "what reminders do I have?" to check.'
            ),
        ),
        ("取消所有提醒", "没能列出提醒：不确定是否已保存；请问“我有哪些提醒”来确认。"),
    ],
)
async def test_a_list_that_fails_before_a_cancel_is_said_and_nothing_is_deleted(text, said) -> None:
    turn = FakeTurn(text, {"schedule_list": [UNCERTAIN]})
    assert await respond(turn) == said
    assert [name for name, _ in turn.calls] == ["schedule_list"]


async def test_a_cancel_in_chinese_names_what_it_did_not_find_or_which_ones_match() -> None:
    listed = [view("喝水", sid="schedule-1"), view("喝水果汁", sid="schedule-2")]
    turn = FakeTurn("取消开会的提醒", {"schedule_list": [listed]})
    assert await respond(turn) == "没有找到“开会”这个提醒。问“我有哪些提醒”可以看到全部。"
    turn = FakeTurn("取消喝的提醒", {"schedule_list": [listed]})
    assert await respond(turn) == (
        "有 2 个提醒符合：“喝水” 今天 23:00（3小时后）；“喝水果汁” 今天 23:00（3小时后）。"
        "请说出完整的内容，或说“取消所有喝的提醒”。"
    )
    # the exact text wins over the ones that contain it
    turn = FakeTurn("取消喝水的提醒", {"schedule_list": [listed], "schedule_delete": [
        {"id": "schedule-1", "deleted": True}]})  # fmt: skip
    assert await respond(turn) == "已取消“喝水”（原定今天 23:00）。"
    assert turn.calls[-1] == ("schedule_delete", {"id": "schedule-1"})


async def test_cancel_by_id_still_works_and_all_of_a_text_that_matches_nothing_says_so() -> None:
    listed = [view("stretch")]
    turn = FakeTurn("delete schedule-1", {"schedule_list": [listed], "schedule_delete": [
        {"id": "schedule-1", "deleted": True}]})  # fmt: skip
    assert await respond(turn) == 'Cancelled "stretch" (it was today at 23:00).'
    turn = FakeTurn("cancel all pizza reminders", {"schedule_list": [listed, listed]})
    assert await respond(turn) == (
        'You have no reminder that says "pizza". Ask "what reminders do I have?" to see them all.'
    )


async def test_cancel_all_names_the_reminders_it_could_not_cancel() -> None:
    listed = [view("a", sid="schedule-1"), view("b", sid="schedule-2")]
    turn = FakeTurn(
        "yes, cancel all",
        {
            "schedule_list": [listed],
            "schedule_delete": [{"id": "schedule-1", "deleted": True}, UNCERTAIN],
        },
        earlier=[
            ("user/message", "cancel all"),
            ("assistant/message", 'Cancel all 2 reminders? Say "yes, cancel all".'),
        ],
    )
    assert await respond(turn) == 'Cancelled 1 reminder. I could not cancel "b".'


@pytest.mark.parametrize(
    "earlier",
    [
        [],  # the first message of the Session
        [("user/message", "remind me in 3 hours to stretch")],  # that turn said nothing
        [("user/message", "x"), ("assistant/message", 'Say "yes, add it".')],  # x reads as nothing
        [("user/message", "remind me to x"), ("assistant/message", 'Say "yes, add it".')],
    ],
)
async def test_yes_add_it_with_nothing_asked_adds_nothing(earlier) -> None:
    turn = FakeTurn("yes, add it", earlier=earlier)
    assert await respond(turn) == "There is no reminder waiting to be added."
    assert turn.calls == []


async def test_a_time_the_tool_will_refuse_is_no_duplicate() -> None:
    # an unknown zone: the tool refuses it in its words, no question about duplicates
    refused = {"code": "invalid_rule", "message": "m"}
    turn = FakeTurn(
        "remind me at 18:30 Mars/Olympus_Mons to x",
        {"schedule_create": [refused]},
        log=[created("x", at="2026-08-05T18:30:00.000Z")],
    )
    assert await respond(turn) == "I could not set that reminder: that is not a time I can set."
    assert [name for name, _ in turn.calls] == ["schedule_create"]


REMIND = "remind me in 3 hours to Stretch"
ASKED = 'You already have "stretch" today at 23:00, in 3 hours. Add another? Say "yes, add it".'


@pytest.mark.parametrize(
    ("log", "owned_from"),
    [
        ([created("stretch")], 0),
        # A fork: the inherited schedule-1 does not count; its own schedule-1 does.
        ([created("stretch", sid="schedule-1"), END_SEED, created("stretch", sid="schedule-1")], 2),
        ([created("a"), created("stretch", sid="schedule-2"), deleted("schedule-1")], 0),
    ],
)
async def test_a_duplicate_is_found_in_the_sessions_own_log_without_a_tool_call(
    log, owned_from
) -> None:
    turn = FakeTurn(REMIND, log=log, owned_from=owned_from)
    assert await respond(turn) == ASKED
    assert turn.calls == []


async def test_a_duplicate_is_the_same_text_less_than_a_minute_apart() -> None:
    turn = FakeTurn(REMIND, log=[created("STRETCH", at="2026-08-05T15:00:59.999Z")])
    assert await respond(turn) == (
        'You already have "STRETCH" today at 23:00, in 3 hours 1 minute. Add another? '
        'Say "yes, add it".'
    )
    assert turn.calls == []


@pytest.mark.parametrize(
    "log",
    [
        [],
        [created("stretch"), deleted("schedule-1")],  # cancelled
        [created("stretch", at="2026-08-05T15:01:00.000Z")],  # a minute apart
        [created("drink water")],
        [deleted("schedule-9"), created("stretch")],  # the log does not fold: no check
        [(SCHEDULE_CHANGE, {"version": 1}), created("stretch")],
    ],
)
async def test_no_duplicate_of_the_sessions_own_reminders_creates_at_once(log) -> None:
    await _creates_at_once(FakeTurn(REMIND, _created_answer(), log=log))


async def test_a_forks_inherited_reminder_is_no_duplicate() -> None:
    log = [created("stretch"), END_SEED]
    await _creates_at_once(FakeTurn(REMIND, _created_answer(), log=log, owned_from=len(log)))


async def test_a_reminder_set_before_a_restart_is_a_duplicate() -> None:
    # A resume appends a session/end-seed too; the Session's own part still starts at 0.
    turn = FakeTurn(REMIND, log=[created("stretch"), END_SEED])
    assert (await respond(turn) or "").startswith('You already have "stretch"')
    assert turn.calls == []


async def _creates_at_once(turn: FakeTurn) -> None:
    assert await respond(turn) == 'Reminder set: "Stretch", today at 23:00, in 3 hours.'
    assert turn.calls == [("schedule_create", {"prompt": "Stretch", "after_seconds": 10_800})]


async def test_a_damaged_log_is_said_in_plain_words_when_creating() -> None:
    damaged = {"code": "corrupt_schedule_log", "message": "m"}
    turn = FakeTurn(
        "提醒我3小时后伸展", {"schedule_create": [damaged]}, log=[deleted("schedule-1")]
    )
    assert await respond(turn) == "没能设置这个提醒：这个对话的提醒记录已损坏。"
