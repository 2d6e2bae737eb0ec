# ruff: noqa: RUF001  (Chinese words and replies use Chinese punctuation on purpose)
"""Reading a person's message for the scripted demo model: what they ask (create, list, cancel,
cancel all, a confirmation) and, for a reminder, its text and when.

The grammar here is deliberately thin. It finds the intent and splits the reminder's text from
the parts that say when (before "remind me", right after it, or at the end of the text), and it
reads what the date parser does not: clock times ("5pm", "17:00", "下午3点"), parts of the day
("tomorrow morning", "tonight", "明天早上"), recurrence ("every 30 minutes", "每30分钟"),
Chinese numerals and "half" ("an hour and a half", "一个半小时"). The words of a date ("tomorrow",
"Friday", "August 7", "明天", "周五") and a duration in its plain form ("1 hour 30 minutes",
"1小时30分钟后") are read by ``dateparser`` (docs/models.md says why and what was measured).

It never guesses: a part that looks like a time but cannot be read, a bare hour without am or
pm, a day without a time, a reminder without a text or without a time, each becomes an
:class:`Ask` that names the part and says what would work, in the message's language.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Final, Literal

from dsh_hookspecs import InvalidTimeZoneError, JSONValue, TimeContext, load_time_zone

__all__ = [
    "Ask",
    "Cancel",
    "CancelAll",
    "Confirm",
    "Create",
    "Language",
    "ListAll",
    "Reading",
    "language_of",
    "read",
]

Language = Literal["en", "zh"]


@dataclass(frozen=True, slots=True)
class Create:
    """Create a reminder: ``selector`` is ``(name, value)`` for ``schedule_create``."""

    lang: Language
    prompt: str
    selector: tuple[str, JSONValue]


@dataclass(frozen=True, slots=True)
class ListAll:
    lang: Language


@dataclass(frozen=True, slots=True)
class Cancel:
    """Cancel the reminder whose text (or id) is ``what``."""

    lang: Language
    what: str


@dataclass(frozen=True, slots=True)
class CancelAll:
    """Cancel every reminder (``what`` is ``None``: asks first) or all that say ``what``."""

    lang: Language
    what: str | None = None


@dataclass(frozen=True, slots=True)
class Confirm:
    """The answer to a question asked before: ``cancel_all`` or ``add``."""

    lang: Language
    kind: Literal["cancel_all", "add"]


@dataclass(frozen=True, slots=True)
class Ask:
    """A question back: the message was about a reminder, but not clear enough to act on."""

    lang: Language
    text: str


Reading = Create | ListAll | Cancel | CancelAll | Confirm | Ask

_CJK: Final = re.compile(r"[\u3400-\u9fff]")
_I: Final = re.IGNORECASE | re.DOTALL
_END_PUNCT: Final = re.compile(r"[\s.!?。！？,，;；~～]+$")


def language_of(text: str) -> Language:
    """Chinese when the message has a Chinese character, else English."""
    return "zh" if _CJK.search(text) else "en"


def _trim(text: str) -> str:
    """``text`` without surrounding space and trailing punctuation."""
    return _END_PUNCT.sub("", text.strip()).strip()


# ---------------------------------------------------------------------------------------------
# Confirmations, listing and cancelling

#: What the questions ask a person to say (quoted by :mod:`._phrases`).
CONFIRM_CANCEL_ALL: Final = {"en": "yes, cancel all", "zh": "是的，全部取消"}
CONFIRM_ADD: Final = {"en": "yes, add it", "zh": "是的，添加"}

_YES_EN: Final = r"(?:yes|yeah|yep|ok|okay|sure)[\s,]*(?:please[\s,]*)?"
_CONFIRM_PATTERNS: Final = (
    (re.compile(rf"^{_YES_EN}cancel (?:them )?all(?: of them)?(?: please)?$", _I), "cancel_all"),
    (
        re.compile(r"^(?:是的?|好的?|确定|对)[\s，,]*(?:全部取消|取消全部|都取消)(?:吧)?$"),
        "cancel_all",
    ),
    (re.compile(rf"^{_YES_EN}add (?:it|another|one more)(?: please)?$", _I), "add"),
    (re.compile(r"^(?:是的?|好的?|确定|对)[\s，,]*(?:再)?(?:添加|加一个|再加一个)(?:吧)?$"), "add"),
)
_LIST_EN: Final = re.compile(
    r"^(?:(?:please\s+)?(?:list|show)(?:\s+me)?(?:\s+all)?(?:\s+(?:my|the))?\s+reminders?"
    r"|what(?:'s| is| are)?\s+(?:my\s+)?reminders?(?:\s+do\s+i\s+have)?"
    r"|what\s+(?:reminders|is\s+pending|are\s+my\s+reminders)(?:\s+do\s+i\s+have)?(?:\s+set)?"
    r"|(?:do\s+i\s+have\s+any|any)\s+reminders?"
    r"|(?:my\s+)?reminders)(?:\s+(?:now|today|set|pending|please))?$",
    _I,
)
_LIST_ZH: Final = re.compile(
    r"^(?:请)?(?:我|我现在)?(?:有)?(?:哪些|什么|几个|多少)提醒(?:呢|吗)?"
    r"$|^(?:请)?(?:列出|显示|查看|看看|看一下)(?:一下)?(?:我的)?(?:所有|全部)?(?:的)?提醒(?:列表)?$"
    r"|^(?:我的)?提醒(?:列表)?$|^我有提醒吗$"
)
_CANCEL_VERB_EN: Final = r"(?:cancel|delete|remove|clear|stop|drop)"
_CANCEL_ALL_EN: Final = re.compile(
    rf"^(?:please\s+)?{_CANCEL_VERB_EN}\s+(?:all|every|everything)(?:\s+of)?(?:\s+(?:my|the))?"
    r"(?:\s+(?P<what>.+?))?\s+reminders?$"
    rf"|^(?:please\s+)?{_CANCEL_VERB_EN}\s+(?:all|everything)(?:\s+of\s+them)?$"
    rf"|^(?:please\s+)?(?:clear|{_CANCEL_VERB_EN}\s+all)\s+(?:my\s+|the\s+)?reminders$",
    _I,
)
_CANCEL_EN: Final = re.compile(
    rf"^(?:please\s+)?{_CANCEL_VERB_EN}\s+(?:the\s+|my\s+)?(?:reminder\s+(?:to\s+|about\s+)?)?"
    r"(?P<what>.+?)(?:\s+reminder)?$",
    _I,
)
_CANCEL_ALL_ZH: Final = re.compile(
    r"^(?:请|帮我)?(?:取消|删除|删掉|清空|清除)(?:我的)?(?:所有|全部)(?:的)?(?P<what>.+?)?(?:的)?提醒$"
    r"|^(?:请|帮我)?(?:清空|清除)(?:我的)?提醒$|^(?:请|帮我)?(?:提醒)?全部(?:取消|删除)$"
)
_CANCEL_ZH: Final = re.compile(
    r"^(?:请|帮我)?(?:取消|删除|删掉)(?:提醒[:：\s]*(?P<after>.+)|(?P<what>.+?)(?:的|这个)?提醒)$"
)


def _cancel(text: str, lang: Language) -> Reading | None:
    if lang == "zh":
        found = _CANCEL_ALL_ZH.match(text)
        if found:
            return CancelAll(lang, _trim(found["what"] or "") or None)
        found = _CANCEL_ZH.match(text)
        if found:
            what = _trim(found["after"] or found["what"] or "")
            return Cancel(lang, what) if what else CancelAll(lang)
        return None
    found = _CANCEL_ALL_EN.match(text)
    if found:
        return CancelAll(lang, _trim(found["what"] or "") or None)
    found = _CANCEL_EN.match(text)
    if found is None:
        return None
    what = _trim(re.sub(r"^[\"'“‘](.*)[\"'”’]$", r"\1", found["what"]))
    if what.lower() in {"it", "that", "this", "reminder", "reminders", "my reminders"}:
        return Ask(lang, _WHICH["en"])
    return Cancel(lang, what)


_WHICH: Final = {
    "en": 'Which reminder? Say what it says, for example "cancel the stretch reminder".',
    "zh": "取消哪个提醒？请说出它的内容，例如“取消伸展的提醒”。",
}

# ---------------------------------------------------------------------------------------------
# Numbers and durations

_EN_NUMBERS: Final = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60,
    "ninety": 90, "a couple of": 2, "a few": 3, "couple of": 2,
}  # fmt: skip
_EN_NUM: Final = (
    r"(?:\d+(?:\.\d+)?|a\s+couple\s+of|couple\s+of|a\s+few|forty-five|"
    + "|".join(
        sorted((k for k in _EN_NUMBERS if " " not in k and k != "forty-five"), key=len)[::-1]
    )
    + r")"
)
_EN_UNIT: Final = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|"
    r"(?<=\d)\s?(?:s|m|h|d|w)(?![a-z]))"
)
_UNIT_WORD: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_EN_AMOUNT: Final = (
    rf"{_EN_NUM}\s*{_EN_UNIT}(?:\s+and\s+a\s+(?:half|quarter))?|"
    rf"{_EN_NUM}\s+and\s+a\s+(?:half|quarter)\s+{_EN_UNIT}|"
    r"half\s+an?\s+(?:hour|minute|day)|a\s+quarter\s+of\s+an\s+hour|"
    r"an?\s+(?:hour|minute|day|week)\s+and\s+a\s+(?:half|quarter)"
)
#: A duration: amounts joined by "and" or a comma ("1 hour and 30 minutes", "1h30m").
_EN_DURATION: Final = rf"(?:{_EN_AMOUNT})(?:(?:\s*,\s*|\s+and\s+|\s*)(?:{_EN_AMOUNT}))*"


def _en_amount_minutes(text: str) -> tuple[float, str]:
    """One amount as ``(count, unit)`` with the halves and quarters folded in."""
    text = re.sub(r"\s+", " ", text.lower().strip())
    special = {
        "a quarter of an hour": (15.0, "minutes"),
    }
    if text in special:
        return special[text]
    half = re.fullmatch(r"half an? (hour|minute|day)", text)
    if half:
        return 0.5, half[1] + "s"
    extra = 0.0
    for fraction, value in (("half", 0.5), ("quarter", 0.25)):
        if text.endswith(f" and a {fraction}") or f" and a {fraction} " in text:
            extra = value
            text = text.replace(f" and a {fraction}", "")
    found = re.fullmatch(rf"({_EN_NUM})\s*(.+)", text, _I)
    assert found is not None  # the amount pattern matched
    number = found[1]
    count = float(number) if number[0].isdigit() else float(_EN_NUMBERS[number])
    unit = found[2].strip()
    unit = _UNIT_WORD.get(unit, unit)
    return count + extra, unit


_UNIT_SECONDS: Final = {"sec": 1, "min": 60, "hou": 3600, "hrs": 3600, "hr": 3600, "day": 86400}


def _canonical_duration(amounts: list[tuple[float, str]]) -> tuple[str, int]:
    """The amounts as a plain English duration for ``dateparser`` ("1 hour 30 minutes"), and
    their length in seconds (to check what it read)."""
    seconds = 0.0
    words = []
    for count, unit in amounts:
        size = 604800 if unit.startswith("w") else _UNIT_SECONDS.get(unit[:3], 60)
        seconds += count * size
    whole = round(seconds)
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        part, whole = divmod(whole, size)
        if part:
            words.append(f"{part} {name}{'s' if part != 1 else ''}")
    return " ".join(words) or "0 seconds", round(seconds)


def _parse_date(text: str, lang: str, settings: dict[str, object]) -> dt.datetime | None:
    """``dateparser.parse``, imported on first use: loading it costs about 0.3 s and 10 MiB,
    which a host that never runs the scripted model (or a plugin import) should not pay."""
    import dateparser  # type: ignore[import-untyped]  # noqa: PLC0415 - see the docstring

    parsed: dt.datetime | None = dateparser.parse(text, languages=[lang], settings=settings)
    return parsed


def _duration_seconds(plain: str, lang: Language, now: dt.datetime) -> int | None:
    """What ``dateparser`` reads a plain duration as, in seconds from ``now``."""
    text = f"in {plain}" if lang == "en" else f"{plain}后"
    settings = {"RELATIVE_BASE": now, "PREFER_DATES_FROM": "future"}
    parsed = _parse_date(text, lang, settings)
    if not isinstance(parsed, dt.datetime):
        return None
    return math.ceil((parsed - now).total_seconds())


_ZH_DIGITS: Final = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
                     "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_NUM: Final = r"(?:\d+|[零一二两三四五六七八九十]+)"


def _zh_number(text: str) -> int:
    """``12``, ``十二``, ``二十``, ``两`` as an integer (up to 99)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0))
    return _ZH_DIGITS[text]


_ZH_AMOUNT: Final = (
    rf"(?P<h>{_ZH_NUM})?\s*个?(?P<hh>半)?(?:小时|钟头)(?:(?P<hm>{_ZH_NUM})\s*分(?:钟)?)?"
    rf"|(?P<m>{_ZH_NUM})分(?:钟)?(?P<mh>半)?|(?P<s>{_ZH_NUM})秒(?:钟)?|(?P<d>{_ZH_NUM})天"
    r"|(?P<q>一刻钟)"
)


def _zh_amount(found: re.Match[str]) -> list[tuple[float, str]] | None:
    if found["q"]:
        return [(15.0, "minutes")]
    if found["d"]:
        return [(float(_zh_number(found["d"])), "days")]
    if found["s"]:
        return [(float(_zh_number(found["s"])), "seconds")]
    if found["m"]:
        return [(_zh_number(found["m"]) + (0.5 if found["mh"] else 0.0), "minutes")]
    if found["h"] is None and not found["hh"]:
        return None  # "小时" alone
    hours = (_zh_number(found["h"]) if found["h"] else 0) + (0.5 if found["hh"] else 0.0)
    amounts = [(hours, "hours")]
    if found["hm"]:
        amounts.append((float(_zh_number(found["hm"])), "minutes"))
    return amounts


# ---------------------------------------------------------------------------------------------
# When: the pieces of a time, and putting them together


@dataclass(slots=True)
class _When:
    """What the time pieces said so far."""

    duration: list[tuple[float, str]] | None = None
    every: list[tuple[float, str]] | None = None
    day: str | None = None  # words for dateparser ("tomorrow", "friday", "明天")
    day_offset: int | None = None  # days from today, when the grammar knows it itself
    part: str | None = None  # morning, noon, afternoon, evening, night
    clock: tuple[int, int] | None = None
    meridiem: str | None = None  # "am", "pm", or None
    clock_text: str | None = None
    zone: str | None = None
    month_day: tuple[int, int] | None = None  # 8月7日
    parts: list[str] | None = None  # the pieces as typed
    problem: str | None = None  # an Ask text

    def empty(self) -> bool:
        return self.parts is None


_WEEKDAYS: Final = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"  # noqa: E501
_MONTHS: Final = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_PARTS_EN: Final = r"(?:morning|afternoon|evening|night)"
_ZONE: Final = r"(?:\s+(?P<zone>UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+))?"
_ZONE2: Final = _ZONE.replace("?P<zone>", "?P<zone2>")
_EN_CLOCK: Final = (
    r"(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?\s*(?P<meridiem>am|pm|a\.m\.|p\.m\.)"
    r"|(?P<h24>\d{1,2})[:.](?P<m24>\d{2})(?:\s*(?:h|hrs))?"
    r"|(?P<oclock>\d{1,2})\s*o'?clock"
    r"|(?P<noon>noon|midday|midnight)"
)
#: One piece of an English time, each alternative named by its kind.
_EN_PIECE: Final = (
    rf"(?P<rel>(?:in|after|within)\s+(?P<rel_d>{_EN_DURATION})|(?P<rel_d2>{_EN_DURATION})\s+(?:from\s+now|later))"
    rf"|(?P<every>every\s+(?:(?P<every_d>{_EN_DURATION})|(?P<every_u>second|minute|hour|day|week|"
    rf"morning|evening|night|{_WEEKDAYS}|weekday))|(?P<ly>hourly|daily|weekly))"
    r"|(?P<tonight>tonight|this\s+evening|this\s+afternoon|this\s+morning)"
    rf"|(?P<day>today|tomorrow|(?:the\s+)?day\s+after\s+tomorrow|(?:on\s+)?(?:next\s+|this\s+)?{_WEEKDAYS}"
    rf"|(?:on\s+)?{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?|(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS})"
    rf"(?:\s+(?P<day_part>{_PARTS_EN}))?"
    rf"|(?P<part>(?:in\s+the\s+{_PARTS_EN})|at\s+night)"
    rf"|(?P<clock>(?:(?:at|by|around|@)\s+)?(?:{_EN_CLOCK}){_ZONE}|(?:at|by|around|@)\s+(?P<bare>\d{{1,2}}){_ZONE2})"
)  # fmt: skip
_EN_FRONT: Final = re.compile(rf"^(?:{_EN_PIECE})(?=$|[\s,:]|\s*-)[\s,:]*", _I)
_EN_BACK: Final = re.compile(rf"(?:^|[\s,]+)(?:{_EN_PIECE})$", _I)
#: Words that say "a time" in a text that was not read as one.
_EN_TIMEISH: Final = re.compile(
    r"\b(?:\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|[smhdw])|"
    r"seconds?|minutes?|hours?|days?|weeks?|today|tonight|tomorrow|noon|midnight|"
    r"o'?clock|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}[:.]\d{2}|morning|afternoon|evening|"
    rf"{_WEEKDAYS}|soon|later|sometime|in\s+a\s+(?:while|bit|moment)|every)\b",
    _I,
)


def _en_piece(found: re.Match[str], when: _When) -> None:
    """Adds one English piece to ``when``."""
    typed = found.group(0).strip(" ,")
    when.parts = [*(when.parts or []), typed]
    if (found["rel"] and when.duration) or (found["every"] and when.every):
        when.problem = "two_clocks"
    elif found["rel"]:
        amounts = re.split(
            r"\s*,\s*|\s+and\s+(?!a\s+(?:half|quarter))",
            found["rel_d"] or found["rel_d2"],
            flags=_I,
        )
        when.duration = _en_amounts(amounts)
    elif found["ly"]:
        when.every = [(1.0, {"hourly": "hours", "daily": "days"}.get(found["ly"].lower(), "weeks"))]
    elif found["every"]:
        _en_every(found, when)
    elif found["tonight"]:
        word = found["tonight"].lower()
        when.day_offset = 0
        when.part = "night" if word == "tonight" else word.split()[-1]
    elif found["day"]:
        day = re.sub(r"\s+", " ", found["day"].lower())
        day = re.sub(r"^on ", "", day)
        day = day.removeprefix("this ")
        when.day = day
        if found["day_part"]:
            when.part = found["day_part"].lower()
    elif found["part"]:
        when.part = (
            "night" if "night" in found["part"].lower() else found["part"].split()[-1].lower()
        )
    else:
        _en_clock(found, when, typed)


def _en_amounts(texts: list[str]) -> list[tuple[float, str]]:
    amounts: list[tuple[float, str]] = []
    for text in texts:
        # "1h30m" and "1 hour 30 minutes" come as one text: split at each number
        amounts.extend(
            _en_amount_minutes(piece) for piece in re.findall(rf"(?:{_EN_AMOUNT})", text, _I)
        )
    return amounts


def _en_every(found: re.Match[str], when: _When) -> None:
    if found["every_d"]:
        when.every = _en_amounts([found["every_d"]])
        return
    unit = found["every_u"].lower()
    if unit in {"second", "minute", "hour", "day", "week"}:
        when.every = [(1.0, unit + "s")]
        return
    when.problem = "every_at"


def _en_clock(found: re.Match[str], when: _When, typed: str) -> None:
    if when.clock is not None:
        when.problem = "two_clocks"
        return
    when.clock_text = re.sub(r"^(?:at|by|around|@)\s+", "", typed, flags=_I)
    when.zone = found["zone"] or found["zone2"]
    if found["noon"]:
        when.clock = (0, 0) if found["noon"].lower() == "midnight" else (12, 0)
        when.meridiem = "24h"
    elif found["h24"]:
        when.clock = (int(found["h24"]), int(found["m24"]))
        when.meridiem = "24h"
    elif found["hour"]:
        when.clock = (int(found["hour"]), int(found["minute"] or 0))
        when.meridiem = "pm" if found["meridiem"].lower().startswith("p") else "am"
    else:
        hour = int(found["oclock"] or found["bare"])
        when.clock = (hour, 0)
        when.meridiem = "24h" if hour == 0 or hour > 12 else None


_PART_HOURS: Final = {"morning": 9, "noon": 12, "afternoon": 15, "evening": 18, "night": 20}
_PM_PARTS: Final = {"afternoon", "evening", "night"}


def _hour_minute(when: _When, lang: Language) -> tuple[int, int] | Ask | None:
    """The 24-hour clock of ``when``, or a question, or ``None`` (no clock and no part)."""
    if when.clock is None:
        if when.part is None:
            return None
        return _PART_HOURS[when.part], 0
    hour, minute = when.clock
    if when.meridiem in {"am", "pm"}:
        if not 1 <= hour <= 12 or minute > 59:
            return _unreadable(when.clock_text or "", lang)
        return hour % 12 + (12 if when.meridiem == "pm" else 0), minute
    if hour > 23 or minute > 59:
        return _unreadable(when.clock_text or "", lang)
    if when.meridiem == "24h":
        return hour, minute
    if when.part is None:
        return Ask(lang, _AM_PM[lang].format(clock=when.clock_text, hour=hour))
    if when.part in _PM_PARTS and hour < 12:
        hour += 12
    if when.part == "noon" and hour < 6:
        hour += 12
    return hour, minute


_AM_PM: Final = {
    "en": 'At {clock} in the morning or in the evening? Say "{hour}am" or "{hour}pm".',
    "zh": "{clock}是上午还是晚上？请说“上午{clock}”或“晚上{clock}”。",
}


def _unreadable(part: str, lang: Language) -> Ask:
    if lang == "zh":
        return Ask(lang, f"我看不懂“{part}”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。")
    return Ask(lang, f'I could not read "{part}" as a time. Try "5pm", "17:30" or "in 10 minutes".')


def _day_date(when: _When, now: dt.datetime, lang: Language) -> dt.date | None:
    """The date the day words name, by ``dateparser`` (the grammar's own offset first)."""
    if when.day_offset is not None:
        return now.date() + dt.timedelta(days=when.day_offset)
    if when.month_day is not None:
        month, day = when.month_day
        try:
            date = dt.date(now.year, month, day)
            return date if date >= now.date() else date.replace(year=now.year + 1)
        except ValueError:  # 2月30日, or 2月29日 when the next one is not this year's
            return None
    assert when.day is not None  # called with a day
    settings = {"RELATIVE_BASE": now, "PREFER_DATES_FROM": "future"}
    parsed = _parse_date(when.day, lang, settings)
    if not isinstance(parsed, dt.datetime):
        return None
    return parsed.date()


def _selector(when: _When, lang: Language, time: TimeContext) -> tuple[str, JSONValue] | Ask:
    """The ``schedule_create`` selector for ``when``, or a question."""
    if when.problem == "every_at" or (
        when.every and (when.day or when.clock or when.part or when.month_day)
    ):
        return Ask(lang, _NOT_EVERY_AT[lang])
    if when.problem == "two_clocks" or (
        sum(x is not None for x in (when.duration, when.every)) > 1
        or (
            (when.duration or when.every)
            and (when.day or when.clock or when.part or when.month_day)
        )
    ):
        return Ask(lang, _TWO_TIMES[lang].format(parts=" / ".join(when.parts or [])))
    zone = _zone(when.zone, time)
    now = local_now(zone, time)
    for amounts, name in ((when.duration, "after_seconds"), (when.every, "every_seconds")):
        if amounts is not None:
            plain, expected = _canonical_duration(amounts)
            seconds = _duration_seconds(plain, "en", now)
            if seconds is None or abs(seconds - expected) > 1 or seconds <= 0:
                return _unreadable((when.parts or [""])[0], lang)
            return name, seconds
    clock = _hour_minute(when, lang)
    if isinstance(clock, Ask):
        return clock
    if clock is None:
        return Ask(lang, _WHAT_TIME[lang].format(day=(when.parts or [""])[0]))
    if when.day is not None or when.day_offset is not None or when.month_day is not None:
        day = _day_date(when, now, lang)
        if day is None:
            return _unreadable((when.parts or [""])[0], lang)
    else:
        day = now.date()
        if clock <= (now.hour, now.minute) and when.part is None:
            day += dt.timedelta(days=1)
        elif clock <= (now.hour, now.minute) and when.part in {"morning", "afternoon", "evening"}:
            day += dt.timedelta(days=1)  # "in the morning" is the next one
    return "at", {
        "date": day.isoformat(),
        "time": f"{clock[0]:02d}:{clock[1]:02d}:00",
        "time_zone": zone,
    }


def local_now(time_zone: str, time: TimeContext) -> dt.datetime:
    """The turn's instant as naive wall time in ``time_zone`` (UTC for a zone tzdata lacks:
    the tool then refuses the zone)."""
    try:
        zone: dt.tzinfo = load_time_zone(time_zone)
    except InvalidTimeZoneError:
        zone = dt.UTC
    return time.utc().astimezone(zone).replace(tzinfo=None, microsecond=0)


def _zone(named: str | None, time: TimeContext) -> str:
    if named is not None and named.upper() == "UTC":
        return "UTC"
    return named or time.time_zone or "UTC"


_NOT_EVERY_AT: Final = {
    "en": (
        "I can repeat a reminder every so many minutes or hours from now, but not at a set time "
        'of day. Try "every 30 minutes remind me to drink water".'
    ),
    "zh": (
        "我可以每隔几分钟或几小时提醒一次，但还不能在每天固定的时间提醒。"
        "可以试试“每30分钟提醒我喝水”。"
    ),
}
_TWO_TIMES: Final = {
    "en": "That names more than one time ({parts}). Which one do you mean?",
    "zh": "这里有不止一个时间（{parts}）。你指的是哪一个？",
}
_WHAT_TIME: Final = {
    "en": 'What time {day}? For example "{day} at 9am".',
    "zh": "{day}几点？例如“{day}早上9点”。",
}


# ---------------------------------------------------------------------------------------------
# Creating, in English


_REMIND_EN: Final = re.compile(
    r"\b(?:remind\s+me|set\s+(?:a\s+|an\s+)?(?:reminder|alarm)|remember\s+me)\b", _I
)
_POLITE_EN: Final = re.compile(
    r"^(?:(?:please|pls|hey|hi|ok|okay|can\s+you|could\s+you|would\s+you|will\s+you|"
    r"i\s+want\s+you\s+to|i\s+need\s+you\s+to)\b[\s,]*)+",
    _I,
)
_CONNECTOR_EN: Final = re.compile(r"^(?:to|about|that|of|for)\s+|^[:\-–]\s*", _I)


def _take_front(text: str, when: _When) -> str:
    while True:
        found = _EN_FRONT.match(text)
        if found is None or not found.group(0).strip():
            return text
        _en_piece(found, when)
        text = text[found.end() :]


def _take_back(text: str, when: _When) -> str:
    start = len(when.parts or [])
    while True:
        found = _EN_BACK.search(text)
        if found is None:
            return text
        _en_piece(found, when)
        assert when.parts is not None  # a piece was added
        when.parts.insert(start, when.parts.pop())  # the pieces in the order typed
        text = text[: found.start()]


def _en_timeish_edge(task: str) -> str | None:
    """The part at the start or end of ``task`` that looks like a time, or ``None``."""
    words = task.split()
    if not words:
        return None
    if words[0].lower() in {"and", "plus", "at", "in", "on", "by"} or task.startswith(","):
        head = " ".join(words[:4])
        if _EN_TIMEISH.search(head) or words[0].lower() in {"and", "plus"}:
            return _cut_timeish(words[:4], from_start=True)
    head = " ".join(words[:3])
    if _EN_TIMEISH.match(head):
        return _cut_timeish(words[:3], from_start=True)
    tail = words[-4:]
    for index in reversed(range(len(tail))):
        piece = " ".join(tail[index:])
        if _EN_TIMEISH.search(piece) and re.search(
            r"(?:^|\s)(?:in|at|on|by|after|every|and)\s", " " + piece + " ", _I
        ):
            return piece
    if _EN_TIMEISH.fullmatch(tail[-1]):
        return tail[-1]
    return None


def _cut_timeish(words: list[str], *, from_start: bool) -> str:
    del from_start
    last = 0
    for index, word in enumerate(words):
        if _EN_TIMEISH.search(word):
            last = index
    return " ".join(words[: last + 1])


def _read_create_en(text: str, time: TimeContext) -> Reading:
    found = _REMIND_EN.search(text)
    assert found is not None  # called when the message asks for a reminder
    when = _When()
    before = _POLITE_EN.sub("", text[: found.start()]).strip(" ,")
    rest = _take_front(before, when).strip(" ,")
    if rest and _EN_TIMEISH.search(rest):
        return _unreadable(rest, "en")
    after = text[found.end() :].strip()
    after = re.sub(r"[\s,]+(?:please|pls|thanks|thank\s+you)$", "", after, flags=_I)
    task = _take_front(after, when)
    task = _CONNECTOR_EN.sub("", task, count=1)
    task = _take_back(task, when).strip(" ,")
    task = _trim(re.sub(r"^[\"'“‘](.*)[\"'”’]$", r"\1", task))
    leftover = _en_timeish_edge(task)
    if leftover is not None:
        understood = "; ".join(when.parts or [])
        if understood:
            return Ask(
                "en",
                f'I understood "{understood}" but not "{leftover}". When should I remind you? '
                'For example "in 1 hour and 30 minutes".',
            )
        return _unreadable(leftover, "en")
    if when.empty():
        if not task:
            return Ask("en", _WHAT_AND_WHEN["en"])
        return Ask(
            "en",
            f'When should I remind you about "{task}"? For example "in 10 minutes", '
            '"at 5pm" or "tomorrow morning".',
        )
    if not task:
        return Ask("en", f"What should I remind you of {' '.join(when.parts or [])}?")
    selector = _selector(when, "en", time)
    if isinstance(selector, Ask):
        return selector
    return Create("en", task, selector)


_WHAT_AND_WHEN: Final = {
    "en": (
        'What should I remind you of, and when? For example "remind me in 10 minutes to stretch".'
    ),
    "zh": "要提醒你什么，什么时候？例如“10分钟后提醒我伸展一下”。",
}


# ---------------------------------------------------------------------------------------------
# Creating, in Chinese

_ZH_DAY: Final = (
    r"(?P<day>今天|明天|后天|大后天|(?P<next>下个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"
    r"|(?P<mon>\d{1,2})月(?P<dom>\d{1,2})[日号])"
)
_ZH_PART: Final = r"(?P<part>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨|今晚|明早|明晚|明天早上)"
_ZH_CLOCK: Final = (
    rf"(?P<clock>(?P<ch>{_ZH_NUM})[点點时](?:(?P<cm>{_ZH_NUM})分?|(?P<chalf>半)|(?P<cq>一刻|三刻))?"
    r"|(?P<dh>\d{1,2})[:：](?P<dm>\d{2}))"
)
_ZH_ANY_AMOUNT: Final = re.sub(r"\?P<\w+>", "?:", _ZH_AMOUNT)
_ZH_PIECE: Final = (
    rf"(?:在\s*)?(?:(?P<rel>(?:{_ZH_ANY_AMOUNT})(?:{_ZH_ANY_AMOUNT})?)\s*(?:之|以)?后"
    rf"|(?P<every>每(?:隔)?(?P<every_d>(?:{_ZH_ANY_AMOUNT})|小时|分钟|天|周|星期)(?:一次)?)"
    rf"|{_ZH_DAY}|{_ZH_PART}|{_ZH_CLOCK})"
)
_ZH_FRONT: Final = re.compile(rf"^\s*(?:{_ZH_PIECE})[\s，,]*")
_ZH_BACK: Final = re.compile(rf"[\s，,]*(?:{_ZH_PIECE})$")
_ZH_TIMEISH: Final = re.compile(
    rf"^(?:在)?(?:{_ZH_NUM}|半|每)[个]?(?:小时|钟头|分|秒|天|点|时)|"
    r"^(?:今天|明天|后天|早上|上午|下午|晚上|今晚|一会儿?|待会儿?|稍后|以后|之后)|"
    rf"(?:{_ZH_NUM}|半)[个]?(?:小时|钟头|分钟|秒钟?|天|点)(?:之|以)?后?$|(?:明天|后天|今晚)$"
)
_ZH_WEEKDAY: Final = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_PARTS: Final = {
    "早上": "morning", "早晨": "morning", "上午": "morning", "中午": "noon", "下午": "afternoon",
    "傍晚": "evening", "晚上": "evening", "夜里": "night", "凌晨": "early", "今晚": "night",
    "明早": "morning", "明晚": "night", "明天早上": "morning",
}  # fmt: skip


def _zh_piece(found: re.Match[str], when: _When) -> None:
    when.parts = [*(when.parts or []), found.group(0).strip(" ，,")]
    if found["rel"]:
        amounts: list[tuple[float, str]] = []
        for piece in re.finditer(_ZH_AMOUNT, found["rel"]):
            read = _zh_amount(piece)
            if read is None:
                when.problem = "unreadable"
                return
            amounts.extend(read)
        when.duration = amounts
    elif found["every"]:
        unit = found["every_d"]
        plain = {"小时": "hours", "分钟": "minutes", "天": "days", "周": "weeks", "星期": "weeks"}
        if unit in plain:
            when.every = [(1.0, plain[unit])]
        else:
            amount = re.fullmatch(_ZH_AMOUNT, unit)
            assert amount is not None  # every_d is an amount or a plain unit
            when.every = _zh_amount(amount) or [(1.0, "hours")]  # 每个小时: every hour
    elif found["day"]:
        _zh_day(found, when)
    elif found["part"]:
        part = found["part"]
        if part == "今晚":
            when.day_offset = 0
        elif part in {"明早", "明晚", "明天早上"}:
            when.day = "明天"
        when.part = _ZH_PARTS[part]
    else:
        _zh_clock(found, when)


def _zh_day(found: re.Match[str], when: _When) -> None:
    if found["wd"]:
        weekday = _ZH_WEEKDAY[found["wd"]]
        when.day = f"next:{weekday}" if found["next"] else "周" + "一二三四五六日"[weekday]
    elif found["mon"]:
        when.month_day = (int(found["mon"]), int(found["dom"]))
    else:
        when.day = found["day"]


def _zh_clock(found: re.Match[str], when: _When) -> None:
    if when.clock is not None:
        when.problem = "two_clocks"
        return
    when.clock_text = found["clock"]
    if found["dh"]:
        when.clock = (int(found["dh"]), int(found["dm"]))
        when.meridiem = "24h"
        return
    hour = _zh_number(found["ch"])
    minute = 30 if found["chalf"] else 15 if found["cq"] == "一刻" else 45 if found["cq"] else 0
    if found["cm"]:
        minute = _zh_number(found["cm"])
    when.clock = (hour, minute)
    when.meridiem = "24h" if hour == 0 or hour > 12 else None


_REMIND_ZH: Final = re.compile(r"提醒一下我|提醒我|叫我|提醒")
_POLITE_ZH: Final = re.compile(r"^(?:请你?|麻烦你?|帮我|你)+")


def _zh_take(text: str, when: _When, pattern: re.Pattern[str], *, front: bool) -> str:
    while text:
        found = pattern.search(text) if not front else pattern.match(text)
        if found is None or not found.group(0).strip():
            return text
        _zh_piece(found, when)
        text = text[found.end() :] if front else text[: found.start()]
    return text


def _read_create_zh(text: str, time: TimeContext) -> Reading:
    found = _REMIND_ZH.search(text)
    assert found is not None  # called when the message asks for a reminder
    when = _When()
    before = _POLITE_ZH.sub("", text[: found.start()]).strip(" ，,")
    rest = _zh_take(before, when, _ZH_FRONT, front=True).strip(" ，,")
    if rest:
        rest = _POLITE_ZH.sub("", rest)
        if rest and _ZH_TIMEISH.search(rest):
            return _unreadable(rest, "zh")
    after = re.sub(r"^(?:一下|在)", "", text[found.end() :].strip())
    task = _zh_take(after, when, _ZH_FRONT, front=True)
    task = _zh_take(task, when, _ZH_BACK, front=False)
    task = _trim(task)
    if when.problem == "unreadable":
        return _unreadable("、".join(when.parts or []), "zh")
    leftover = _ZH_TIMEISH.search(task)
    if leftover is not None:
        return _unreadable(_zh_leftover(task, leftover), "zh")
    if when.empty():
        if not task:
            return Ask("zh", _WHAT_AND_WHEN["zh"])
        return Ask("zh", f"什么时候提醒你“{task}”？例如“10分钟后”“下午3点”或“明天早上9点”。")
    if not task:
        return Ask("zh", f"{''.join(when.parts or [])}要提醒你什么？")
    if when.day is not None and when.day.startswith("next:"):
        return _zh_next_week(task, when, time)
    selector = _selector(when, "zh", time)
    if isinstance(selector, Ask):
        return selector
    return Create("zh", task, selector)


def _zh_leftover(task: str, found: re.Match[str]) -> str:
    if found.start() == 0:
        cut = re.match(
            rf"^(?:在)?(?:{_ZH_NUM}|半|每)?[个]?\S{{0,3}}?(?:小时|钟头|分钟?|秒钟?|天|点|时|后)",
            task,
        )
        return cut.group(0) if cut else task[: max(found.end(), 2)]
    return found.group(0)


def _zh_next_week(task: str, when: _When, time: TimeContext) -> Reading:
    """下周X: that weekday in the next calendar week."""
    assert when.day is not None
    weekday = int(when.day.split(":")[1])
    zone = _zone(None, time)
    today = local_now(zone, time).date()
    monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
    when.day, when.day_offset = None, (monday + dt.timedelta(days=weekday) - today).days
    selector = _selector(when, "zh", time)
    if isinstance(selector, Ask):
        return selector
    return Create("zh", task, selector)


# ---------------------------------------------------------------------------------------------


def read(text: str, time: TimeContext) -> Reading | None:
    """What ``text`` asks of the reminders, read at ``time``; ``None`` when it is not about
    reminders at all."""
    message = _trim(text)
    lang = language_of(message)
    flat = re.sub(r"\s+", " ", message)
    for pattern, kind in _CONFIRM_PATTERNS:
        if pattern.match(flat):
            return Confirm(lang, kind)  # type: ignore[arg-type]
    if (_LIST_ZH if lang == "zh" else _LIST_EN).match(flat):
        return ListAll(lang)
    cancelled = _cancel(flat, lang)
    if cancelled is not None:
        return cancelled
    if lang == "zh":
        return _read_create_zh(message, time) if _REMIND_ZH.search(message) else None
    return _read_create_en(message, time) if _REMIND_EN.search(message) else None
