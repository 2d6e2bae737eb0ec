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
    CronRecord,
    DailyRecord,
    Delete,
    SchedulePlugin,
    WeeklyRecord,
    batch_framing,
    encode_change,
    parse_instant,
    reminder_framing,
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
        *,
        time: TimeContext = NOW,
    ) -> None:
        self._input = TurnInput(message_id="m", text=text)
        self._time = time
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
        return self._time

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


# --------------------------------------------------------------------------------------------
# Routines: set in words, checked for duplicates by their rule


WORKDAYS = [1, 2, 3, 4, 5]


def routine(kind: str, prompt: str = "stand up", sid: str = "schedule-2", **rule: Any) -> dict:
    """A calendar reminder as ``schedule_list`` shows it (next: tomorrow 09:00 in Shanghai)."""
    fields = {"time": "09:00:00.000", "timeZone": "Asia/Shanghai", **rule}
    if kind == "weekly":
        fields.setdefault("weekdays", WORKDAYS)
    if kind == "cron":
        fields = {"expression": rule.get("expression", "0 9 1 * *"), "timeZone": "Asia/Shanghai"}
    return {"id": sid, "kind": kind, "prompt": prompt, **fields,
            "scheduledAt": "2026-08-06T01:00:00.000Z", "state": "scheduled"}  # fmt: skip


async def test_a_routine_is_created_and_said_by_its_rule() -> None:
    turn = FakeTurn(
        "every weekday at 9 remind me to stand up", {"schedule_create": [routine("weekly")]}
    )
    assert await respond(turn) == (
        'Reminder set: "stand up", every weekday at 09:00; next tomorrow at 09:00.'
    )
    assert turn.calls == [
        (
            "schedule_create",
            {
                "prompt": "stand up",
                "weekly": {"time": "09:00:00", "time_zone": "Asia/Shanghai", "weekdays": WORKDAYS},
            },
        )
    ]


def logged(record: Any) -> tuple:
    return SCHEDULE_CHANGE, encode_change(Create(record=record))


DAILY = DailyRecord(id="schedule-1", kind="daily", prompt="睡觉", time="22:00:00.000",
                    time_zone="Asia/Shanghai", scheduled_at="2026-08-05T14:00:00.000Z")  # fmt: skip
WEEKLY = WeeklyRecord(id="schedule-1", kind="weekly", prompt="stand up", time="09:00:00.000",
                      time_zone="Asia/Shanghai", weekdays=(1, 2, 3, 4, 5),
                      scheduled_at="2026-08-06T01:00:00.000Z")  # fmt: skip
CRON = CronRecord(id="schedule-1", kind="cron", prompt="pay rent", expression="0 9 1 * *",
                  time_zone="Asia/Shanghai", scheduled_at="2026-09-01T01:00:00.000Z")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "record", "asked"),
    [
        (
            "每天晚上10点提醒我睡觉",
            DAILY,
            "你已经有“睡觉”，每天 22:00。还要再加一个吗？请说“是的，添加”。",
        ),
        (
            "remind me to Stand Up every weekday at 9am",
            WEEKLY,
            'You already have "stand up" every weekday at 09:00. Add another? Say "yes, add it".',
        ),
        (
            "on the 1st of every month at 9 remind me to pay rent",
            CRON,
            (
                'You already have "pay rent" on the 1st of every month at 09:00. Add another? '
                'Say "yes, add it".'
            ),
        ),
    ],
)
async def test_the_same_routine_twice_asks_before_adding(text, record, asked) -> None:
    turn = FakeTurn(text, log=[logged(record)])
    assert await respond(turn) == asked
    assert turn.calls == []


@pytest.mark.parametrize(
    ("text", "record"),
    [
        ("每天晚上9点提醒我睡觉", DAILY),  # another time
        ("巴黎时间每天晚上10点提醒我睡觉", DAILY),  # another zone
        ("every monday at 9am remind me to stand up", WEEKLY),  # other days
        ("every weekday at 9am remind me to stretch", WEEKLY),  # another text
        ("every day at 9am remind me to stand up", WEEKLY),  # another kind
        ("on the 2nd of every month at 9 remind me to pay rent", CRON),
    ],
)
async def test_another_routine_is_no_duplicate(text, record) -> None:
    turn = FakeTurn(text, {"schedule_create": [routine("daily")]}, log=[logged(record)])
    assert await respond(turn) in {
        'Reminder set: "stand up", every day at 09:00; next tomorrow at 09:00.',
        "好的，已设置提醒“stand up”：每天 09:00；下次 明天 09:00。",
    }
    assert [name for name, _ in turn.calls] == ["schedule_create"]


# --------------------------------------------------------------------------------------------
# Changing a reminder: found by id, time or text; its kind kept; questions when unclear


def update_turn(text: str, listed: list, result: Any = None, **kw: Any) -> FakeTurn:
    answers: dict[str, list[JSONValue]] = {"schedule_list": [listed]}
    if result is not None:
        answers["schedule_update"] = [result]
    return FakeTurn(text, answers, **kw)


@pytest.mark.parametrize(
    ("text", "listed", "arguments"),
    [
        # a daily stays daily, a weekly keeps its days, a cron rule its days
        (
            "move schedule-2 to 10:00",
            [routine("daily")],
            {"daily": {"time": "10:00:00", "time_zone": "Asia/Shanghai"}},
        ),
        (
            "move my 9am reminder to 10",
            [view("stretch"), routine("weekly", sid="schedule-2")],
            {"weekly": {"time": "10:00:00", "time_zone": "Asia/Shanghai", "weekdays": WORKDAYS}},
        ),
        (
            "move the rent reminder to 10",
            [routine("cron", prompt="pay rent", expression="0 9 1,15 * *")],
            {"cron": {"expression": "0 10 1,15 * *", "time_zone": "Asia/Shanghai"}},
        ),
        (
            "move the stand up reminder to 10:30 Europe/Paris",
            [routine("daily")],
            {"daily": {"time": "10:30:00", "time_zone": "Europe/Paris"}},
        ),
        # a bare hour takes the half of the day nearer the reminder's own time
        (
            "move the stand up reminder to 10",
            [routine("daily", time="21:00:00.000")],
            {"daily": {"time": "22:00:00", "time_zone": "Asia/Shanghai"}},
        ),
        # a one-shot moves to that time today, or tomorrow when today's has passed (20:00 now)
        (
            "change the stretch reminder to 10am",
            [view("stretch", sid="schedule-2")],
            {"at": {"date": "2026-08-06", "time": "10:00:00", "time_zone": "Asia/Shanghai"}},
        ),
        (
            "change the stretch reminder to 10pm",
            [view("stretch", sid="schedule-2")],
            {"at": {"date": "2026-08-05", "time": "22:00:00", "time_zone": "Asia/Shanghai"}},
        ),
        (
            "move the stretch reminder to in 2 hours",
            [view("stretch", sid="schedule-2")],
            {"at": "2026-08-05T14:00:00.000Z"},
        ),
        (
            "move the stretch reminder to tomorrow at 8am",
            [view("stretch", sid="schedule-2")],
            {"at": {"date": "2026-08-06", "time": "08:00:00", "time_zone": "Asia/Shanghai"}},
        ),
        # a whole new rule, for any kind
        (
            "change the stretch reminder to every monday at 10am",
            [view("stretch", sid="schedule-2")],
            {"weekly": {"time": "10:00:00", "time_zone": "Asia/Shanghai", "weekdays": [1]}},
        ),
        # a new text: the prompt, or the title when the reminder has one
        ("rename schedule-2 to daily stand-up", [routine("daily")], {"prompt": "daily stand-up"}),
        (
            "rename the stand up reminder to daily stand-up",
            [{**routine("daily", prompt="join the call"), "title": "stand up"}],
            {"title": "daily stand-up"},
        ),
        (
            "把站会提醒改成10点",
            [routine("weekly", prompt="站会")],
            {"weekly": {"time": "10:00:00", "time_zone": "Asia/Shanghai", "weekdays": WORKDAYS}},
        ),
    ],
)
async def test_a_change_updates_the_one_reminder_it_names(text, listed, arguments) -> None:
    turn = update_turn(text, listed, {"code": "internal_error", "message": "m"})
    await respond(turn)
    assert turn.calls == [
        ("schedule_list", {}),
        ("schedule_update", {"id": "schedule-2", **arguments}),
    ]


async def test_a_move_is_said_in_words() -> None:
    moved = routine("weekly", time="10:00:00.000", scheduledAt="2026-08-06T02:00:00.000Z")
    turn = update_turn("move my 9am reminder to 10", [routine("weekly")], moved)
    assert await respond(turn) == 'Moved "stand up" to 10:00 every weekday.'
    turn = update_turn(
        "把站会提醒改成10点", [routine("weekly", prompt="站会")], {**moved, "prompt": "站会"}
    )
    assert await respond(turn) == "已把“站会”改到每个工作日 10:00。"
    renamed = routine("weekly", prompt="早会")
    turn = update_turn("把站会提醒改名为早会", [routine("weekly", prompt="站会")], renamed)
    assert await respond(turn) == "已把“站会”改名为“早会”。"


async def test_a_one_shot_moves_in_the_zone_named_or_in_utc_without_one() -> None:
    turn = update_turn(
        "change the stretch reminder to 10am", [view("stretch", sid="schedule-2")],
        {"code": "internal_error", "message": "m"}, time=TimeContext(now_ms=NOW.now_ms),
    )  # fmt: skip
    await respond(turn)
    assert turn.calls[-1][1] == {
        "id": "schedule-2", "at": {"date": "2026-08-06", "time": "10:00:00", "time_zone": "UTC"},
    }  # fmt: skip
    turn = update_turn(
        "change the stretch reminder to 7pm America/New_York", [view("stretch", sid="schedule-2")],
        {"code": "internal_error", "message": "m"},
    )  # fmt: skip
    await respond(turn)  # 08:00 in New York: 19:00 is still today
    assert turn.calls[-1][1] == {
        "id": "schedule-2",
        "at": {"date": "2026-08-05", "time": "19:00:00", "time_zone": "America/New_York"},
    }


@pytest.mark.parametrize(
    ("text", "listed", "said"),
    [
        (
            "move the stand up reminder to tomorrow at 10am",
            [routine("daily")],
            (
                '"stand up" repeats (every day at 09:00). Say a new time of day, '
                'for example "move it to 10:00", or a new rule, for example "change it to every '
                'Monday at 10am".'
            ),
        ),
        (
            "move the stand up reminder to in 2 hours",
            [routine("weekly")],
            (
                '"stand up" repeats (every weekday at 09:00). Say a new time of day, '
                'for example "move it to 10:00", or a new rule, for example "change it to every '
                'Monday at 10am".'
            ),
        ),
        (
            "把站会提醒改到明天上午10点",
            [routine("daily", prompt="站会")],
            (
                "“站会”是重复提醒（每天 09:00）。请说新的时间，例如“把它改到10点”，"
                "或新的规律，例如“改成每周一上午10点”。"
            ),
        ),
        (
            "move the water reminder to 10am",
            [{**view("water"), "kind": "every", "everySeconds": 1800}],
            (
                '"water" has no single time of day to move (every 30 minutes, next today at 23:00, '
                'in 3 hours). Say a whole new rule, for example "change it to every day at 10am".'
            ),
        ),
        (
            "把喝水提醒改到10点",
            [routine("cron", prompt="喝水", expression="0 */2 * * *")],
            "“喝水”没有固定的时刻可改（cron 0 */2 * * *）。请说新的规律，例如“改成每天上午10点”。",
        ),
        (
            "move the stretch reminder to 10am",
            [view("stretch", at="not an instant")],
            (
                '"stretch" has no single time of day to move (at some time). Say a whole new rule, '
                'for example "change it to every day at 10am".'
            ),
        ),
        # 04:00 is as far from 10:00 as from 22:00
        (
            "move the stand up reminder to 10",
            [routine("daily", time="04:00:00.000")],
            'At 10 in the morning or in the evening? Say "10am" or "10pm".',
        ),
        (
            "把站会提醒改到12点",
            [routine("daily", prompt="站会", time="06:00:00.000")],
            "12点是上午还是晚上？请说“上午12点”或“晚上12点”。",
        ),
        (
            "move the stand reminder to 10am",
            [routine("daily", sid="schedule-2"), view("standing desk", sid="schedule-3")],
            (
                '2 reminders match: "stand up" every day at 09:00; "standing desk" today at 23:00, '
                "in 3 hours. Say the whole text of the one to change."
            ),
        ),
        (
            "把站的提醒改到10点",
            [routine("daily", prompt="站会"), routine("weekly", prompt="站立", sid="schedule-3")],
            (
                "有 2 个提醒符合：“站会” 每天 09:00；“站立” 每个工作日 09:00。"
                "请说出要改的那个的完整内容。"
            ),
        ),
        (
            "move the oven reminder to 10am",
            [routine("daily")],
            (
                'You have no reminder that says "oven". '
                'Ask "what reminders do I have?" to see them all.'
            ),
        ),
        (
            "move my 7am reminder to 8am",
            [routine("daily")],
            'You have no reminder at 07:00. Ask "what reminders do I have?" to see them all.',
        ),
        (
            "把7点的提醒改到8点",
            [routine("daily")],
            "没有找到07:00或19:00的提醒。问“我有哪些提醒”可以看到全部。",
        ),
        (
            "move the stand up reminder to 10am",
            UNCERTAIN,
            (
                "I could not list your reminders: I am not sure it was saved; "
                'ask "what reminders do I have?" to check.'
            ),
        ),
    ],
)
async def test_a_change_that_is_unclear_asks_and_updates_nothing(text, listed, said) -> None:
    turn = update_turn(text, listed)
    assert await respond(turn) == said
    assert [name for name, _ in turn.calls] == ["schedule_list"]


async def test_a_time_names_the_reminder_and_its_text_is_the_fallback() -> None:
    # "9am" names no reminder at 09:00 here, but one whose text says it
    listed = [view("call at 9am", sid="schedule-2")]
    turn = update_turn("move my 9am reminder to 10am", listed, {"code": "schedule_ended"})
    assert (
        await respond(turn)
        == '"call at 9am" has already fired, so there is nothing left to change.'
    )
    assert turn.calls[-1][0] == "schedule_update"


# -- snoozing the reminder that came up last


def delivered(prompt: str, sid: str = "schedule-1", at: str = "2026-08-05T11:59:00.000Z") -> tuple:
    """The follow-up that delivered the one-shot ``sid`` (its framing, as the owner writes it)."""
    record = AfterRecord(id=sid, kind="after", prompt=prompt, after_seconds=60, scheduled_at=at)
    return "agent/followup", {"text": reminder_framing(record)}


def snooze_answer(prompt: str, at: str = "2026-08-05T12:10:00.000Z") -> dict[str, JSONValue]:
    return {"id": "schedule-2", "kind": "at", "prompt": prompt, "scheduledAt": at}


@pytest.mark.parametrize(
    ("text", "minutes", "said"),
    [
        (
            "snooze 10 minutes",
            10,
            'Snoozed: I will remind you of "stretch" again today at 20:10, in 10 minutes.',
        ),
        (
            "remind me again in an hour",
            60,
            'Snoozed: I will remind you of "stretch" again today at 21:00, in 1 hour.',
        ),
        ("10分钟后再提醒我", 10, "好的，今天 20:10（10分钟后）再提醒你“stretch”。"),
    ],
)
async def test_a_snooze_snoozes_the_reminder_that_came_up_last(text, minutes, said) -> None:
    at = f"2026-08-05T{12 + minutes // 60:02d}:{minutes % 60:02d}:00.000Z"
    log = [delivered("call mom", sid="schedule-7"), ("user/message", {"text": "ok"}),
           delivered("stretch"), ("agent/followup", {"text": "not a framing"}),
           ("agent/followup", "no data")]  # fmt: skip
    turn = FakeTurn(text, {"schedule_snooze": [snooze_answer("stretch", at)]}, log=log)
    assert await respond(turn) == said
    assert turn.calls == [
        (
            "schedule_snooze",
            {"id": "schedule-1", "occurrence_at": "2026-08-05T11:59:00.000Z", "minutes": minutes},
        )
    ]


async def test_a_snooze_of_a_batch_snoozes_its_only_reminder_and_asks_among_several() -> None:
    one = [("2026-08-05T11:00:00.000Z", "drink water")]
    items = [("schedule-3", at, prompt) for at, prompt in one]
    log = [("agent/followup", {"text": batch_framing(items)})]
    turn = FakeTurn("snooze 5 min", {"schedule_snooze": [snooze_answer("drink water")]}, log=log)
    assert await respond(turn) == (
        'Snoozed: I will remind you of "drink water" again today at 20:10, in 10 minutes.'
    )
    assert turn.calls == [
        ("schedule_snooze", {"id": "schedule-3", "occurrence_at": one[0][0], "minutes": 5})
    ]
    two = [*items, ("schedule-4", "2026-08-05T11:00:00.000Z", "stretch")]
    log = [("agent/followup", {"text": batch_framing(two)})]
    turn = FakeTurn("snooze 5 min", log=log)
    assert await respond(turn) == (
        'Several reminders came up at once ("drink water", "stretch"); '
        "use Snooze on the one you mean."
    )
    turn = FakeTurn("推迟5分钟", log=log)
    assert await respond(turn) == (
        "刚才同时到期了几个提醒（“drink water”、“stretch”），请在要推迟的那个提醒上点“推迟”。"
    )
    assert turn.calls == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("snooze 10 minutes", "No reminder has come up here yet, so there is nothing to snooze."),
        ("10分钟后再提醒我", "这里还没有到期的提醒可以推迟。"),
    ],
)
async def test_a_snooze_with_nothing_delivered_says_so_and_calls_no_tool(text, said) -> None:
    turn = FakeTurn(text, log=[created("stretch")])
    assert await respond(turn) == said
    assert turn.calls == []


@pytest.mark.parametrize(
    ("text", "value", "said"),
    [
        (
            "snooze 10 minutes",
            {"code": "already_snoozed", "message": "m", "snoozeId": "schedule-2"},
            "I could not snooze it: it is already snoozed.",
        ),
        (
            "snooze 10 minutes",
            {"code": "already_done", "message": "m"},
            "I could not snooze it: it is already marked done.",
        ),
        (
            "snooze 10 minutes",
            {"code": "not_found", "message": "m"},
            "I could not snooze it: that reminder did not come up in this conversation.",
        ),
        ("snooze 10 minutes", "odd", "I could not snooze it: something went wrong."),
        (
            "推迟10分钟",
            {"code": "already_done", "message": "m"},
            "没能推迟这个提醒：它已经标记为完成了。",
        ),
    ],
)
async def test_a_refused_snooze_is_said_in_plain_words(text, value, said) -> None:
    turn = FakeTurn(text, {"schedule_snooze": [value]}, log=[delivered("stretch")])
    assert await respond(turn) == said
