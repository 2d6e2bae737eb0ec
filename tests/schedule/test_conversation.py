# ruff: noqa: RUF001  (Chinese replies use Chinese punctuation)
"""The whole-turn phrase (``respond``) against a scripted turn: what it does when a tool refuses,
when the conversation so far holds no question, and what it asks when several reminders match.

The turns here are fakes that answer each tool call from a script, so every refusal the tools can
give is reachable; ``test_scripted_model.py`` runs the same phrase through a real host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dsh_hookspecs import Event, JSONValue, TimeContext, Tool, TurnInput
from dsh_schedule import SchedulePlugin, parse_instant

NOW = TimeContext(now_ms=parse_instant("2026-08-05T12:00:00.000Z"), time_zone="Asia/Shanghai")
UNCERTAIN = {"code": "persistence_uncertain", "message": "m"}


def view(prompt: str, at: str = "2026-08-05T15:00:00.000Z", sid: str = "schedule-1") -> dict:
    return {"id": sid, "kind": "after", "prompt": prompt, "scheduledAt": at, "state": "scheduled"}


class FakeTurn:
    """A turn whose tools answer from ``answers`` (tool name -> values, in call order)."""

    def __init__(
        self,
        text: str,
        answers: dict[str, list[JSONValue]] | None = None,
        earlier: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._input = TurnInput(message_id="m", text=text)
        self.answers = answers or {}
        self.calls: list[tuple[str, JSONValue]] = []
        self.events = [
            Event(seq=seq, type=kind, time=NOW.now_ms - 60_000, data={"text": said})
            for seq, (kind, said) in enumerate([*earlier, ("user/message", text)])
        ]

    @property
    def input(self) -> TurnInput:
        return self._input

    @property
    def time(self) -> TimeContext:
        return NOW

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
    # 2月30日 never comes: the tool refuses it in its words, no question about duplicates
    listed = [view("交报告")]
    refused = {"code": "invalid_rule", "message": "m"}
    turn = FakeTurn("remind me at 18:30 Mars/Olympus_Mons to x", {"schedule_list": [listed],
                    "schedule_create": [refused]})  # fmt: skip
    assert await respond(turn) == "I could not set that reminder: that is not a time I can set."
