# ruff: noqa: RUF002  (the Chinese examples in the docstring use Chinese punctuation)
"""The phrases this plugin teaches a host's keyless ``scripted`` demo model, in English and
Chinese.

Offered through ``dsh_scripted_phrases``:

* a reminder follow-up (its first line is the core's
  :data:`~dsh_schedule._framing.REMINDER_HEADER`) is presented to the user as the reminder
  ("Reminder: stretch", "提醒：喝水"), and a batch follow-up
  (:data:`~dsh_schedule._framing.BATCH_HEADER`, the due fixed-rate reminders) as "Reminders: A;
  B";
* any other message is read by :mod:`._grammar` (create, list, cancel by text, cancel all,
  change, snooze, a confirmation) and answered through the whole turn (``respond``): it calls
  the tools and says the outcome in the message's language with :mod:`._words` (times in the
  user's zone, rules in words, reminders named by their title or text). Cancelling everything
  asks first ("Cancel all 3 reminders? Say 'yes, cancel all'"), and so does a second reminder
  with the same text at the same minute, or with the same routine ("You already have ... Add
  another? Say 'yes, add it'"); the confirmation is read from the transcript, where the
  question is the last thing the assistant said. A message that is not about reminders is
  passed on (the host's help then quotes :data:`EXAMPLES`).

A change finds its reminder in ``schedule_list`` by id, by its time of day, or by its text (as
a cancel does; several that match are named back and nothing changes), then calls
``schedule_update``: a new time of day keeps the kind (a daily stays daily, a weekly keeps its
days, a cron rule its days; a one-shot moves to that time today, or tomorrow once today's has
passed), an hour without am or pm takes the half of the day nearer the reminder's own time, a
new rule or day replaces the timing (a repeating reminder is not silently made a one-shot: it
asks), and a new text replaces the title when there is one, else the prompt.

The duplicate check calls no tool (a ``schedule_list`` row before every "Reminder set" would be
noise): it folds the Session's own ``schedule/change`` events from the turn's transcript, from
``turn.owned_from`` on, so a fork's inherited reminders never count and reminders set before a
restart do. A log that does not fold from there skips the check (when the log is damaged, the
create then says so). Listing and cancelling call ``schedule_list``: they show what they act on.
A snooze ("snooze 10 minutes", "10分钟后再提醒我") calls ``schedule_snooze`` for the reminder
the transcript's last reminder follow-up delivered (a batch of several names them instead).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Final, Literal

from dsh_hookspecs import JSONValue, TimeContext, Turn, hookspecs

from .._at import ScheduleInputError, at_instant
from .._codec import ScheduleLogError
from .._fold import fold
from .._framing import (
    BATCH_HEADER,
    PROMPT_PREFIX,
    REMINDER_HEADER,
    parse_batch_framing,
    parse_reminder_framing,
    read_json_string,
)
from .._instants import format_instant, parse_instant
from .._record_fields import record_answer
from . import _words
from ._grammar import (
    CONFIRM_ADD,
    CONFIRM_CANCEL_ALL,
    Ask,
    Cancel,
    CancelAll,
    Confirm,
    Create,
    Language,
    ListAll,
    Snooze,
    Update,
    local_now,
    read,
)

__all__ = ["EXAMPLES", "PHRASES"]

_CJK: Final = re.compile(r"[\u3400-\u9fff]")
_REMINDER: Final = re.compile(re.escape(REMINDER_HEADER))
_BATCH: Final = re.compile(re.escape(BATCH_HEADER))
#: Any message: the grammar decides whether it is about reminders.
_ANY: Final = re.compile(r"(?s).")
#: Two reminders this close together (ms) with the same text are "at the same time".
_SAME_TIME_MS: Final = 60_000
#: The event the store writes when a Session object opens on a non-empty log.

#: What the host's help may quote, in both languages (it picks three that fit).
EXAMPLES: Final = (
    "remind me in 10 minutes to stretch",
    "remind me tomorrow morning to water the plants",
    "remind me to call mom at 5pm",
    "every 30 minutes remind me to drink water",
    "what reminders do I have?",
    "cancel the stretch reminder",
    "cancel all my reminders",
    "提醒我10分钟后伸展一下",
    "明天早上9点提醒我开会",
    "下午3点提醒我取快递",
    "每30分钟提醒我喝水",
    "我有哪些提醒",
    "取消伸展的提醒",
    "取消所有提醒",
)


def _present_reminder(match: re.Match[str], value: JSONValue) -> str:
    del value
    prompt: str | None = None
    for line in match.string.split("\n"):
        if line.startswith(PROMPT_PREFIX):
            prompt = read_json_string(line, PROMPT_PREFIX)  # the last such line counts
    if prompt is None or not _is_unicode(prompt):
        return "A reminder is due, but its text could not be read."
    return _said_reminders([prompt])


def _said_reminders(prompts: list[str]) -> str:
    """How the assistant repeats due reminders: in Chinese when any of their texts is."""
    if any(_CJK.search(prompt) for prompt in prompts):
        return "提醒：" + "；".join(prompts)
    return ("Reminder: " if len(prompts) == 1 else "Reminders: ") + "; ".join(prompts)


def _present_batch(match: re.Match[str], value: JSONValue) -> str:
    del value
    items = parse_batch_framing(match.string)
    if items is None or not all(_is_unicode(prompt) for _, _, prompt in items):
        return "Reminders are due, but their text could not be read."
    return _said_reminders([prompt for _, _, prompt in items])


def _is_unicode(text: str) -> bool:
    """No lone surrogate (JSON can escape one; it is not text a Session can store)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _list(turn: Turn) -> JSONValue:
    return await turn.call_tool("schedule_list", {})


def _views(value: JSONValue) -> list[dict[str, JSONValue]]:
    return [view for view in value if isinstance(view, dict)] if isinstance(value, list) else []


def _own_reminders(turn: Turn) -> list[dict[str, JSONValue]]:
    """The active reminders of the Session's own part, as ``schedule_list`` words them; none
    when that part does not fold."""
    events = turn.transcript()
    try:
        active = fold(events, turn.owned_from).active
    except ScheduleLogError:
        return []
    return [record_answer(record, turn.time.now_ms) for record in active]


def _last_question(turn: Turn) -> tuple[str, str | None, int] | None:
    """What the assistant said last before this turn's message, with the user's message it
    answered and that message's time: ``(said, asked_text, asked_ms)``."""
    said: str | None = None
    seen_current = False
    for event in reversed(turn.transcript()):
        data = event.data if isinstance(event.data, dict) else {}
        if event.type == "user/message":
            if not seen_current:
                seen_current = True
                continue
            if said is None:
                return None
            text = data.get("text")
            return said, text if isinstance(text, str) else None, event.time
        if seen_current and event.type == "assistant/message" and said is None:
            text = data.get("text")
            said = text if isinstance(text, str) else ""
    return None


def _asked(turn: Turn, confirmations: dict[str, str]) -> tuple[str | None, int] | None:
    """The message the last question answered, when that question asked for one of
    ``confirmations``."""
    last = _last_question(turn)
    if last is None:
        return None
    said, asked, at_ms = last
    if not any(said.endswith((f"“{say}”。", f'"{say}".')) for say in confirmations.values()):
        return None
    return asked, at_ms


def _target_ms(selector: tuple[str, JSONValue], time: TimeContext) -> int | None:
    """When a create with ``selector`` would first fire (``None``: the tool refuses it)."""
    name, value = selector
    if name == "at":
        try:
            return at_instant(value, time.now_ms)
        except ScheduleInputError:
            return None  # the tool refuses it in its words
    assert isinstance(value, int)  # the grammar's after_seconds and every_seconds
    return time.now_ms + value * 1000


def _same_rule(selector: tuple[str, JSONValue], view: dict[str, JSONValue]) -> bool:
    """A calendar ``selector`` (as the grammar writes it) is the rule ``view`` already has."""
    name, value = selector
    assert isinstance(value, dict)  # the grammar's daily, weekly and cron selectors
    if view.get("kind") != name or view.get("timeZone") != value["time_zone"]:
        return False
    if name == "cron":
        return view.get("expression") == value["expression"]
    return str(view.get("time"))[:8] == value["time"] and (
        name == "daily" or view.get("weekdays") == value["weekdays"]
    )


def _duplicate(
    create: Create, views: list[dict[str, JSONValue]], time: TimeContext
) -> dict[str, JSONValue] | None:
    if create.selector[0] in _words.CALENDAR_KINDS:
        for view in views:
            same_text = str(view.get("prompt")).casefold() == create.prompt.casefold()
            if same_text and _same_rule(create.selector, view):
                return view
        return None
    target = _target_ms(create.selector, time)
    if target is None:
        return None
    for view in views:
        same_text = str(view.get("prompt")).casefold() == create.prompt.casefold()
        if same_text and abs(parse_instant(str(view.get("scheduledAt"))) - target) < _SAME_TIME_MS:
            return view
    return None


async def _create(create: Create, turn: Turn, *, check: bool = True) -> str:
    if check:
        same = _duplicate(create, _own_reminders(turn), turn.time)
        if same is not None:
            return _words.ask_add(same, CONFIRM_ADD[create.lang], turn.time, create.lang)
    name, value = create.selector
    result = await turn.call_tool("schedule_create", {"prompt": create.prompt, name: value})
    return _words.created(result, turn.time, create.lang)


def _matching(views: list[dict[str, JSONValue]], what: str) -> list[dict[str, JSONValue]]:
    """The reminders ``what`` names: by id, else the one whose text is ``what``, else those
    whose text contains it (case and surrounding quotes ignored)."""
    wanted = what.casefold().strip("\"'“”‘’ ")
    by_id = [view for view in views if view.get("id") == what]
    if by_id:
        return by_id
    exact = [view for view in views if wanted in _texts(view)]
    if exact:
        return exact
    return [view for view in views if wanted and any(wanted in text for text in _texts(view))]


def _texts(view: dict[str, JSONValue]) -> tuple[str, ...]:
    """What a reminder says and what it is called, folded for comparing."""
    return tuple(str(view[key]).casefold() for key in ("prompt", "title") if key in view)


async def _cancel(cancel: Cancel, turn: Turn) -> str:
    lang = cancel.lang
    listed = await _list(turn)
    refused = _words.problem(listed, lang)
    if refused is not None:
        return _words.listing(listed, turn.time, lang)
    found = _matching(_views(listed), cancel.what)
    if not found:
        return _words.not_found(cancel.what, (), lang)
    if len(found) > 1:
        listed_items = _candidates(found, turn.time, lang)
        if lang == "zh":
            return (
                f"有 {len(found)} 个提醒符合：{listed_items}。请说出完整的内容，"
                f"或说“取消所有{cancel.what}的提醒”。"
            )
        return (
            f"{len(found)} reminders match: {listed_items}. Say the whole text of one, or "
            f'"cancel all {cancel.what} reminders".'
        )
    view = found[0]
    value = await turn.call_tool("schedule_delete", {"id": view.get("id")})
    return _words.deleted(view, value, turn.time, lang)


def _candidates(views: list[dict[str, JSONValue]], time: TimeContext, lang: Language) -> str:
    """Several reminders, each by its name and when it fires."""
    return ("；" if lang == "zh" else "; ").join(
        _words.quote(_words.name(view), lang) + " " + _words.said(view, time, lang)
        for view in views
    )


async def _cancel_all(request: CancelAll, turn: Turn, *, confirmed: bool) -> str:
    lang = request.lang
    listed = await _list(turn)
    if _words.problem(listed, lang) is not None:
        return _words.listing(listed, turn.time, lang)
    views = _views(listed)
    if request.what is not None:
        views = _matching(views, request.what)
        if not views:
            return await _cancel(Cancel(lang, request.what), turn)
    elif not views:
        return "没有可以取消的提醒。" if lang == "zh" else "You have no reminders to cancel."
    elif not confirmed:
        return _words.ask_cancel_all(views, CONFIRM_CANCEL_ALL[lang], lang)
    failures: list[str] = []
    for view in views:
        value = await turn.call_tool("schedule_delete", {"id": view.get("id")})
        if not (isinstance(value, dict) and value.get("deleted") is True):
            failures.append(str(view.get("prompt")))
    return _words.deleted_all(len(views) - len(failures), failures, lang)


_ONE_SHOT: Final = frozenset({"after", "at"})
_MINUTES_A_DAY: Final = 1440


def _clock_of(view: dict[str, JSONValue], time: TimeContext) -> int | None:
    """A reminder's time of day in minutes: its rule's (in its own zone), or its next time's
    (in the user's zone); ``None`` for a cron rule without one single time of day."""
    kind = view.get("kind")
    if kind in {"daily", "weekly"}:
        text = str(view.get("time"))
    elif kind == "cron":
        fields = str(view.get("expression")).split()
        if len(fields) < 2 or not (fields[0].isdigit() and fields[1].isdigit()):
            return None
        text = f"{fields[1]}:{fields[0]}"
    else:
        local = _words.local_time(str(view.get("scheduledAt")), time)
        if local is None:
            return None
        text = f"{local:%H:%M}"
    hour, minute = text.split(":")[:2]
    return int(hour) * 60 + int(minute)


def _nearest(times: tuple[str, ...], old: int) -> str | None:
    """Of the times a new time of day can mean, the one nearer the reminder's own; ``None``
    when both are as near."""

    def distance(wall: str) -> int:
        gap = abs(int(wall[:2]) * 60 + int(wall[3:5]) - old)
        return min(gap, _MINUTES_A_DAY - gap)

    ranked = sorted(times, key=distance)
    if len(ranked) > 1 and distance(ranked[0]) == distance(ranked[1]):
        return None
    return ranked[0]


def _by_clock(
    views: list[dict[str, JSONValue]], clocks: tuple[str, ...], time: TimeContext
) -> list[dict[str, JSONValue]]:
    """The reminders whose time of day is one of ``clocks`` ("HH:MM")."""
    wanted = {int(c[:2]) * 60 + int(c[3:]) for c in clocks}
    return [view for view in views if _clock_of(view, time) in wanted]


def _update_arguments(
    update: Update, view: dict[str, JSONValue], time: TimeContext
) -> dict[str, JSONValue] | str:
    """The ``schedule_update`` arguments (without the id) that make the change ``update``
    asks of ``view``, or a question back."""
    lang, kind = update.lang, view.get("kind")
    if update.text is not None:
        return {"title": update.text} if "title" in view else {"prompt": update.text}
    if update.selector is not None:
        name, value = update.selector
        if name in {"at", "after_seconds"} and kind not in _ONE_SHOT:
            return _words.keeps_repeating(view, time, lang)
        if name == "after_seconds":
            assert isinstance(value, int)  # the grammar's after_seconds
            return {"at": format_instant(time.now_ms + value * 1000)}
        return {name: value}
    old = _clock_of(view, time)
    if kind == "every" or old is None:
        return _words.no_time_of_day(view, time, lang)
    wall = _nearest(update.times, old)
    if wall is None:
        hour = int(update.times[0][:2]) % 12 or 12
        return _words.am_or_pm(hour, lang)
    if kind in _words.CALENDAR_KINDS:
        zone = update.time_zone or str(view.get("timeZone"))
        if kind == "daily":
            return {"daily": {"time": wall, "time_zone": zone}}
        if kind == "weekly":
            return {"weekly": {"time": wall, "time_zone": zone, "weekdays": view.get("weekdays")}}
        rest = " ".join(str(view.get("expression")).split()[2:])
        expression = f"{int(wall[3:5])} {int(wall[:2])} {rest}"
        return {"cron": {"expression": expression, "time_zone": zone}}
    zone = update.time_zone or time.time_zone or "UTC"
    now = local_now(zone, time)
    day = now.date()
    if wall <= f"{now:%H:%M:%S}":
        day += dt.timedelta(days=1)  # that time today has passed: tomorrow's
    return {"at": {"date": day.isoformat(), "time": wall, "time_zone": zone}}


async def _update(update: Update, turn: Turn) -> str:
    lang = update.lang
    listed = await _list(turn)
    if _words.problem(listed, lang) is not None:
        return _words.listing(listed, turn.time, lang)
    views = _views(listed)
    found = _by_clock(views, update.at, turn.time) if update.at else []
    found = found or _matching(views, update.what)
    if not found:
        return _words.not_found(update.what, update.at, lang)
    if len(found) > 1:
        items = _candidates(found, turn.time, lang)
        if lang == "zh":
            return f"有 {len(found)} 个提醒符合：{items}。请说出要改的那个的完整内容。"
        return f"{len(found)} reminders match: {items}. Say the whole text of the one to change."
    view = found[0]
    arguments = _update_arguments(update, view, turn.time)
    if isinstance(arguments, str):
        return arguments
    value = await turn.call_tool("schedule_update", {"id": view.get("id"), **arguments})
    change: Literal["text", "time", "rule"] = (
        "text" if update.text is not None else "time" if update.times else "rule"
    )
    return _words.updated(view, value, turn.time, lang, change)


async def _confirm(confirm: Confirm, turn: Turn) -> str:
    lang = confirm.lang
    if confirm.kind == "cancel_all":
        confirmed = _asked(turn, CONFIRM_CANCEL_ALL) is not None
        return await _cancel_all(CancelAll(lang), turn, confirmed=confirmed)
    asked = _asked(turn, CONFIRM_ADD)
    text, asked_ms = asked if asked is not None else (None, 0)
    if text is None:
        return _words.nothing_to_add(lang)
    then = TimeContext(now_ms=asked_ms, time_zone=turn.time.time_zone)
    again = read(text, then)
    if not isinstance(again, Create):
        return _words.nothing_to_add(lang)
    name, value = again.selector
    if name == "after_seconds" and isinstance(value, int):
        # as first asked: the same moment, not the same delay from now
        left = math.ceil((asked_ms + value * 1000 - turn.time.now_ms) / 1000)
        again = Create(again.lang, again.prompt, (name, max(left, 1)))
    return await _create(again, turn, check=False)


def _last_delivered(turn: Turn) -> list[tuple[str, str, str]] | None:
    """The reminders the last reminder follow-up in the transcript delivered (``(id,
    occurrence_at, prompt)``; several for a batch), or ``None`` when none came."""
    for event in reversed(turn.transcript()):
        text = event.data.get("text") if isinstance(event.data, dict) else None
        if event.type != "agent/followup" or not isinstance(text, str):
            continue
        single = parse_reminder_framing(text)
        if single is not None:
            return [single]
        batch = parse_batch_framing(text)
        if batch is not None:
            return list(batch)
    return None


async def _snooze(snooze: Snooze, turn: Turn) -> str:
    """Snoozes the reminder delivered last (a batch of several asks which one)."""
    lang = snooze.lang
    delivered = _last_delivered(turn)
    if delivered is None:
        return _words.nothing_to_snooze(lang)
    if len(delivered) > 1:
        return _words.snooze_which([prompt for _, _, prompt in delivered], lang)
    ((schedule_id, occurrence_at, _),) = delivered
    arguments: dict[str, JSONValue] = {
        "id": schedule_id,
        "occurrence_at": occurrence_at,
        "minutes": snooze.minutes,
    }
    value = await turn.call_tool("schedule_snooze", arguments)
    return _words.snoozed(value, turn.time, lang)


async def _respond(match: re.Match[str], turn: Turn) -> str | None:
    """The whole turn for a message about reminders; ``None`` for any other message."""
    del match
    reading = read(turn.input.text, turn.time)
    if reading is None:
        return None
    if isinstance(reading, Ask):
        return reading.text
    if isinstance(reading, ListAll):
        return _words.listing(await _list(turn), turn.time, reading.lang)
    if isinstance(reading, Cancel):
        return await _cancel(reading, turn)
    if isinstance(reading, CancelAll):
        return await _cancel_all(reading, turn, confirmed=False)
    if isinstance(reading, Confirm):
        return await _confirm(reading, turn)
    if isinstance(reading, Update):
        return await _update(reading, turn)
    if isinstance(reading, Snooze):
        return await _snooze(reading, turn)
    return await _create(reading, turn)


#: What the plugin offers the scripted model, in the order it tries them.
PHRASES: Final = (
    hookspecs.ScriptedPhrase(pattern=_REMINDER, reply=_present_reminder),
    hookspecs.ScriptedPhrase(pattern=_BATCH, reply=_present_batch),
    hookspecs.ScriptedPhrase(
        pattern=_ANY, respond=_respond, example=EXAMPLES[0], examples=EXAMPLES[1:]
    ),
)
