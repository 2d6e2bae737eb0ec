"""The phrases this plugin teaches a host's keyless ``scripted`` demo model (English, and one
Chinese form).

Offered through ``dsh_scripted_phrases``, they call the three tools and word their results:

* "remind me in N seconds|minutes|hours to TEXT" and "remind me to TEXT in N ..." (after_seconds);
* "remind me at 18:30 [Area/City] to TEXT" (``at``, the next 18:30 in that zone, else in the
  zone the user's browser sent with the message, else UTC) and "remind me tomorrow at
  9am|9:15am|9pm|21:00 [Area/City] to TEXT" (tomorrow in that zone);
* "every N minutes|hours remind me to TEXT" and "remind me every N ... to TEXT" (every_seconds;
  the tool refuses less than 300 seconds and the reply says so);
* "list reminders" and "delete schedule-N";
* "提醒我N秒|分钟|小时后TEXT" and "N分钟后提醒我TEXT" (after_seconds, answered in Chinese).

A reminder follow-up (its first line is :data:`~._answers.REMINDER_HEADER`) is presented to the
user as the reminder, and a batch follow-up (:data:`~._answers.BATCH_HEADER`, the due fixed-rate
reminders) as "Reminders: A; B". The texts are the demo's (the README and the browser tests
quote them).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Final

from dsh_hookspecs import InvalidTimeZoneError, JSONValue, TimeContext, hookspecs, load_time_zone

from ._answers import (
    BATCH_HEADER,
    PROMPT_PREFIX,
    REMINDER_HEADER,
    parse_batch_framing,
    read_json_string,
)

__all__ = ["PHRASES"]

_UNIT: Final = r"(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|h)"
_COUNT: Final = r"(?P<n>\d{1,9})\s*" + _UNIT
_TEXT: Final = r"(?P<text>.+?)"
# A zone the user names: UTC or Area/Location-shaped (the tool checks that it exists).
_ZONE: Final = r"(?:\s+(?P<zone>UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+))?"
# 21:00, 9:15am, 9am, 9 pm; a bare hour needs am or pm.
_CLOCK: Final = (
    r"(?P<hour>\d{1,2})(?:(?::(?P<minute>\d{2}))?\s*(?P<meridiem>am|pm|a\.m\.|p\.m\.)|"
    r":(?P<minute24>\d{2}))"
)
_FLAGS: Final = re.IGNORECASE | re.DOTALL


def _phrase(body: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{body}\s*$", _FLAGS)


_REMIND: Final = _phrase(rf"remind me in\s+{_COUNT}\s+(?:to\s+)?{_TEXT}")
_REMIND_TO: Final = _phrase(rf"remind me to\s+{_TEXT}\s+in\s+{_COUNT}[.!]?")
_AT: Final = _phrase(rf"remind me at\s+{_CLOCK}{_ZONE}\s+to\s+{_TEXT}")
_TOMORROW: Final = _phrase(rf"remind me tomorrow at\s+{_CLOCK}{_ZONE}\s+to\s+{_TEXT}")
_EVERY: Final = _phrase(rf"every\s+{_COUNT}[,:]?\s+remind me to\s+{_TEXT}")
_REMIND_EVERY: Final = _phrase(rf"remind me every\s+{_COUNT}\s+to\s+{_TEXT}")
_ZH_COUNT: Final = r"(?P<n>\d{1,9})\s*(?P<unit>秒钟?|分钟|分|个?小时)"
_ZH_END: Final = r"\s*[。！!.]?"
_ZH_REMIND: Final = _phrase(
    rf"(?:请)?提醒我(?:在)?\s*{_ZH_COUNT}\s*(?:之|以)?后\s*{_TEXT}{_ZH_END}"
)
_ZH_LATER: Final = _phrase(rf"(?:请)?(?:在)?{_ZH_COUNT}\s*(?:之|以)?后提醒我\s*{_TEXT}{_ZH_END}")
_ZH_UNIT_SECONDS: Final = {"秒": 1, "分": 60, "个": 3600, "小": 3600}
_CJK: Final = re.compile(r"[\u3400-\u9fff]")
_LIST: Final = re.compile(r"^\s*(?:list|show)\s+(?:my\s+)?reminders?\s*[.!?]?\s*$", re.IGNORECASE)
_DELETE: Final = re.compile(
    r"^\s*(?:delete|cancel|remove)\s+(?:reminder\s+)?(?P<id>\S+?)\s*[.!?]?\s*$", re.IGNORECASE
)
_REMINDER: Final = re.compile(re.escape(REMINDER_HEADER))
_BATCH: Final = re.compile(re.escape(BATCH_HEADER))
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600}
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _seconds(match: re.Match[str]) -> int:
    return int(match["n"]) * _UNIT_SECONDS[match["unit"].lower()[0]]


def _create_arguments(match: re.Match[str]) -> JSONValue:
    return {"prompt": match["text"], "after_seconds": _seconds(match)}


def _zh_create_arguments(match: re.Match[str]) -> JSONValue:
    seconds = int(match["n"]) * _ZH_UNIT_SECONDS[match["unit"][0]]
    return {"prompt": match["text"], "after_seconds": seconds}


def _every_arguments(match: re.Match[str]) -> JSONValue:
    return {"prompt": match["text"], "every_seconds": _seconds(match)}


def _wall_clock(match: re.Match[str]) -> tuple[int, int]:
    """The 24-hour (hour, minute) the user named. Nonsense (``25:00``, ``13pm``) is passed on
    as an hour past 23, so the tool refuses it in its own words."""
    hour = int(match["hour"])
    minute = int(match["minute24"] or match["minute"] or 0)
    meridiem = (match["meridiem"] or "").lower()
    if not meridiem:
        return hour, minute
    if not 1 <= hour <= 12:
        return 24 + hour, minute
    return hour % 12 + (12 if meridiem.startswith("p") else 0), minute


def _local_now(time_zone: str, time: TimeContext) -> dt.datetime:
    """The turn's instant as naive wall time in ``time_zone`` (UTC for a zone tzdata lacks:
    the tool then refuses the zone)."""
    instant = _EPOCH + dt.timedelta(milliseconds=time.now_ms)
    try:
        zone: dt.tzinfo = load_time_zone(time_zone)
    except InvalidTimeZoneError:
        zone = dt.UTC
    return instant.astimezone(zone).replace(tzinfo=None)


def _at_arguments(match: re.Match[str], time: TimeContext, *, tomorrow: bool) -> JSONValue:
    """``at`` as a local ``{date, time, time_zone}``: the zone named, else the turn's, else
    UTC; the date is tomorrow there, or (without "tomorrow") today when that time is still
    ahead and tomorrow when it has passed."""
    named = match["zone"]
    if named is not None and named.upper() == "UTC":
        named = "UTC"  # the phrases ignore case; the zone check does not
    time_zone = named or time.time_zone or "UTC"
    hour, minute = _wall_clock(match)
    now = _local_now(time_zone, time)
    day = now.date()
    if tomorrow or (hour, minute) <= (now.hour, now.minute):
        day += dt.timedelta(days=1)
    return {
        "prompt": match["text"],
        "at": {
            "date": day.isoformat(),
            "time": f"{hour:02d}:{minute:02d}:00",
            "time_zone": time_zone,
        },
    }


def _next_at_arguments(match: re.Match[str], time: TimeContext) -> JSONValue:
    return _at_arguments(match, time, tomorrow=False)


def _tomorrow_arguments(match: re.Match[str], time: TimeContext) -> JSONValue:
    return _at_arguments(match, time, tomorrow=True)


def _interval(seconds: object) -> str:
    """``every 30 minutes``, ``every hour``, ``every 90 seconds``."""
    if not isinstance(seconds, int) or seconds <= 0:
        return "at a fixed rate"
    count, unit = seconds, "second"
    for size, name in ((3600, "hour"), (60, "minute")):
        if seconds % size == 0:
            count, unit = seconds // size, name
            break
    return f"every {unit}" if count == 1 else f"every {count} {unit}s"


def _error(value: JSONValue) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("code"), str) and "deleted" not in value:
        message = value.get("message")
        return f"{value['code']}: {message}" if isinstance(message, str) else str(value["code"])
    return None


def _describe_create(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, dict):
        hint = _HINTS.get(value.get("code")) if isinstance(value, dict) else None
        return f"I could not create that reminder ({problem}).{hint or ''}"
    if value.get("kind") == "every":
        when = f"repeats {_interval(value.get('everySeconds'))}, next at"
    else:
        when = "is due at"
    return (
        f"Done: reminder {value.get('id')} {when} {value.get('scheduledAt')} "
        f'("{value.get("prompt")}"). It is delivered in this session only.'
    )


def _describe_create_zh(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"无法设置这个提醒（{problem}）。"
    return (
        f"好的：提醒 {value.get('id')} 将于 {value.get('scheduledAt')} 到期"
        f"（“{value.get('prompt')}”），只在当前会话中送达。"
    )


#: What a refusal's reply adds, for the codes a demo user meets.
_HINTS: Final[dict[object, str]] = {
    "frequency_too_high": " A reminder can repeat at most every 5 minutes.",
    "not_future": " That time has already passed.",
}


def _describe_list(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, list):
        return f"I could not list reminders ({problem})."
    if not value:
        return "You have no active reminders in this session."
    lines = [
        f'- {item.get("id")}: "{item.get("prompt")}" {_when(item)} {item.get("scheduledAt")} '
        f"({item.get('state')})"
        for item in value
        if isinstance(item, dict)
    ]
    return "\n".join(["Active reminders in this session:", *lines])


def _when(view: dict[str, JSONValue]) -> str:
    """``at`` for a one-shot, ``every 30 minutes, next at`` for a fixed-rate reminder."""
    if view.get("kind") == "every":
        return f"{_interval(view.get('everySeconds'))}, next at"
    return "at"


def _describe_delete(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"I could not delete that reminder ({problem})."
    if value.get("deleted") is True:
        return f"Deleted reminder {value.get('id')}."
    return f"There is no active reminder {value.get('id')}."


def _present_reminder(match: re.Match[str], value: JSONValue) -> str:
    del value
    prompt: str | None = None
    for line in match.string.split("\n"):
        if line.startswith(PROMPT_PREFIX):
            prompt = read_json_string(line, PROMPT_PREFIX)  # the last such line counts
    if prompt is None or not _is_unicode(prompt):
        return "A reminder is due, but its text could not be read."
    return f"提醒：{prompt}" if _CJK.search(prompt) else f"Reminder: {prompt}"


def _present_batch(match: re.Match[str], value: JSONValue) -> str:
    del value
    items = parse_batch_framing(match.string)
    if items is None or not all(_is_unicode(prompt) for _, _, prompt in items):
        return "Reminders are due, but their text could not be read."
    if len(items) == 1:
        return f"Reminder: {items[0][2]}"
    return "Reminders: " + "; ".join(prompt for _, _, prompt in items)


def _is_unicode(text: str) -> bool:
    """No lone surrogate (JSON can escape one; it is not text a Session can store)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _create(
    pattern: re.Pattern[str],
    example: str,
    arguments: Callable[[re.Match[str]], JSONValue] | None = None,
    timed: Callable[[re.Match[str], TimeContext], JSONValue] | None = None,
    reply: Callable[[re.Match[str], JSONValue], str] = _describe_create,
) -> hookspecs.ScriptedPhrase:
    """A phrase that creates a reminder and words the tool's answer (in English unless
    ``reply`` words it otherwise)."""
    return hookspecs.ScriptedPhrase(
        pattern=pattern,
        tool="schedule_create",
        arguments=arguments,
        timed_arguments=timed,
        reply=reply,
        example=example,
    )


#: What the plugin offers the scripted model, in the order it tries them.
PHRASES: Final = (
    hookspecs.ScriptedPhrase(pattern=_REMINDER, reply=_present_reminder),
    hookspecs.ScriptedPhrase(pattern=_BATCH, reply=_present_batch),
    _create(_REMIND, "remind me in 10 seconds to stretch", _create_arguments),
    _create(_REMIND_TO, "remind me to stretch in 10 minutes", _create_arguments),
    _create(_AT, "remind me at 18:30 Europe/Paris to join the call", timed=_next_at_arguments),
    _create(_TOMORROW, "remind me tomorrow at 9am to call mom", timed=_tomorrow_arguments),
    _create(_EVERY, "every 30 minutes remind me to drink water", _every_arguments),
    _create(_REMIND_EVERY, "remind me every 2 hours to stand up", _every_arguments),
    _create(_ZH_REMIND, "提醒我10分钟后伸展一下", _zh_create_arguments, reply=_describe_create_zh),
    _create(_ZH_LATER, "30秒后提醒我喝水", _zh_create_arguments, reply=_describe_create_zh),
    hookspecs.ScriptedPhrase(
        pattern=_LIST, tool="schedule_list", reply=_describe_list, example="list reminders"
    ),
    hookspecs.ScriptedPhrase(
        pattern=_DELETE,
        tool="schedule_delete",
        arguments=lambda match: {"id": match["id"]},
        reply=_describe_delete,
        example="delete schedule-1",
    ),
)
