# ruff: noqa: RUF001, RUF002  (Chinese words and replies use Chinese punctuation on purpose)
"""What the scripted demo model says about reminders, in a person's words (English or Chinese).

A time is said in the user's zone (the one their browser sent with the message; UTC, said as
such, when none came) relative to the turn: "today at 17:00, in 3 hours", "tomorrow at 09:00",
"on Friday at 09:00", "明天 09:00（13小时后）". A reminder is named by its text, never by its id
or an instant; a refusal by plain words, never by its code. The tools' own results are not
changed: these words are only what the assistant says.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Final, Literal

from dsh_hookspecs import InvalidTimeZoneError, JSONValue, TimeContext, load_time_zone

from .._instants import parse_instant
from ._grammar import Language

__all__ = [
    "am_or_pm",
    "ask_add",
    "ask_cancel_all",
    "created",
    "deleted",
    "deleted_all",
    "keeps_repeating",
    "listing",
    "local_time",
    "name",
    "no_time_of_day",
    "not_found",
    "nothing_to_add",
    "nothing_to_snooze",
    "problem",
    "quote",
    "rule",
    "said",
    "snooze_which",
    "snoozed",
    "updated",
    "when",
]

#: The kinds that repeat at a time of day (their views carry ``time`` or ``expression``).
CALENDAR_KINDS: Final = frozenset({"daily", "weekly", "cron"})

_WEEKDAYS_EN: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                       "Sunday")  # fmt: skip
_WEEKDAYS_ZH: Final = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
_MONTHS_EN: Final = ("January", "February", "March", "April", "May", "June", "July", "August",
                     "September", "October", "November", "December")  # fmt: skip


def quote(text: str, lang: Language) -> str:
    return f"“{text}”" if lang == "zh" else f'"{text}"'


def name(view: dict[str, JSONValue]) -> str:
    """What a reminder is called: its title when it has one, else its text."""
    title = view.get("title")
    return title if isinstance(title, str) and title else str(view.get("prompt"))


def _zone(time: TimeContext) -> dt.tzinfo:
    if time.time_zone is None:
        return dt.UTC
    try:
        return load_time_zone(time.time_zone)
    except InvalidTimeZoneError:  # pragma: no cover - the host validated it
        return dt.UTC


def _span(seconds: int, lang: Language) -> str:
    """A rounded length: "10 seconds", "3 minutes", "1 hour 30 minutes", "2 days"."""
    units = (
        (86400, "day", "天"),
        (3600, "hour", "小时"),
        (60, "minute", "分钟"),
        (1, "second", "秒"),
    )
    for size, above in ((86400, 2 * 86400), (3600, 10 * 3600), (60, 60)):
        if seconds >= above:
            seconds = (seconds + size // 2) // size * size  # to the nearest, halves up
            break
    words = []
    for size, en, zh in units:
        count, seconds = divmod(seconds, size)
        if count:
            words.append(f"{count}{zh}" if lang == "zh" else f"{count} {en}{'s' * (count != 1)}")
    return ("" if lang == "zh" else " ").join(words[:2])


def local_time(instant: str, time: TimeContext) -> dt.datetime | None:
    """``instant`` in the user's zone (``None`` when it is no instant)."""
    try:
        ms = parse_instant(instant)
    except ValueError:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).astimezone(_zone(time))


def when(instant: str, time: TimeContext, lang: Language, *, relative: bool = True) -> str:
    """``instant`` (an RFC 3339 UTC instant) said for a person: the day and clock in their
    zone, and (``relative``) how far from now."""
    try:
        ms = parse_instant(instant)
    except ValueError:
        return "在某个时间" if lang == "zh" else "at some time"
    zone = _zone(time)
    local = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).astimezone(zone)
    today = time.utc().astimezone(zone).date()
    days = (local.date() - today).days
    clock = f"{local:%H:%M}" + (" UTC" if time.time_zone is None else "")
    delta = (ms - time.now_ms) // 1000
    if lang == "zh":
        day = {0: "今天", 1: "明天", 2: "后天"}.get(days)
        if day is None:
            day = _WEEKDAYS_ZH[local.weekday()] if 0 < days < 7 else f"{local.month}月{local.day}日"
            if local.year != today.year:
                day = f"{local.year}年{day}"
        after = f"（{_span(delta, 'zh')}后）" if delta > 0 else "（已到期）"
        return f"{day} {clock}{after if relative else ''}"
    if days == 0:
        day = "today at"
    elif days == 1:
        day = "tomorrow at"
    elif 1 < days < 7:
        day = f"on {_WEEKDAYS_EN[local.weekday()]} at"
    else:
        year = f" {local.year}" if local.year != today.year else ""
        day = f"on {local.day} {_MONTHS_EN[local.month - 1]}{year} at"
    after = f", in {_span(delta, 'en')}" if delta > 0 else ", due now"
    return f"{day} {clock}{after if relative else ''}"


def _wall(value: object) -> str:
    """A rule's ``HH:mm:ss.SSS`` as a person reads it: "09:00", or "09:00:30" with seconds."""
    text = str(value)
    return text[:5] if text[5:8] in {"", ":00"} else text[:8]


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _listed(items: Sequence[str]) -> str:
    """The items as a list in words: "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _weekdays_said(days: Sequence[int], lang: Language) -> str:
    """ISO weekdays as a routine's days ("every weekday", "every Monday and Thursday",
    "每周一、四")."""
    chosen = sorted(set(days))
    if not chosen:
        return "每周" if lang == "zh" else "every week"
    if lang == "zh":
        special = {(1, 2, 3, 4, 5): "每个工作日", (6, 7): "每个周末", (1, 2, 3, 4, 5, 6, 7): "每天"}
        return special.get(tuple(chosen)) or "每周" + "、".join(
            "一二三四五六日"[d - 1] for d in chosen
        )
    special = {
        (1, 2, 3, 4, 5): "every weekday",
        (6, 7): "on weekends",
        (1, 2, 3, 4, 5, 6, 7): "every day",
    }
    return special.get(tuple(chosen)) or "every " + _listed([_WEEKDAYS_EN[d - 1] for d in chosen])


def _month_days_said(days: Sequence[int], lang: Language) -> str:
    if lang == "zh":
        return "每月" + "、".join(f"{day}日" for day in days)
    return f"on the {_listed([_ordinal(day) for day in days])} of every month"


def _cron_values(field: str, low: int, high: int) -> list[int] | None:
    """A cron field's values when it is plain numbers and ranges; ``None`` otherwise."""
    values: list[int] = []
    for element in field.split(","):
        found = re.fullmatch(r"(\d+)(?:-(\d+))?", element)
        if found is None:
            return None
        first, last = int(found[1]), int(found[2] or found[1])
        if not low <= first <= last <= high:
            return None
        values.extend(range(first, last + 1))
    return sorted(set(values))


def _cron_said(expression: str, lang: Language) -> tuple[str, str] | None:
    """A cron rule in words as ``(days, clock)`` for its common shapes (one time a day on every
    day, on some weekdays, or on some days of the month); ``None`` for any other."""
    fields = expression.split()
    if len(fields) != 5 or fields[3] != "*" or not all(f.isdigit() for f in fields[:2]):
        return None
    minute, hour, month_days, _, weekdays = fields
    clock = f"{int(hour):02d}:{int(minute):02d}"
    if month_days == "*" and weekdays == "*":
        return ("每天" if lang == "zh" else "every day"), clock
    if month_days == "*":
        days = _cron_values(weekdays, 0, 7)
        return None if days is None else (_weekdays_said([d or 7 for d in days], lang), clock)
    days = _cron_values(month_days, 1, 31)
    if weekdays != "*" or days is None:
        return None
    return _month_days_said(days, lang), clock


def _rule_parts(view: dict[str, JSONValue], lang: Language) -> tuple[str, str] | None:
    """A calendar reminder's ``(days, clock)`` in words, or ``None`` (a cron rule with no
    words)."""
    kind = view.get("kind")
    if kind == "daily":
        return ("每天" if lang == "zh" else "every day"), _wall(view.get("time"))
    if kind == "weekly":
        days = view.get("weekdays")
        numbers = [d for d in days if isinstance(d, int)] if isinstance(days, list) else []
        return _weekdays_said(numbers, lang), _wall(view.get("time"))
    return _cron_said(str(view.get("expression")), lang)


def _zone_note(view: dict[str, JSONValue], time: TimeContext, lang: Language) -> str:
    """The rule's zone, said only when it is not the user's."""
    zone = view.get("timeZone")
    if zone in {None, time.time_zone}:
        return ""
    return f"（{zone}）" if lang == "zh" else f" ({zone})"


def rule(
    view: dict[str, JSONValue], time: TimeContext, lang: Language, *, clock_first: bool = False
) -> str | None:
    """A calendar reminder's rule in words ("every weekday at 09:00", "每个工作日 09:00", with
    the zone when it is not the user's), ``clock_first`` as a move says it ("10:00 every
    weekday"); ``None`` when ``view`` is not a calendar reminder."""
    if view.get("kind") not in CALENDAR_KINDS:
        return None
    zone = _zone_note(view, time, lang)
    parts = _rule_parts(view, lang)
    if parts is None:
        return f"cron {view.get('expression')}{zone}"
    days, clock = parts
    if lang == "zh":
        return f"{days} {clock}{zone}"
    return f"{clock} {days}{zone}" if clock_first else f"{days} at {clock}{zone}"


def said(view: dict[str, JSONValue], time: TimeContext, lang: Language) -> str:
    """When a reminder fires, in words: its rule, its interval and next time, or its time."""
    words = rule(view, time, lang)
    if words is not None:
        return words
    at = when(str(view.get("scheduledAt")), time, lang)
    if view.get("kind") == "every":
        every = _interval(view.get("everySeconds"), lang)
        return f"{every}一次，下一次在{at}" if lang == "zh" else f"{every}, next {at}"
    return at


def _interval(seconds: object, lang: Language) -> str:
    if not isinstance(seconds, int) or seconds <= 0:
        return "定时" if lang == "zh" else "at a fixed rate"
    span = _span(seconds, lang)
    if lang == "zh":
        return f"每{span}"
    return (
        "every " + span.removeprefix("1 ")
        if span.startswith("1 ") and " " not in span[2:]
        else f"every {span}"
    )


#: Plain words for the tools' refusals (their code and message stay in the tool result).
_PROBLEMS: Final[dict[str, tuple[str, str]]] = {
    "frequency_too_high": (
        "a reminder can repeat at most every 5 minutes",
        "提醒最多每5分钟重复一次",
    ),
    "not_future": ("that time has already passed", "这个时间已经过去了"),
    "invalid_time_zone": (
        "I do not know that time zone; use a name like Europe/Paris or UTC",
        "不认识这个时区；请用 Asia/Shanghai 或 UTC 这样的名字",
    ),
    "invalid_rule": ("that is not a time I can set", "无法设置这个时间"),
    "invalid_every_rule": ("that is not an interval I can repeat", "无法按这个间隔重复"),
    "time_out_of_range": ("that time is too far away", "这个时间太远了"),
    "invalid_prompt": ("the reminder needs some text", "提醒需要有内容"),
    "prompt_too_long": ("the reminder's text is too long", "提醒的内容太长了"),
    "too_many_active": (
        "this conversation already has too many reminders; cancel some first",
        "这个对话里的提醒太多了，请先取消一些",
    ),
    "persistence_uncertain": (
        'I am not sure it was saved; ask "what reminders do I have?" to check',
        "不确定是否已保存；请问“我有哪些提醒”来确认",
    ),
    "already_snoozed": ("it is already snoozed", "它已经推迟过了"),
    "already_done": ("it is already marked done", "它已经标记为完成了"),
    "not_found": (
        "that reminder did not come up in this conversation",
        "这个对话里没有到期过这个提醒",
    ),
    "corrupt_schedule_log": (
        "this conversation's reminder records are damaged",
        "这个对话的提醒记录已损坏",
    ),
}


def problem(value: JSONValue, lang: Language) -> str | None:
    """The plain words for a refusal ``value`` (``None`` when it is not one)."""
    if not isinstance(value, dict) or not isinstance(value.get("code"), str):
        return None
    words = _PROBLEMS.get(str(value["code"]))
    if words is None:
        return "出了点问题" if lang == "zh" else "something went wrong"
    return words[1] if lang == "zh" else words[0]


def _refusal(value: JSONValue, lang: Language, en: str, zh: str) -> str | None:
    """ "I could not ``en``: ..." for a refusal ``value`` or anything that is no answer (an
    object); ``None`` for an answer."""
    refused = problem(value, lang)
    if refused is None and isinstance(value, dict):
        return None
    refused = refused or ("出了点问题" if lang == "zh" else "something went wrong")
    return f"没能{zh}：{refused}。" if lang == "zh" else f"I could not {en}: {refused}."


def created(value: JSONValue, time: TimeContext, lang: Language) -> str:
    """The reply to ``schedule_create``'s ``value``."""
    refusal = _refusal(value, lang, "set that reminder", "设置这个提醒")
    if refusal is not None:
        return refusal
    assert isinstance(value, dict)  # _refusal answers for anything else
    text = quote(name(value), lang)
    repeats = rule(value, time, lang)
    if repeats is not None:
        at = when(str(value.get("scheduledAt")), time, lang, relative=False)
        if lang == "zh":
            return f"好的，已设置提醒{text}：{repeats}；下次 {at}。"
        return f"Reminder set: {text}, {repeats}; next {at}."
    at = when(str(value.get("scheduledAt")), time, lang)
    if value.get("kind") == "every":
        every = _interval(value.get("everySeconds"), lang)
        if lang == "zh":
            return f"好的，已设置提醒{text}，{every}一次，第一次在{at}。"
        return f"Reminder set: {text}, {every}; the first is {at}."
    if lang == "zh":
        return f"好的，已设置提醒{text}：{at}。"
    return f"Reminder set: {text}, {at}."


def _item(view: dict[str, JSONValue], time: TimeContext, lang: Language) -> str:
    text = quote(name(view), lang)
    at = when(str(view.get("scheduledAt")), time, lang)
    repeats = rule(view, time, lang)
    if repeats is not None:
        return (
            f"- {text}，{repeats}，下一次在{at}"
            if lang == "zh"
            else f"- {text}, {repeats}, next {at}"
        )
    if view.get("kind") == "every":
        every = _interval(view.get("everySeconds"), lang)
        return (
            f"- {text}，{every}一次，下一次在{at}"
            if lang == "zh"
            else f"- {text}, {every}, next {at}"
        )
    return f"- {text}，{at}" if lang == "zh" else f"- {text}, {at}"


def listing(value: JSONValue, time: TimeContext, lang: Language) -> str:
    """The reply to ``schedule_list``'s ``value``."""
    refused = problem(value, lang)
    if refused is not None or not isinstance(value, list):
        refused = refused or ("出了点问题" if lang == "zh" else "something went wrong")
        return (
            f"没能列出提醒：{refused}。"
            if lang == "zh"
            else f"I could not list your reminders: {refused}."
        )
    views = [view for view in value if isinstance(view, dict)]
    if not views:
        return (
            "这个对话里没有提醒。"
            if lang == "zh"
            else "You have no reminders in this conversation."
        )
    lines = [_item(view, time, lang) for view in views]
    if lang == "zh":
        head = f"你有 {len(views)} 个提醒："
    else:
        head = "You have 1 reminder:" if len(views) == 1 else f"You have {len(views)} reminders:"
    return "\n".join([head, *lines])


def deleted(view: dict[str, JSONValue], value: JSONValue, time: TimeContext, lang: Language) -> str:
    """The reply to ``schedule_delete``'s ``value`` for the reminder ``view``."""
    text = quote(name(view), lang)
    if isinstance(value, dict) and value.get("deleted") is True:
        repeats = rule(view, time, lang)
        if repeats is not None:
            return (
                f"已取消{text}（{repeats}）。" if lang == "zh" else f"Cancelled {text} ({repeats})."
            )
        at = when(str(view.get("scheduledAt")), time, lang, relative=False)
        return f"已取消{text}（原定{at}）。" if lang == "zh" else f"Cancelled {text} (it was {at})."
    if isinstance(value, dict) and value.get("code") == "schedule_not_found":
        return f"{text}已经不在了。" if lang == "zh" else f"{text} was already gone."
    refused = problem(value, lang) or ("出了点问题" if lang == "zh" else "something went wrong")
    return (
        f"没能取消{text}：{refused}。" if lang == "zh" else f"I could not cancel {text}: {refused}."
    )


def deleted_all(count: int, failures: Sequence[str], lang: Language) -> str:
    """The reply after cancelling ``count`` reminders, ``failures`` the texts that stayed."""
    if lang == "zh":
        done = f"已取消 {count} 个提醒。"
        return done + (
            f"没能取消：{'、'.join(quote(t, lang) for t in failures)}。" if failures else ""
        )
    done = "Cancelled 1 reminder." if count == 1 else f"Cancelled {count} reminders."
    if failures:
        done += " I could not cancel " + ", ".join(quote(t, lang) for t in failures) + "."
    return done


def ask_cancel_all(views: Sequence[dict[str, JSONValue]], say: str, lang: Language) -> str:
    """The question before cancelling every reminder."""
    count = len(views)
    if lang == "zh":
        return f"要取消全部 {count} 个提醒吗？请说“{say}”。"
    if count == 1:
        return f'Cancel your only reminder, {quote(name(views[0]), lang)}? Say "{say}".'
    return f'Cancel all {count} reminders? Say "{say}".'


def ask_add(view: dict[str, JSONValue], say: str, time: TimeContext, lang: Language) -> str:
    """The question before adding a second reminder with the same text at the same time."""
    text = quote(name(view), lang)
    at = rule(view, time, lang) or when(str(view.get("scheduledAt")), time, lang)
    if lang == "zh":
        return f"你已经有{text}，{at}。还要再加一个吗？请说“{say}”。"
    return f'You already have {text} {at}. Add another? Say "{say}".'


def snoozed(value: JSONValue, time: TimeContext, lang: Language) -> str:
    """The reply to ``schedule_snooze``'s ``value`` (the new one-time reminder, or a refusal)."""
    refusal = _refusal(value, lang, "snooze it", "推迟这个提醒")
    if refusal is not None:
        return refusal
    assert isinstance(value, dict)  # _refusal answers for anything else
    text = quote(name(value), lang)
    at = when(str(value.get("scheduledAt")), time, lang)
    if lang == "zh":
        return f"好的，{at}再提醒你{text}。"
    return f"Snoozed: I will remind you of {text} again {at}."


def nothing_to_snooze(lang: Language) -> str:
    """The reply to a snooze when no reminder was delivered in this conversation."""
    if lang == "zh":
        return "这里还没有到期的提醒可以推迟。"
    return "No reminder has come up here yet, so there is nothing to snooze."


def snooze_which(prompts: Sequence[str], lang: Language) -> str:
    """The reply to a snooze when the last delivery brought several reminders at once."""
    if lang == "zh":
        listed = "、".join(quote(p, lang) for p in prompts)
        return f"刚才同时到期了几个提醒（{listed}），请在要推迟的那个提醒上点“推迟”。"
    listed = ", ".join(quote(p, lang) for p in prompts)
    return f"Several reminders came up at once ({listed}); use Snooze on the one you mean."


def nothing_to_add(lang: Language) -> str:
    return "没有等待添加的提醒。" if lang == "zh" else "There is no reminder waiting to be added."


def updated(
    before: dict[str, JSONValue],
    value: JSONValue,
    time: TimeContext,
    lang: Language,
    change: Literal["text", "time", "rule"],
) -> str:
    """The reply to ``schedule_update``'s ``value`` for the reminder ``before`` (as it was
    listed), after a ``change`` of its text, its time of day, or its whole rule or time."""
    old = quote(name(before), lang)
    code = value.get("code") if isinstance(value, dict) else None
    if code in _GONE:
        en, zh = _GONE[str(code)]
        return (zh if lang == "zh" else en).format(old=old)
    refused = problem(value, lang)
    if refused is not None or not isinstance(value, dict) or "kind" not in value:
        refused = refused or ("出了点问题" if lang == "zh" else "something went wrong")
        return (
            f"没能修改{old}：{refused}。"
            if lang == "zh"
            else f"I could not change {old}: {refused}."
        )
    new = quote(name(value), lang)
    if value.get("updated") is False:
        if change == "text":
            return (
                f"它本来就叫{new}，没有改动。"
                if lang == "zh"
                else f"Nothing to change: it is already called {new}."
            )
        now = said(value, time, lang)
        return (
            f"{old}本来就是{now}，没有改动。"
            if lang == "zh"
            else f"Nothing to change: {old} is already {now}."
        )
    if change == "text":
        return f"已把{old}改名为{new}。" if lang == "zh" else f"Renamed {old} to {new}."
    next_at = when(str(value.get("scheduledAt")), time, lang, relative=False)
    if change == "time" and value.get("kind") in CALENDAR_KINDS:
        moved = rule(value, time, lang, clock_first=True)
        return f"已把{old}改到{moved}。" if lang == "zh" else f"Moved {old} to {moved}."
    if value.get("kind") in CALENDAR_KINDS or value.get("kind") == "every":
        repeats = rule(value, time, lang) or _interval(value.get("everySeconds"), lang)
        if lang == "zh":
            return f"已把{old}改为{repeats}；下次 {next_at}。"
        return f"Changed {old} to {repeats}; next {next_at}."
    at = when(str(value.get("scheduledAt")), time, lang)
    return f"已把{old}改到{at}。" if lang == "zh" else f"Moved {old} to {at}."


#: What ``schedule_update`` answers when the reminder is no longer there to change.
_GONE: Final = {
    "schedule_not_found": ("{old} was already gone.", "{old}已经不在了。"),
    "schedule_ended": (
        "{old} has already fired, so there is nothing left to change.",
        "{old}已经提醒过了，没有可以修改的了。",
    ),
    "schedule_conflict": (
        '{old} changed meanwhile; ask "what reminders do I have?" to see it now.',
        "{old}刚刚有了变化；问“我有哪些提醒”可以看到它现在的样子。",
    ),
}


def keeps_repeating(view: dict[str, JSONValue], time: TimeContext, lang: Language) -> str:
    """The question when a repeating reminder is asked to move to one day or instant."""
    text = quote(name(view), lang)
    now = said(view, time, lang)
    if lang == "zh":
        return (
            f"{text}是重复提醒（{now}）。请说新的时间，例如“把它改到10点”，"
            "或新的规律，例如“改成每周一上午10点”。"
        )
    return (
        f'{text} repeats ({now}). Say a new time of day, for example "move it to 10:00", or a '
        'new rule, for example "change it to every Monday at 10am".'
    )


def no_time_of_day(view: dict[str, JSONValue], time: TimeContext, lang: Language) -> str:
    """The question when a reminder with no single time of day is asked to move to one."""
    text = quote(name(view), lang)
    now = said(view, time, lang)
    if lang == "zh":
        return f"{text}没有固定的时刻可改（{now}）。请说新的规律，例如“改成每天上午10点”。"
    return (
        f"{text} has no single time of day to move ({now}). Say a whole new rule, for example "
        '"change it to every day at 10am".'
    )


def not_found(what: str, clocks: Sequence[str], lang: Language) -> str:
    """The answer when no reminder says ``what`` (or is at one of ``clocks``)."""
    if lang == "zh":
        named = f"{'或'.join(clocks)}的提醒" if clocks else f"{quote(what, lang)}这个提醒"
        return f"没有找到{named}。问“我有哪些提醒”可以看到全部。"
    named = f"at {' or '.join(clocks)}" if clocks else f"that says {quote(what, lang)}"
    return f'You have no reminder {named}. Ask "what reminders do I have?" to see them all.'


def am_or_pm(hour: int, lang: Language) -> str:
    """The question when an hour could be the morning's or the evening's."""
    if lang == "zh":
        return f"{hour}点是上午还是晚上？请说“上午{hour}点”或“晚上{hour}点”。"
    return f'At {hour} in the morning or in the evening? Say "{hour}am" or "{hour}pm".'
