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
from collections.abc import Sequence
from typing import Final

from dsh_hookspecs import InvalidTimeZoneError, JSONValue, TimeContext, load_time_zone

from ._grammar import Language
from ._instants import parse_instant

__all__ = [
    "ask_add",
    "ask_cancel_all",
    "created",
    "deleted",
    "deleted_all",
    "listing",
    "nothing_to_add",
    "problem",
    "quote",
    "when",
]

_WEEKDAYS_EN: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                       "Sunday")  # fmt: skip
_WEEKDAYS_ZH: Final = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
_MONTHS_EN: Final = ("January", "February", "March", "April", "May", "June", "July", "August",
                     "September", "October", "November", "December")  # fmt: skip


def quote(text: str, lang: Language) -> str:
    return f"“{text}”" if lang == "zh" else f'"{text}"'


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


def created(value: JSONValue, time: TimeContext, lang: Language) -> str:
    """The reply to ``schedule_create``'s ``value``."""
    refused = problem(value, lang)
    if refused is not None or not isinstance(value, dict):
        refused = refused or ("出了点问题" if lang == "zh" else "something went wrong")
        if lang == "zh":
            return f"没能设置这个提醒：{refused}。"
        return f"I could not set that reminder: {refused}."
    text = quote(str(value.get("prompt")), lang)
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
    text = quote(str(view.get("prompt")), lang)
    at = when(str(view.get("scheduledAt")), time, lang)
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
    text = quote(str(view.get("prompt")), lang)
    if isinstance(value, dict) and value.get("deleted") is True:
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
        return (
            f'Cancel your only reminder, {quote(str(views[0].get("prompt")), lang)}? Say "{say}".'
        )
    return f'Cancel all {count} reminders? Say "{say}".'


def ask_add(view: dict[str, JSONValue], say: str, time: TimeContext, lang: Language) -> str:
    """The question before adding a second reminder with the same text at the same time."""
    text = quote(str(view.get("prompt")), lang)
    at = when(str(view.get("scheduledAt")), time, lang)
    if lang == "zh":
        return f"你已经有{text}，{at}。还要再加一个吗？请说“{say}”。"
    return f'You already have {text} {at}. Add another? Say "{say}".'


def nothing_to_add(lang: Language) -> str:
    return "没有等待添加的提醒。" if lang == "zh" else "There is no reminder waiting to be added."
