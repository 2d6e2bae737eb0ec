# ruff: noqa: RUF001  (Chinese words and replies use Chinese punctuation on purpose)
"""Reading a person's message for the scripted demo model: what they ask (create, list, cancel,
cancel all, change, snooze the reminder that came up last, a confirmation) and, for a
reminder, its text and when.

The grammar here is deliberately thin. It finds the intent and splits the reminder's text from
the parts that say when (before "remind me", right after it, or at the end of the text), and it
reads what the date parser does not: clock times ("5pm", "17:00", "下午3点"), parts of the day
("tomorrow morning", "tonight", "明天早上"), recurrence ("every 30 minutes", "每30分钟"),
routines at a time of day ("every weekday at 9", "on the 1st of every month at 9", "每周一上午
10点", "每个工作日早上9点": ``daily``, ``weekly``, or ``cron`` for days of the month), a zone
("Europe/Paris", "Paris time", "巴黎时间"; else the browser's), Chinese numerals and "half" ("an
hour and a half", "一个半小时"). The words of a date ("tomorrow", "Friday", "August 7", "明天",
"周五") and a duration in its plain form ("1 hour 30 minutes", "1小时30分钟后") are read by
``dateparser`` (docs/models.md says why and what was measured).

A change ("move my 9am reminder to 10", "rename the stand up reminder to ...", "把站会提醒改成10
点") names the reminder by its id, its text or its time, and says a new time of day (the
reminder keeps its kind), a whole new rule or day, or a new text: an :class:`Update` that the
phrase resolves against ``schedule_list``.

It never guesses: a part that looks like a time but cannot be read, a bare hour without am or
pm (except in a routine, where 7 to 11 are the morning's and 12 is noon, and in a change, where
the reminder's own time decides), a day without a time, a date that could be either of two
("next tuesday" said on a Monday: tomorrow or the Tuesday after; both are named), a midnight
that could start tomorrow or end it ("tomorrow at midnight", "明晚12点": both are named; "at
midnight" alone and "tonight at midnight" are the coming one), a reminder without a text or
without a time, a snooze without a length, each becomes an :class:`Ask` that names the part and
says what would work, in the message's language.
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
    "Snooze",
    "Update",
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


@dataclass(frozen=True, slots=True)
class Update:
    """Change one reminder, named by ``what`` (its id, its text, or its time of day as typed).

    ``at`` holds the clocks ("HH:MM") ``what`` can mean when it names a time ("9am": one, a bare
    "9": 09:00 and 21:00). Exactly one change is set: ``times``, a new time of day that keeps
    the reminder's kind (one "HH:MM:SS", or the two a bare hour can mean; the one nearer the
    reminder's own time is taken), with ``time_zone`` when the message named one; ``selector``, a
    whole new rule or instant (``schedule_create``'s selector names); or ``text``, a new text.
    """

    lang: Language
    what: str
    at: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    time_zone: str | None = None
    selector: tuple[str, JSONValue] | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Snooze:
    """Remind again, ``minutes`` from now, of the reminder delivered last."""

    lang: Language
    minutes: int


Reading = Create | ListAll | Cancel | CancelAll | Confirm | Update | Snooze | Ask

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
    r"^(?:(?:please|pls|hey|ok|okay|(?:can|could|would)\s+you)[\s,]+)*"
    r"(?:(?:list|show|view|check|see)(?:\s+me)?(?:\s+all)?(?:\s+(?:my|the))?\s+reminders?"
    r"|what(?:'s| is| are)?\s+(?:my\s+)?reminders?(?:\s+do\s+i\s+have)?"
    r"|what\s+(?:reminders|is\s+pending|are\s+my\s+reminders)(?:\s+do\s+i\s+have)?(?:\s+set)?"
    r"|what\s+reminders\s+(?:are\s+there|have\s+i\s+(?:got|set))"
    r"|(?:do\s+i\s+have\s+any|are\s+there\s+any|do\s+i\s+have|any)\s+reminders?"
    r"|(?:is\s+there\s+)?anything\s+(?:scheduled|coming\s+up|pending|set)"
    r"|what(?:'s|\s+is)\s+(?:scheduled|coming\s+up|pending|on\s+my\s+schedule)"
    r"|what\s+(?:do\s+i\s+have|have\s+i\s+got)\s+(?:scheduled|coming\s+up|set)"
    r"|(?:my\s+)?(?:upcoming\s+)?reminders)(?:\s+(?:now|today|set|pending|please))?$",
    _I,
)
_LIST_ZH: Final = re.compile(
    r"^(?:请)?(?:我|我现在|我目前)?(?:都|还|现在|目前)?(?:有|设了|设置了|定了)?(?:哪些|什么|几个|多少)"
    r"(?:个)?提醒(?:呢|吗|啊)?$"
    r"|^(?:请)?(?:列出|显示|查看|看看|看一下)(?:一下)?(?:我的)?(?:所有|全部)?(?:的)?提醒(?:列表)?$"
    r"|^(?:我的)?提醒(?:列表)?$|^我(?:的)?提醒(?:都)?有(?:哪些|什么)(?:呢)?$|^我有(?:没有)?提醒吗?$"
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
    r"|^(?:请|帮我)?把(?P<ba>.+?)(?:的|这个)?提醒(?:取消|删除|删掉)(?:吧|掉)?$"
    r"|^(?:不用|不要|别)(?:再)?提醒我(?P<stop>.+?)了?$"
)
_STOP_WHICH: Final = re.compile(
    r"^(?:(?:please\s+)?(?:stop|quit)\s+reminding\s+me|(?:不用|不要|别)(?:再)?提醒(?:我)?了?)$", _I
)
_STOP_EN: Final = re.compile(
    r"^(?:please\s+)?(?:stop|quit|don't|do\s+not)\s+(?:reminding|remind)\s+me\s+"
    r"(?:to\s+|about\s+|of\s+)?(?P<what>.+?)(?:\s+(?:anymore|any\s+more))?$",
    _I,
)


def _cancel(text: str, lang: Language) -> Reading | None:
    if _STOP_WHICH.match(text):
        return Ask(lang, _WHICH[lang])  # "stop reminding me", "别提醒我了": which one?
    if lang == "zh":
        found = _CANCEL_ALL_ZH.match(text)
        if found:
            return CancelAll(lang, _trim(found["what"] or "") or None)
        found = _CANCEL_ZH.match(text)
        if found:
            what = _trim(found["after"] or found["what"] or found["ba"] or found["stop"] or "")
            return Cancel(lang, what) if what else CancelAll(lang)
        return None
    found = _CANCEL_ALL_EN.match(text)
    if found:
        return CancelAll(lang, _trim(found["what"] or "") or None)
    found = _STOP_EN.match(text) or _CANCEL_EN.match(text)
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
    r"(?:seconds?|secs?|minutes?|minuts?|mintues?|mins?|hours?|hrs?|days?|weeks?|fortnights?|"
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
#: Weeks and fortnights, by their first letter.
_WEEK_UNITS: Final = {"w": 604800, "f": 1209600}


def _canonical_duration(amounts: list[tuple[float, str]]) -> tuple[str, int]:
    """The amounts as a plain English duration for ``dateparser`` ("1 hour 30 minutes"), and
    their length in seconds (to check what it read)."""
    seconds = 0.0
    words = []
    for count, unit in amounts:
        size = _WEEK_UNITS.get(unit[0], 0) or _UNIT_SECONDS.get(unit[:3], 60)
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
    rf"|(?P<w>{_ZH_NUM})\s*个?(?:星期|礼拜|周)(?![一二三四五六日天])|(?P<q>一刻钟)"
)


def _zh_amount(found: re.Match[str]) -> list[tuple[float, str]] | None:
    if found["q"]:
        return [(15.0, "minutes")]
    if found["d"]:
        return [(float(_zh_number(found["d"])), "days")]
    if found["w"]:
        return [(float(_zh_number(found["w"])), "weeks")]
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
    midnight: bool = False  # the clock was a word for midnight ("midnight", "午夜"), not "00:00"
    zone: str | None = None
    month_day: tuple[int, int] | None = None  # 8月7日
    rule: Literal["daily", "weekly", "monthly"] | None = None  # a routine at a time of day
    days: tuple[int, ...] = ()  # its ISO weekdays (weekly) or days of the month (monthly)
    rule_text: str | None = None  # the routine as typed ("every weekday", "每周一")
    every_day: bool = False  # "every day" / "daily" / "每天": daily with a time, else 24 hours
    parts: list[str] | None = None  # the pieces as typed
    problem: str | None = None  # "two_clocks" or "unreadable"

    def empty(self) -> bool:
        return self.parts is None


_WEEKDAYS: Final = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"  # noqa: E501
_MONTHS: Final = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_PARTS_EN: Final = r"(?:morning|afternoon|evening|night)"
#: Cities a person may name a zone by ("9am Paris time", "巴黎时间9点"), and their zones.
_CITY_ZONES: Final = {
    "paris": "Europe/Paris", "london": "Europe/London", "berlin": "Europe/Berlin",
    "madrid": "Europe/Madrid", "rome": "Europe/Rome", "new york": "America/New_York",
    "chicago": "America/Chicago", "los angeles": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles", "tokyo": "Asia/Tokyo", "beijing": "Asia/Shanghai",
    "shanghai": "Asia/Shanghai", "hong kong": "Asia/Hong_Kong", "singapore": "Asia/Singapore",
    "sydney": "Australia/Sydney",
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "香港": "Asia/Hong_Kong",
    "东京": "Asia/Tokyo", "新加坡": "Asia/Singapore", "巴黎": "Europe/Paris",
    "伦敦": "Europe/London", "柏林": "Europe/Berlin", "纽约": "America/New_York",
    "洛杉矶": "America/Los_Angeles", "悉尼": "Australia/Sydney",
}  # fmt: skip
_IANA: Final = r"UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+"
#: A zone named on its own (not after a clock): an Area/Location name, never a bare word.
_AREA_ZONE: Final = (
    r"(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)"
    r"/[A-Za-z0-9_+.-]+(?:/[A-Za-z0-9_+.-]+)?"
)
_CITY_EN: Final = "|".join(
    sorted((c.replace(" ", r"\s+") for c in _CITY_ZONES if c.isascii()), key=len, reverse=True)
)
_ZONE: Final = rf"(?:\s+(?:in\s+)?(?P<zone>{_IANA}|\(?(?:{_CITY_EN})\s+time\)?))?"
_ZONE2: Final = _ZONE.replace("?P<zone>", "?P<zone2>")
_EN_CLOCK: Final = (
    r"(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?\s*(?P<meridiem>am|pm|a\.m\.|p\.m\.)"
    r"|(?P<h24>\d{1,2})[:.](?P<m24>\d{2})(?:\s*(?:h|hrs))?"
    r"|(?P<oclock>\d{1,2})\s*o'?clock"
    r"|(?P<noon>noon|midday|midnight)"
)
_WD_SEP: Final = r"(?:\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+|\s*&\s*)"
_WD_RANGE: Final = rf"{_WEEKDAYS}\s*(?:-|–|to|through|thru|till|until)\s*{_WEEKDAYS}"
_WD_PLURAL: Final = r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)"
_WORKDAY: Final = r"(?:week\s?day|work\s?day|working\s+day|business\s+day|weekend)"
_ORDINAL: Final = r"(?:\d{1,2}(?:st|nd|rd|th)?|first)"
_ORDINALS: Final = rf"{_ORDINAL}(?:{_WD_SEP}(?:the\s+)?{_ORDINAL})*"
#: A routine at a time of day: weekdays, the days of a month, or every morning.
_EN_ROUTINE: Final = (
    rf"(?P<weekly>(?:every|each)\s+(?P<wd_every>(?:{_WD_RANGE}|{_WEEKDAYS}s?)"
    rf"(?:{_WD_SEP}(?:{_WD_RANGE}|{_WEEKDAYS}s?))*)"
    rf"|(?:(?:on|from)\s+)?(?P<wd_range>{_WD_RANGE})"
    rf"|(?:on\s+)?(?P<wd_plural>{_WD_PLURAL}(?:{_WD_SEP}{_WD_PLURAL})*)"
    rf"|(?:every|each)\s+(?P<wk_one>{_WORKDAY})"
    rf"|(?:(?:every|each|on|at)\s+)?(?P<wk_many>{_WORKDAY}s))"
    rf"|(?P<monthly>(?:on\s+)?(?:the\s+)?(?:day\s+)?(?P<md1>{_ORDINALS})\s+(?:day\s+)?of\s+"
    rf"(?:every|each)\s+month"
    rf"|(?:every|each)\s+(?:the\s+)?(?P<md2>{_ORDINALS})\s+(?:day\s+)?of\s+the\s+month"
    rf"|(?:every|each)\s+month\s+on\s+(?:the\s+)?(?:day\s+)?(?P<md3>{_ORDINALS})"
    rf"|monthly\s+on\s+(?:the\s+)?(?:day\s+)?(?P<md4>{_ORDINALS}))"
    rf"|(?P<daily>(?:every|each)\s+(?P<daily_part>{_PARTS_EN})|every\s?day)"
)
#: One piece of an English time, each alternative named by its kind.
_EN_PIECE: Final = (
    rf"(?P<rel>(?:in|after|within)\s+(?P<rel_d>{_EN_DURATION})|(?P<rel_d2>{_EN_DURATION})\s+(?:from\s+now|later))"
    rf"|{_EN_ROUTINE}"
    rf"|(?P<every>(?:every|each)\s+(?:(?P<every_d>{_EN_DURATION})|(?P<every_u>second|minute|hour|day|week|fortnight))|(?P<ly>hourly|daily|weekly))"
    r"|(?P<tonight>tonight|tonite|this\s+evening|this\s+afternoon|this\s+morning)"
    rf"|(?P<day>today|tomm?orr?ow|tmrw|(?:the\s+)?day\s+after\s+tomm?orr?ow|(?:on\s+)?(?:next\s+|this\s+)?{_WEEKDAYS}"
    rf"|(?:on\s+)?{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?|(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS})"
    rf"(?:\s+(?P<day_part>{_PARTS_EN}))?"
    rf"|(?P<part>(?:in\s+the\s+{_PARTS_EN})|at\s+night)"
    rf"|(?P<clock>(?:(?:at|by|around|@)\s+)?(?:{_EN_CLOCK}){_ZONE}|(?:at|by|around|@)\s+(?P<bare>\d{{1,2}}){_ZONE2})"
    rf"|(?P<zone_alone>\(?(?:in\s+)?{_AREA_ZONE}\)?|\(UTC\)|\(?(?:in\s+)?(?:{_CITY_EN})\s+time\)?)"
)  # fmt: skip
_EN_FRONT: Final = re.compile(rf"^(?:{_EN_PIECE})(?=$|[\s,:]|\s*-)[\s,:]*", _I)
_EN_BACK: Final = re.compile(rf"(?:^|[\s,]+)(?:{_EN_PIECE})$", _I)
#: Words that say "a time" in a text that was not read as one.
_EN_TIMEISH: Final = re.compile(
    r"\b(?:\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|[smhdw])|"
    r"seconds?|minutes?|hours?|days?|weeks?|fortnights?|today|tonight|tomorrow|noon|midnight|"
    r"o'?clock|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}[:.]\d{2}|morning|afternoon|evening|"
    rf"{_WEEKDAYS}|soon|later|sometime|in\s+a\s+(?:while|bit|moment)|every|weekdays?|weekends?)\b",
    _I,
)


def zone_name(typed: str) -> str:
    """The zone a typed zone names: an IANA name as typed (the tool checks it), ``UTC``, or a
    city's zone ("Paris time", "巴黎时间")."""
    typed = re.sub(r"^\(?(?:in\s+)?|\)$", "", typed.strip(), flags=_I)
    city = re.sub(r"\s+", " ", typed.lower()).removesuffix(" time").removesuffix("时间")
    if typed.upper() == "UTC":
        return "UTC"
    return _CITY_ZONES.get(city, typed)


_ISO_DAYS: Final = {"mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 7}


def _day_range(first: int, last: int) -> list[int]:
    """ISO weekdays from ``first`` through ``last``, across the week's end ("fri-mon")."""
    return [(first - 1 + step) % 7 + 1 for step in range((last - first) % 7 + 1)]


def _en_weekdays(text: str) -> tuple[int, ...]:
    """The ISO weekdays a list of English day names says ("mon-fri", "monday and thursday")."""
    text = text.lower()
    if re.search(_WORKDAY, text, _I):
        return (6, 7) if "weekend" in text else (1, 2, 3, 4, 5)
    days: set[int] = set()
    for found in re.finditer(_WD_RANGE, text, _I):
        names = re.findall(_WEEKDAYS, found.group(0), _I)
        days.update(_day_range(_ISO_DAYS[names[0][:3]], _ISO_DAYS[names[-1][:3]]))
    rest = re.sub(_WD_RANGE, " ", text, flags=_I)
    days.update(_ISO_DAYS[name[:3]] for name in re.findall(_WEEKDAYS, rest, _I))
    return tuple(sorted(days))


def _set_rule(
    when: _When, rule: Literal["daily", "weekly", "monthly"], days: tuple[int, ...], typed: str
) -> None:
    """Adds a routine to ``when`` (a second one makes the time unclear)."""
    if when.rule is not None:
        when.problem = "two_clocks"
        return
    when.rule, when.days, when.rule_text = rule, days, typed


def _en_piece(found: re.Match[str], when: _When) -> None:
    """Adds one English piece to ``when``."""
    typed = found.group(0).strip(" ,")
    if found["zone_alone"]:
        when.zone = zone_name(typed)  # a zone alone says no time: not one of the parts
        return
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
    elif found["weekly"]:
        _set_rule(when, "weekly", _en_weekdays(found["weekly"]), typed)
    elif found["monthly"]:
        ordinals = found["md1"] or found["md2"] or found["md3"] or found["md4"]
        days = {1 if n.lower() == "first" else int(n) for n in re.findall(r"\d+|first", ordinals)}
        if not days <= set(range(1, 32)):
            when.problem = "unreadable"
        _set_rule(when, "monthly", tuple(sorted(days)), typed)
    elif found["daily_part"]:
        _set_rule(when, "daily", (), typed)
        when.part = found["daily_part"].lower()
    elif found["daily"]:
        _en_every_unit("days", typed, when)
    elif found["ly"]:
        unit = {"hourly": "hours", "daily": "days"}.get(found["ly"].lower(), "weeks")
        _en_every_unit(unit, typed, when)
    elif found["every"]:
        _en_every(found, when, typed)
    elif found["tonight"]:
        word = found["tonight"].lower()
        when.day_offset = 0
        when.part = "night" if word in {"tonight", "tonite"} else word.split()[-1]
    elif found["day"]:
        day = re.sub(r"\s+", " ", found["day"].lower())
        day = re.sub(r"^on ", "", day)
        day = day.removeprefix("this ")
        when.day = re.sub(r"tomm?orr?ow|tmrw", "tomorrow", day)
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


def _en_every(found: re.Match[str], when: _When, typed: str) -> None:
    if found["every_d"]:
        when.every = _en_amounts([found["every_d"]])
        return
    _en_every_unit(found["every_u"].lower() + "s", typed, when)


def _en_every_unit(unit: str, typed: str, when: _When) -> None:
    """One of the unit ("every hour", "daily"); "every day" is also a daily routine when a time
    of day comes with it."""
    if when.every is not None:
        when.problem = "two_clocks"
    when.every = [(1.0, unit)]
    if unit == "days":
        when.every_day = True
        _set_rule(when, "daily", (), typed)


def _en_clock(found: re.Match[str], when: _When, typed: str) -> None:
    if when.clock is not None:
        when.problem = "two_clocks"
        return
    when.clock_text = re.sub(r"^(?:at|by|around|@)\s+", "", typed, flags=_I)
    zone = found["zone"] or found["zone2"]
    when.zone = zone_name(zone) if zone else None
    if found["noon"]:
        when.midnight = found["noon"].lower() == "midnight"
        when.clock = (0, 0) if when.midnight else (12, 0)
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
_LATE_PARTS: Final = {"evening", "night"}


def _hour_minute(
    when: _When, lang: Language, *, routine: bool = False
) -> tuple[int, int] | Ask | None:
    """The 24-hour clock of ``when``, or a question, or ``None`` (no clock and no part).

    An hour without am or pm is asked about, except in a ``routine`` ("every weekday at 9"),
    where 7 to 11 are the morning's and 12 is noon, as people set routines; the reply says the
    24-hour time it set."""
    if when.clock is None:
        if when.part is None:
            return None
        if when.part == "early":
            return Ask(lang, _WHAT_TIME_EARLY)  # 凌晨: some hour before dawn, never a default
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
        if routine and 7 <= hour <= 12:
            return hour, minute
        return Ask(lang, _AM_PM[lang].format(clock=when.clock_text, hour=hour))
    if when.part in _LATE_PARTS and hour == 12:
        return 24, minute  # "tonight at 12", "晚上12点": the midnight that ends the day
    if when.part in _PM_PARTS and hour < 12:
        hour += 12
    if when.part == "noon" and hour < 6:
        hour += 12
    return hour, minute


_WHAT_TIME_EARLY: Final = "凌晨几点？例如“凌晨5点”。"
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
        if month == -1:  # next month's
            month = now.month % 12 + 1
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
    if when.day is not None and when.day.startswith("next:"):
        _next_week(when, time)
    if when.every_day and when.rule == "daily":
        if when.clock is None and when.part is None:
            when.rule = None  # "every day" alone: every 24 hours from now
        else:
            when.every = None  # "every day at 9am": a daily routine
    if when.problem == "unreadable":
        return _unreadable(when.rule_text or (when.parts or [""])[0], lang)
    if when.every and (when.day or when.clock or when.part or when.month_day or when.rule):
        return Ask(lang, _NOT_EVERY_AT[lang])
    if when.problem == "two_clocks" or (
        sum(x is not None for x in (when.duration, when.every)) > 1
        or (
            (when.duration or when.every)
            and (when.day or when.clock or when.part or when.month_day)
        )
        or (
            when.rule
            and (when.duration or when.day or when.day_offset is not None or when.month_day)
        )
    ):
        return Ask(lang, _TWO_TIMES[lang].format(parts=" / ".join(when.parts or [])))
    if when.rule is not None:
        return _routine(when, lang, _zone(when.zone, time))
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
    if when.day is not None and when.day.startswith("next ") and lang == "en":
        asked = _next_weekday(when, now)
        if asked is not None:
            return asked
    if when.day is not None or when.day_offset is not None or when.month_day is not None:
        day = _day_date(when, now, lang)
        if day is None:
            return _unreadable((when.parts or [""])[0], lang)
        if (when.midnight or clock[0] == 24) and when.day in _TOMORROW:
            return _which_midnight(when, day, lang)
        if clock[0] == 24 or (when.midnight and day == now.date()):
            day += dt.timedelta(days=1)  # "tonight at midnight": the one that ends today
    elif clock[0] == 24:
        day = now.date() + dt.timedelta(days=1)
    else:
        day = now.date()
        if clock <= (now.hour, now.minute):
            day += dt.timedelta(days=1)  # "at 5pm", "in the morning", "凌晨3点": the next one
    return "at", {
        "date": day.isoformat(),
        "time": f"{clock[0] % 24:02d}:{clock[1]:02d}:00",
        "time_zone": zone,
    }


_DAY_NAMES: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES: Final = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _next_weekday(when: _When, now: dt.datetime) -> Ask | None:
    """ "next friday": the coming Friday when it is already in next week (said on a Wednesday,
    "next monday" is in 5 days); a question naming both dates when the coming one is still in
    this week (said on a Monday, "next tuesday" may be tomorrow or the Tuesday after), by a week
    that starts on Monday or on Sunday."""
    assert when.day is not None
    name = when.day.removeprefix("next ")
    ahead = (_ISO_DAYS[name[:3]] - now.isoweekday() - 1) % 7 + 1  # 1 to 7 days from today
    coming = now.date() + dt.timedelta(days=ahead)
    if ahead == 7 or not (coming.isoweekday() > now.isoweekday() or now.isoweekday() == 7):
        when.day, when.day_offset = None, ahead
        return None
    later = coming + dt.timedelta(days=7)
    first, second = (f"{_MONTH_NAMES[d.month - 1]} {d.day}" for d in (coming, later))
    weekday = _DAY_NAMES[coming.weekday()]
    return Ask(
        "en",
        f'By "{when.day}" do you mean {weekday}, {first} or {weekday}, {second}? '
        f'Say "on {first}" or "on {second}".',
    )


#: The day words of tomorrow, whose midnight may be the one that starts it or the one that ends it.
_TOMORROW: Final = frozenset({"tomorrow", "明天"})


def _which_midnight(when: _When, day: dt.date, lang: Language) -> Ask:
    """ "tomorrow at midnight", "明天午夜", "明晚12点": the midnight that starts tomorrow
    (tonight's) or the one that ends it; a question naming both instants."""
    end = day + dt.timedelta(days=1)
    if lang == "zh":
        said = "".join(when.parts or [])
        first, second = (f"{d.month}月{d.day}日" for d in (day, end))
        start_day, end_day = ("周" + "一二三四五六日"[d.weekday()] for d in (day, end))
        return Ask(
            "zh",
            f"“{said}”是指{first}（{start_day}）的开始（今晚），还是它的结束（{second}{end_day}0点）？"
            f"请说“{first}0点”或“{second}0点”。",
        )
    said = " ".join(when.parts or [])
    first, second = (f"{_MONTH_NAMES[d.month - 1]} {d.day}" for d in (day, end))
    start_day, end_day = (_DAY_NAMES[d.weekday()] for d in (day, end))
    return Ask(
        "en",
        f'By "{said}" do you mean the start of {start_day}, {first} (tonight) or the end of it '
        f'(00:00 on {end_day}, {second})? Say "on {first} at 00:00" or "on {second} at 00:00".',
    )


def _next_week(when: _When, time: TimeContext) -> None:
    """下周X: that weekday in the next calendar week, as days from today."""
    assert when.day is not None
    weekday = int(when.day.split(":")[1])
    today = local_now(_zone(None, time), time).date()
    monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
    when.day, when.day_offset = None, (monday + dt.timedelta(days=weekday) - today).days


def _routine(when: _When, lang: Language, zone: str) -> tuple[str, JSONValue] | Ask:
    """The ``daily``, ``weekly`` or ``cron`` selector of a routine (a cron one for the days of
    a month), or a question."""
    clock = _hour_minute(when, lang, routine=True)
    if isinstance(clock, Ask):
        return clock
    if clock is None:
        return Ask(lang, _WHAT_TIME[lang].format(day=when.rule_text))
    hour, minute = clock[0] % 24, clock[1]
    wall = f"{hour:02d}:{minute:02d}:00"
    if when.rule == "daily" or (when.rule == "weekly" and len(when.days) == 7):
        return "daily", {"time": wall, "time_zone": zone}
    if when.rule == "weekly":
        return "weekly", {"time": wall, "time_zone": zone, "weekdays": list(when.days)}
    days = ",".join(str(day) for day in when.days)
    return "cron", {"expression": f"{minute} {hour} {days} * *", "time_zone": zone}


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
        "I can repeat a reminder every so many minutes or hours, or at a time of day "
        '("every day at 9am", "every Monday at 10am"), but not both at once. Which do you mean?'
    ),
    "zh": (
        "我可以每隔几分钟或几小时提醒一次，也可以在固定的时间提醒（“每天早上9点”“每周一上午10点”），"
        "但不能两样同时。你指的是哪一种？"
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
    r"\b(?:(?:remind|remnd|remid|rmind|reimnd|remaind)\s+me"
    r"|(?:set|create|add|make)\s+(?:me\s+)?(?:a\s+|an\s+)?(?:reminder|alarm)|remember\s+me"
    r"|(?P<wake>wake\s+me(?:\s+up)?))\b|^reminder\b",
    _I,
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
        count = len(when.parts or [])
        _en_piece(found, when)
        if when.parts is not None and len(when.parts) > count:  # a zone adds no part
            when.parts.insert(start, when.parts.pop())  # the pieces in the order typed
        text = text[: found.start()]


#: A unit on its own ends a text without being a time ("plan the week").
_UNIT_NOUN: Final = r"(?:second|minute|hour|day|week)s?"


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
    if _EN_TIMEISH.fullmatch(tail[-1]) and not re.fullmatch(_UNIT_NOUN, tail[-1], _I):
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
    if re.match(r"for\s", task, _I):  # "set a reminder for 3:45pm to pick up the kids"
        task = _CONNECTOR_EN.sub("", _take_front(task[4:], when), count=1)
    else:
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
    if not task and found["wake"] and not when.empty():
        task = "wake up"  # "wake me up at 6:15 tomorrow"
    if not task:
        said = " ".join(when.parts or [])
        said = f"at {said}" if said[:1].isdigit() else said  # "set an alarm for 7am"
        return Ask("en", f"What should I remind you of {said}?")
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
    r"|(?P<mon>\d{1,2})月(?P<dom>\d{1,2})[日号]|下个?月(?P<ndom>\d{1,2})[日号])"
)
_ZH_PART: Final = r"(?P<part>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨|今晚|明早|明晚|明天早上)"
_ZH_CLOCK: Final = (
    rf"(?P<clock>(?P<ch>{_ZH_NUM})[点點时](?:(?P<cm>{_ZH_NUM})分?|(?P<chalf>半)|(?P<cq>一刻|三刻))?"
    r"|(?P<dh>\d{1,2})[:：](?P<dm>\d{2})|(?P<midnight>午夜|半夜12点|半夜十二点))"
)
_ZH_ANY_AMOUNT: Final = re.sub(r"\?P<\w+>", "?:", _ZH_AMOUNT)
_ZH_WD: Final = r"[一二三四五六日天]"
_ZH_WEEK: Final = r"(?:周|星期|礼拜)"
_ZH_TO: Final = r"(?:到|至|-|~|～)"
#: A routine at a time of day: weekdays, workdays, the days of a month, every evening.
_ZH_ROUTINE: Final = (
    rf"(?P<zweekly>(?:每个?|每逢){_ZH_WEEK}(?P<zwd>{_ZH_WD}(?:(?:[、,，和及与跟]|{_ZH_TO})?"
    rf"{_ZH_WEEK}?{_ZH_WD})*)(?!次)"
    rf"|(?P<zwr>{_ZH_WEEK}{_ZH_WD}{_ZH_TO}{_ZH_WEEK}?{_ZH_WD})"
    r"|(?:每个?|每逢)?(?P<zwk>工作日|周末|双休日))"
    rf"|(?P<zmonthly>每个?月(?:的)?(?P<zmd>{_ZH_NUM}[号日](?:[、,，和及与]{_ZH_NUM}[号日]?)*))"
    r"|(?P<zdaily>每(?P<zdp>晚|早))"
)
_ZH_ZONE: Final = "|".join(c for c in _CITY_ZONES if not c.isascii())
_ZH_PIECE: Final = (
    rf"(?:在\s*)?(?:(?P<rel>(?:{_ZH_ANY_AMOUNT})(?:{_ZH_ANY_AMOUNT})?)\s*(?:之|以)?后"
    rf"|{_ZH_ROUTINE}"
    rf"|(?P<every>每(?:隔)?(?P<every_d>(?:{_ZH_ANY_AMOUNT})|小时|分钟|天|日|周|星期)(?:一次)?)"
    rf"|(?P<zzone>(?:{_ZH_ZONE})时间|{_AREA_ZONE})"
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
    typed = found.group(0).strip(" ，,")
    if found["zzone"]:
        when.zone = zone_name(found["zzone"])  # a zone alone says no time: not one of the parts
        return
    when.parts = [*(when.parts or []), typed]
    if found["zweekly"] or found["zwr"] or found["zwk"]:
        _set_rule(when, "weekly", _zh_weekdays(found), typed)
    elif found["zmonthly"]:
        days = {_zh_number(n) for n in re.findall(_ZH_NUM, found["zmd"])}
        if not days <= set(range(1, 32)):
            when.problem = "unreadable"
        _set_rule(when, "monthly", tuple(sorted(days)), typed)
    elif found["zdaily"]:
        _set_rule(when, "daily", (), typed)
        when.part = "evening" if found["zdp"] == "晚" else "morning"
    elif found["rel"]:
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
        plain = {"小时": "hours", "分钟": "minutes", "天": "days", "日": "days", "周": "weeks",
                 "星期": "weeks"}  # fmt: skip
        if unit in {"天", "日"} and when.rule == "weekly":
            return  # 工作日每天: every one of those days
        if when.every is not None:
            when.problem = "two_clocks"
        if unit in plain:
            when.every = [(1.0, plain[unit])]
            if plain[unit] == "days":  # 每天: a daily routine when a time of day comes with it
                when.every_day = True
                _set_rule(when, "daily", (), typed)
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


def _zh_weekdays(found: re.Match[str]) -> tuple[int, ...]:
    """The ISO weekdays a Chinese routine names (每周一、三、五; 周一到周五; 工作日)."""
    if found["zwk"]:
        return (1, 2, 3, 4, 5) if found["zwk"] == "工作日" else (6, 7)
    text = found["zwd"] or found["zwr"]
    iso = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
    days: set[int] = set()
    for found_range in re.finditer(rf"({_ZH_WD}){_ZH_TO}{_ZH_WEEK}?({_ZH_WD})", text):
        days.update(_day_range(iso[found_range[1]], iso[found_range[2]]))
    rest = re.sub(rf"{_ZH_WD}{_ZH_TO}{_ZH_WEEK}?{_ZH_WD}", "", text)
    days.update(iso[day] for day in re.findall(_ZH_WD, rest))
    return tuple(sorted(days))


def _zh_day(found: re.Match[str], when: _When) -> None:
    if found["wd"]:
        weekday = _ZH_WEEKDAY[found["wd"]]
        when.day = f"next:{weekday}" if found["next"] else "周" + "一二三四五六日"[weekday]
    elif found["mon"]:
        when.month_day = (int(found["mon"]), int(found["dom"]))
    elif found["ndom"]:
        when.month_day = (-1, int(found["ndom"]))  # 下个月15号: the month after this one
    else:
        when.day = found["day"]


def _zh_clock(found: re.Match[str], when: _When) -> None:
    if when.clock is not None:
        when.problem = "two_clocks"
        return
    when.clock_text = found["clock"]
    if found["midnight"]:
        when.clock, when.meridiem, when.midnight = (0, 0), "24h", True
        return
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


_REMIND_ZH: Final = re.compile(r"提醒一下我|提醒我|(?P<wake>叫醒我)|叫我|提醒")
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
        return _unreadable(when.rule_text or "、".join(when.parts or []), "zh")
    leftover = _ZH_TIMEISH.search(task)
    if leftover is not None:
        return _unreadable(_zh_leftover(task, leftover), "zh")
    if when.empty():
        if not task:
            return Ask("zh", _WHAT_AND_WHEN["zh"])
        return Ask("zh", f"什么时候提醒你“{task}”？例如“10分钟后”“下午3点”或“明天早上9点”。")
    if not task and found["wake"] and not when.empty():
        task = "起床"  # "明早6点叫醒我"
    if not task:
        return Ask("zh", f"{''.join(when.parts or [])}要提醒你什么？")
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


# ---------------------------------------------------------------------------------------------
# Changing a reminder: its time, its rule, or its text

_ID: Final = re.compile(r"schedule-\d+")
_UNQUOTE: Final = re.compile(r"^[\"'“‘「](.*)[\"'”’」]$")


def _unquote(text: str) -> str:
    return _UNQUOTE.sub(r"\1", text.strip()).strip()


_UPDATE_EN: Final = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?"
    r"(?P<verb>move|reschedule|push|shift|change|update|modify|edit|rename)\s+(?P<rest>.+)$",
    _I,
)
_TO_EN: Final = re.compile(r"\s+(?:to|for|as)\s+", _I)
_FIELD_EN: Final = re.compile(
    r"^(?:the\s+)?(?P<field>time|text|name|title|wording)\s+(?:of|for)\s+(?P<what>.+)$"
    r"|^(?P<what2>.+?)'s\s+(?P<field2>time|text|name|title|wording)$",
    _I,
)
_UPDATE_ZH: Final = re.compile(
    r"^(?:请|麻烦)?(?:你|帮我)?(?P<ba>把|将)?(?P<target>.+?)"
    r"(?P<verb>改名为|改名成|改名叫|重命名为|的内容改成|的内容改为|的文字改成"
    r"|改成|改为|换成|调成|改到|换到|调到|调整到|挪到|移到|推迟到|推到|提前到)(?P<new>.+)$"
)
_ZH_RENAME: Final = ("改名", "重命名", "的内容", "的文字")
_ZH_EITHER: Final = ("改成", "改为", "换成", "调成")
_WHICH_UPDATE: Final = {
    "en": 'Which reminder? Say what it says, for example "move the stretch reminder to 10:00".',
    "zh": "改哪个提醒？请说出它的内容，例如“把伸展的提醒改到10点”。",
}
_RENAME_WHAT: Final = {
    "en": "What should {what} say instead?",
    "zh": "要把{what}改成什么？",
}


def _only_clock(when: _When) -> bool:
    """``when`` says a time of day and nothing else (no day, routine or duration)."""
    return (
        (when.clock is not None or when.part is not None)
        and when.problem is None
        and not (when.day or when.month_day or when.rule or when.every or when.duration)
        and when.day_offset is None
    )


def _clock_choices(when: _When, lang: Language) -> tuple[tuple[int, int], ...] | Ask:
    """The 24-hour clocks a time of day can mean: an hour without am or pm, the morning's and
    the evening's ("10": 10:00 and 22:00); otherwise the one it says."""
    if when.clock is not None and when.meridiem is None and when.part is None:
        hour, minute = when.clock
        if minute <= 59:
            return (hour % 12, minute), (hour % 12 + 12, minute)
    clock = _hour_minute(when, lang)
    assert clock is not None  # called with a clock or a part of the day
    return clock if isinstance(clock, Ask) else (clock,)


def _new_time(text: str, lang: Language) -> _When | None:
    """``text`` read as a time, when all of it is one ("10", "10am", "明天上午10点", "every
    Monday at 9am"); else ``None``."""
    text = _trim(text)
    when = _When()
    if lang == "zh":
        rest = _zh_take(text, when, _ZH_FRONT, front=True)
    else:
        rest = _take_front(text, when)
        if (_trim(rest) or when.empty()) and re.match(r"\d{1,2}\b", text):
            when = _When()  # "10", "10 in the evening": an hour needs its "at" to be read
            rest = _take_front(f"at {text}", when)
    return None if _trim(rest) or when.empty() else when


def _target(typed: str, lang: Language) -> tuple[str, tuple[str, ...]] | None:
    """What names the reminder to change, and the clocks ("HH:MM") it can mean when it is a
    time ("my 9am reminder", "9点的提醒"); ``None`` when it names none ("it", "the reminder")."""
    what = _unquote(_trim(typed))
    if lang == "zh":
        what = re.sub(r"^(?:我的|那个|这个)", "", what)
        what = re.sub(r"^提醒[:：\s]*", "", what)
        what = _unquote(re.sub(r"(?:的|这个|那个)?提醒$", "", what)).removesuffix("的")
    else:
        what = re.sub(r"^(?:my|the|this|that)\s+", "", what, flags=_I)
        what = re.sub(
            r"^reminders?(?:\s+(?:to|about|for|at|called|named|saying)\b|$)", "", what, flags=_I
        )
        what = _unquote(re.sub(r"(?:^|\s+)reminders?$", "", what.strip(), flags=_I))
    if what.lower() in {"", "it", "that", "this", "one", "它", "这个", "那个"}:
        return None
    when = _new_time(what, lang)
    if when is not None and _only_clock(when):
        choices = _clock_choices(when, lang)
        if not isinstance(choices, Ask):
            return what, tuple(f"{hour:02d}:{minute:02d}" for hour, minute in choices)
    return what, ()


def _changed(
    target: tuple[str, tuple[str, ...]] | None, when: _When, lang: Language, time: TimeContext
) -> Reading:
    """The change of ``target`` to the time ``when`` says, or a question."""
    if target is None:
        return Ask(lang, _WHICH_UPDATE[lang])
    what, at = target
    if not _only_clock(when):
        selector = _selector(when, lang, time)
        if isinstance(selector, Ask):
            return selector
        return Update(lang, what, at, selector=selector)
    choices = _clock_choices(when, lang)
    if isinstance(choices, Ask):
        return choices
    times = tuple(f"{hour:02d}:{minute:02d}:00" for hour, minute in choices)
    return Update(lang, what, at, times=times, time_zone=when.zone)


def _renamed(target: tuple[str, tuple[str, ...]] | None, new: str, lang: Language) -> Reading:
    if target is None:
        return Ask(lang, _WHICH_UPDATE[lang])
    what, at = target
    text = _unquote(_trim(new))
    if not text:
        return Ask(lang, _RENAME_WHAT[lang].format(what=_quoted(what, lang)))
    return Update(lang, what, at, text=text)


def _quoted(text: str, lang: Language) -> str:
    return f"“{text}”" if lang == "zh" else f'"{text}"'


def _names_reminder(typed: str, lang: Language) -> bool:
    """``typed`` says it is a reminder ("the stretch reminder", "站会提醒", an id)."""
    words = r"提醒" if lang == "zh" else r"\breminders?\b"
    return bool(re.search(words, typed, _I) or _ID.fullmatch(_unquote(typed)))


def _read_update_en(message: str, time: TimeContext) -> Reading | None:
    found = _UPDATE_EN.match(message)
    if found is None:
        return None
    verb = found["verb"].lower()
    splits = [
        (found["rest"][: cut.start()], found["rest"][cut.end() :])
        for cut in _TO_EN.finditer(found["rest"])
    ]
    for typed, new in splits:
        field = _FIELD_EN.match(typed)
        what = typed if field is None else field["what"] or field["what2"]
        if field is not None and (field["field"] or field["field2"]).lower() != "time":
            return _renamed(_target(what, "en"), new, "en")
        when = None if verb == "rename" else _new_time(new, "en")
        if when is not None:
            return _changed(_target(what, "en"), when, "en", time)
    named = [(typed, new) for typed, new in splits if _names_reminder(typed, "en")]
    if not named and verb != "rename":
        return None  # "move the car to the garage"
    typed, new = (named or splits or [("", "")])[-1]
    if verb in {"move", "reschedule", "push", "shift"} or (
        verb != "rename" and _EN_TIMEISH.search(new)
    ):
        return _unreadable(_trim(new), "en")
    if not splits:
        return Ask("en", _WHICH_UPDATE["en"])  # "rename it"
    return _renamed(_target(typed, "en"), new, "en")


def _read_update_zh(message: str, time: TimeContext) -> Reading | None:
    found = _UPDATE_ZH.match(message)
    if found is None or not (found["ba"] or found["target"].endswith("提醒")):
        return None  # "提醒我把PPT改成PDF" asks for a reminder
    verb, typed, new = found["verb"], found["target"], found["new"]
    target = _target(typed, "zh")
    if verb.startswith(_ZH_RENAME):
        return _renamed(target, new, "zh")
    when = _new_time(new, "zh")
    if when is not None:
        return _changed(target, when, "zh", time)
    if not _names_reminder(typed, "zh"):
        return None  # "把衣服改成红色"
    if verb not in _ZH_EITHER or _ZH_TIMEISH.search(_trim(new)):
        return _unreadable(_trim(new), "zh")
    return _renamed(target, new, "zh")


# ---------------------------------------------------------------------------------------------
# Snoozing the reminder delivered last

_SNOOZE_EN: Final = re.compile(
    r"^(?:(?:please|pls|ok|okay)[\s,]+)?(?:snooze(?:\s+(?:it|that|this|(?:the|this)\s+reminder))?"
    r"|remind\s+me\s+(?:again|once\s+more)(?:\s+later)?|remind\s+me\s+later)"
    rf"(?:\s+(?:for|by|in|after)?\s*(?P<duration>{_EN_DURATION}))?(?P<rest>\s.*)?$",
    _I,
)
_SNOOZE_ZH: Final = re.compile(
    rf"^(?:请)?(?:(?P<duration>{_ZH_ANY_AMOUNT})(?:之|以)?后|(?P<later>稍后|等会儿?|待会儿?|过一会儿?))?"
    r"再(?:提醒|叫)(?:我)?(?:一次|一下)?(?:吧)?$"
    rf"|^(?:请)?(?:推迟|延后|贪睡)(?P<duration2>{_ZH_ANY_AMOUNT})?(?:吧)?$"
)
#: The longest snooze, in minutes (a week; the tool's own limit).
_MAX_SNOOZE_MINUTES: Final = 7 * 24 * 60
_SNOOZE_HOW_LONG: Final = {
    "en": 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).',
    "zh": "要推迟多久？请说“10分钟后再提醒我”或“1小时后再提醒我”（最多一周）。",
}


def _snooze(text: str, lang: Language) -> Reading | None:
    """A snooze of the reminder delivered last ("snooze 10 minutes", "remind me again in an
    hour", "10分钟后再提醒我"), or the question how long; ``None`` when it is none."""
    if lang == "zh":
        found = _SNOOZE_ZH.match(text)
        if found is None:
            return None
        duration = found["duration"] or found["duration2"]
        amounts: list[tuple[float, str]] = []
        for piece in re.finditer(_ZH_AMOUNT, duration or ""):
            amounts.extend(_zh_amount(piece) or [])
    else:
        found = _SNOOZE_EN.match(re.sub(r"[\s,]+(?:please|pls|thanks)$", "", text, flags=_I))
        if found is None:
            return None
        if found["rest"]:  # "remind me later to call mom": a reminder's text, not a snooze
            return None
        amounts = _en_amounts([found["duration"]]) if found["duration"] else []
    seconds = _canonical_duration(amounts)[1] if amounts else 0
    if not amounts or seconds % 60 or not 1 <= seconds // 60 <= _MAX_SNOOZE_MINUTES:
        return Ask(lang, _SNOOZE_HOW_LONG[lang])
    return Snooze(lang, seconds // 60)


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
    snoozed = _snooze(flat, lang)
    if snoozed is not None:
        return snoozed
    cancelled = _cancel(flat, lang)
    if cancelled is not None:
        return cancelled
    updated = (_read_update_zh if lang == "zh" else _read_update_en)(flat, time)
    if updated is not None:
        return updated
    if lang == "zh":
        return _read_create_zh(message, time) if _REMIND_ZH.search(message) else None
    return _read_create_en(message, time) if _REMIND_EN.search(message) else None
