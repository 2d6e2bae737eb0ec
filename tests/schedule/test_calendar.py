"""The wall-clock engine: daylight-saving vectors, and a brute-force minute walk to compare with.

The brute force knows nothing of the engine: it steps through UTC minutes, reads each instant's
local wall time in the zone, and keeps an instant when the rule matches that wall time and the
instant is the earlier reading of it (``fold=0``). Compared over random rules and times near
the zones' transitions in 2011-2026: a rule never fires twice for one wall time and is never an
hour off.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
from collections.abc import Callable
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_schedule import MAX_INSTANT_MS, MIN_INSTANT_MS, canonical_cron, format_instant
from dsh_schedule import parse_instant as ms
from dsh_schedule._calendar import HORIZON_YEARS, cron_wall, latest_due, next_after, weekly_wall

NEW_YORK = ZoneInfo("America/New_York")
UTC = ZoneInfo("UTC")
APIA = ZoneInfo("Pacific/Apia")
HOUR_MS = 3_600_000
MINUTE_MS = 60_000
DAY_MS = 86_400_000


def at(hours: int, minutes: int = 0, seconds: int = 0, millis: int = 0) -> int:
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def iso(instant: int | None) -> str | None:
    return None if instant is None else format_instant(instant)


# ---------------------------------------------------------------------------------------------
# The daylight-saving vectors (America/New_York: 2026-03-08 springs forward at 02:00 EST,
# 2026-11-01 falls back at 02:00 EDT).

DAILY_0230 = weekly_wall(at(2, 30), None)
DAILY_0130 = weekly_wall(at(1, 30), None)


@pytest.mark.parametrize(
    ("floor", "expected"),
    [
        ("2026-03-07T00:00:00.000Z", "2026-03-07T07:30:00.000Z"),
        # 02:30 does not exist on 2026-03-08: skipped for that date, never shifted.
        ("2026-03-07T07:30:00.000Z", "2026-03-09T06:30:00.000Z"),
        ("2026-03-08T05:00:00.000Z", "2026-03-09T06:30:00.000Z"),
    ],
)
def test_a_wall_time_in_a_spring_forward_gap_is_skipped(floor: str, expected: str) -> None:
    assert iso(next_after(DAILY_0230, NEW_YORK, ms(floor))) == expected


@pytest.mark.parametrize(
    ("floor", "expected"),
    [
        # 01:30 happens twice on 2026-11-01 (05:30Z EDT, 06:30Z EST): it fires at the earlier.
        ("2026-11-01T04:00:00.000Z", "2026-11-01T05:30:00.000Z"),
        # Decided at or after the earlier instant, the repeat does not fire again that day.
        ("2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"),
        ("2026-11-01T06:00:00.000Z", "2026-11-02T06:30:00.000Z"),
        ("2026-11-01T06:30:00.000Z", "2026-11-02T06:30:00.000Z"),
    ],
)
def test_a_repeated_wall_time_fires_once_at_the_earlier_instant(floor: str, expected: str) -> None:
    assert iso(next_after(DAILY_0130, NEW_YORK, ms(floor))) == expected


def test_a_weekly_sunday_in_the_gap_waits_for_the_next_sunday() -> None:
    sundays = weekly_wall(at(2, 30), frozenset({7}))
    assert iso(next_after(sundays, NEW_YORK, ms("2026-03-02T00:00:00.000Z"))) == (
        "2026-03-15T06:30:00.000Z"
    )


def test_a_cron_rule_skips_the_gap_date_too() -> None:
    march_sundays = cron_wall(canonical_cron("30 2 * 3 0"))
    first = next_after(march_sundays, NEW_YORK, ms("2026-02-28T00:00:00.000Z"))
    assert iso(first) == "2026-03-01T07:30:00.000Z"
    assert first is not None
    assert iso(next_after(march_sundays, NEW_YORK, first)) == "2026-03-15T06:30:00.000Z"


@pytest.mark.parametrize(
    ("expression", "floor", "expected"),
    [
        # Both day fields restricted: the 13th or a Friday (Friday the 4th comes first).
        ("0 0 13 * 5", "2026-09-01T00:00:00.000Z", "2026-09-04T00:00:00.000Z"),
        # A star-led day field: an odd day and a Monday (the 14th is even, the 21st odd).
        ("0 9 */2 * 1", "2026-09-13T00:00:00.000Z", "2026-09-21T09:00:00.000Z"),
    ],
)
def test_the_vixie_day_rule(expression: str, floor: str, expected: str) -> None:
    assert iso(next_after(cron_wall(canonical_cron(expression)), UTC, ms(floor))) == expected


def test_the_latest_due_occurrence_across_a_fall_back_is_the_earlier_instant() -> None:
    # Sundays at 01:45, committed to 2026-10-25, decided at 06:30Z on 2026-11-01 (01:30 EST,
    # the second pass): 01:45 EDT (05:45Z) is the latest occurrence before it.
    sundays = cron_wall(canonical_cron("45 1 * * 0"))
    latest = latest_due(
        sundays, NEW_YORK, ms("2026-10-25T05:45:00.000Z"), ms("2026-11-01T06:30:00.000Z")
    )
    assert iso(latest) == "2026-11-01T05:45:00.000Z"


def test_a_day_that_never_exists_has_no_occurrence() -> None:
    assert next_after(cron_wall("0 0 30 2 *"), NEW_YORK, ms("2026-01-01T00:00:00.000Z")) is None


def test_the_last_representable_occurrence_and_none_after_it() -> None:
    behind = ZoneInfo("Etc/GMT+12")  # UTC-12
    assert iso(next_after(DAILY_0130, behind, ms("9999-12-30T10:00:00.000Z"))) == (
        "9999-12-30T13:30:00.000Z"
    )
    # 9999-12-31 01:30 at UTC-12 is 13:30Z on the last day; after it, the next is in year 10000.
    assert next_after(DAILY_0130, behind, ms("9999-12-31T13:30:00.000Z")) is None


def test_a_date_the_zone_skipped_is_skipped() -> None:
    # Samoa moved across the date line: 2011-12-30 never happened in Pacific/Apia.
    nine = weekly_wall(at(9), None)
    found = []
    instant = ms("2011-12-28T00:00:00.000Z")
    for _ in range(3):
        following = next_after(nine, APIA, instant)
        assert following is not None
        instant = following
        local = dt.datetime.fromtimestamp(instant / 1000, tz=APIA)
        found.append(local.isoformat())
    assert found == [
        "2011-12-28T09:00:00-10:00",
        "2011-12-29T09:00:00-10:00",
        "2011-12-31T09:00:00+14:00",
    ]


# ---------------------------------------------------------------------------------------------
# Edges of the representable range and of the search.


def test_a_floor_or_ceiling_outside_years_1_to_9999_in_the_zone() -> None:
    ahead, behind = ZoneInfo("Etc/GMT-14"), ZoneInfo("Etc/GMT+12")
    # The last instant reads as year 10000 fourteen hours ahead: nothing follows it.
    assert next_after(DAILY_0130, ahead, MAX_INSTANT_MS) is None
    # The first instant reads as year 0 twelve hours behind: the ceiling's reading does not
    # exist, so the committed target is what is due.
    assert latest_due(DAILY_0130, behind, MIN_INSTANT_MS, MIN_INSTANT_MS) == MIN_INSTANT_MS
    # Past the last instant, looking back from three hours later would leave the calendar.
    last = latest_due(DAILY_0130, UTC, ms("9999-12-30T01:30:00.000Z"), MAX_INSTANT_MS)
    assert iso(last) == "9999-12-31T01:30:00.000Z"


def test_an_occurrence_whose_instant_leaves_the_range_is_not_one() -> None:
    # 00:30 on 0001-01-01 at UTC+14 is before the first representable instant.
    ahead = ZoneInfo("Etc/GMT-14")
    half_past = weekly_wall(at(0, 30), None)
    first = next_after(half_past, ahead, MIN_INSTANT_MS)
    assert iso(first) == "0001-01-01T10:30:00.000Z"
    assert latest_due(half_past, ahead, MIN_INSTANT_MS, MIN_INSTANT_MS + HOUR_MS) == (
        MIN_INSTANT_MS
    )


def test_cron_searches_stop_at_the_end_of_the_calendar() -> None:
    yearly = cron_wall("0 0 1 1 *")
    assert next_after(yearly, UTC, ms("9999-06-01T00:00:00.000Z")) is None
    assert latest_due(yearly, UTC, MIN_INSTANT_MS, ms("0001-06-01T00:00:00.000Z")) == ms(
        "0001-01-01T00:00:00.000Z"
    )
    assert latest_due(yearly, UTC, MIN_INSTANT_MS, MIN_INSTANT_MS) == MIN_INSTANT_MS


def test_a_cron_match_exactly_at_the_floor_or_ceiling() -> None:
    hourly = cron_wall("0 * * * *")
    noon = ms("2026-08-05T12:00:00.000Z")
    assert next_after(hourly, UTC, noon) == noon + HOUR_MS
    assert latest_due(hourly, UTC, noon - HOUR_MS, noon) == noon


def test_a_rule_without_any_wall_time_searches_the_horizon_and_gives_up() -> None:
    never = weekly_wall(at(9), frozenset())
    noon = ms("2026-08-05T12:00:00.000Z")
    assert next_after(never, UTC, noon) is None
    assert latest_due(never, UTC, noon - DAY_MS, noon) == noon - DAY_MS
    # From near the end of the calendar the walk ends where the dates do.
    assert next_after(never, UTC, ms("9999-12-01T00:00:00.000Z")) is None
    assert HORIZON_YEARS == 400


def test_a_committed_target_newer_zone_data_would_move_stays_due() -> None:
    # A committed target that is not an occurrence (as if zone data changed) is still due.
    nine = weekly_wall(at(9), None)
    committed = ms("2026-08-05T09:30:00.000Z")
    assert latest_due(nine, UTC, committed, committed + MINUTE_MS) == committed


# ---------------------------------------------------------------------------------------------
# Against the brute force.

ZONES = [
    ZoneInfo(name)
    for name in (
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "Pacific/Apia",
        "Asia/Kolkata",
    )
]
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: How far the brute force walks, in minutes (eight days: every weekly rule fires in it).
WINDOW = 8 * 24 * 60


@functools.cache
def transitions(zone: ZoneInfo) -> tuple[int, ...]:
    """Every instant in 2011-2026 at which ``zone``'s UTC offset changed (minute precision)."""
    found = []
    day = ms("2011-01-01T00:00:00.000Z")
    end = ms("2027-01-01T00:00:00.000Z")
    while day < end:
        if offset(zone, day) != offset(zone, day + DAY_MS):
            low, high = day, day + DAY_MS  # offset(low) differs from offset(high)
            while high - low > MINUTE_MS:
                middle = (low + high) // 2 // MINUTE_MS * MINUTE_MS
                if offset(zone, middle) == offset(zone, low):
                    low = middle
                else:
                    high = middle
            found.append(high)
        day += DAY_MS
    return tuple(found)


def offset(zone: ZoneInfo, instant: int) -> dt.timedelta | None:
    return (EPOCH + dt.timedelta(milliseconds=instant)).astimezone(zone).utcoffset()


def wall_of(zone: ZoneInfo, instant: int) -> dt.datetime:
    return (EPOCH + dt.timedelta(milliseconds=instant)).astimezone(zone).replace(tzinfo=None)


def earlier_reading(zone: ZoneInfo, wall: dt.datetime, instant: int) -> bool:
    """``instant`` is the earlier of the instants that read as ``wall`` in ``zone``."""
    earlier = wall.replace(tzinfo=zone, fold=0)
    return (earlier - EPOCH) // dt.timedelta(milliseconds=1) == instant


Matches = Callable[[dt.datetime], bool]


def brute_next(matches: Matches, sub_minute: int, zone: ZoneInfo, floor: int) -> int | None:
    """The first instant after ``floor`` (within the window) whose wall time matches, read at
    its earlier instant; ``sub_minute`` is the rule's milliseconds past the minute."""
    minute = floor // MINUTE_MS * MINUTE_MS - MINUTE_MS
    for _ in range(WINDOW + 2):
        instant = minute + sub_minute
        if instant > floor:
            wall = wall_of(zone, instant)
            if matches(wall) and earlier_reading(zone, wall, instant):
                return instant
        minute += MINUTE_MS
    return None


def brute_latest(
    matches: Matches, sub_minute: int, zone: ZoneInfo, committed: int, ceiling: int
) -> int:
    """The latest instant at or before ``ceiling`` that matches, never before ``committed``."""
    minute = ceiling // MINUTE_MS * MINUTE_MS + MINUTE_MS
    while minute + sub_minute >= committed:
        instant = minute + sub_minute
        if instant <= ceiling:
            wall = wall_of(zone, instant)
            if matches(wall) and earlier_reading(zone, wall, instant):
                return instant
        minute -= MINUTE_MS
    return committed


@st.composite
def floors(draw: st.DrawFn) -> tuple[ZoneInfo, int]:
    """A zone and an instant up to four days before (or one after) one of its transitions in
    2011-2026 (any instant then, for a zone without any)."""
    zone = draw(st.sampled_from(ZONES))
    changes = transitions(zone)
    if changes:
        pivot = draw(st.sampled_from(changes))
    else:
        pivot = draw(st.integers(ms("2011-01-01T00:00:00.000Z"), ms("2026-12-31T00:00:00.000Z")))
    return zone, pivot + draw(st.integers(-4 * DAY_MS, DAY_MS))


@st.composite
def wall_times(draw: st.DrawFn) -> int:
    """A time of day, often on the hours a transition moves (00:00-03:59 local)."""
    hour = draw(st.integers(0, 3) | st.integers(0, 23))
    minute = draw(st.sampled_from([0, 30, 45]) | st.integers(0, 59))
    millis = draw(st.just(0) | st.integers(0, 59_999))
    return (hour * 60 + minute) * MINUTE_MS + millis


def time_matches(time_ms: int, weekdays: frozenset[int] | None) -> Matches:
    def matches(wall: dt.datetime) -> bool:
        of_day = ((wall.hour * 60 + wall.minute) * 60 + wall.second) * 1000
        of_day += wall.microsecond // 1000
        return of_day == time_ms and (weekdays is None or wall.isoweekday() in weekdays)

    return matches


weekday_sets = st.none() | st.frozensets(st.integers(1, 7), min_size=1)


@settings(max_examples=120, deadline=None)
@given(floors(), wall_times(), weekday_sets)
def test_daily_and_weekly_agree_with_the_brute_force(
    where: tuple[ZoneInfo, int], time_ms: int, weekdays: frozenset[int] | None
) -> None:
    zone, floor = where
    wall = weekly_wall(time_ms, weekdays)
    matches = time_matches(time_ms, weekdays)
    sub_minute = time_ms % MINUTE_MS
    found = next_after(wall, zone, floor)
    expected = brute_next(matches, sub_minute, zone, floor)
    assert expected is not None  # every such rule fires within eight days
    assert found == expected
    # Never twice: the next one after it is the brute force's next one too, and later.
    after = next_after(wall, zone, found)
    assert after is not None
    assert after > found
    assert after == brute_next(matches, sub_minute, zone, found)


@settings(max_examples=120, deadline=None)
@given(floors(), wall_times(), weekday_sets, st.integers(0, 3 * DAY_MS))
def test_the_latest_due_occurrence_agrees_with_the_brute_force(
    where: tuple[ZoneInfo, int], time_ms: int, weekdays: frozenset[int] | None, late: int
) -> None:
    zone, floor = where
    wall = weekly_wall(time_ms, weekdays)
    committed = next_after(wall, zone, floor)
    assert committed is not None
    ceiling = committed + late
    matches = time_matches(time_ms, weekdays)
    expected = brute_latest(matches, time_ms % MINUTE_MS, zone, committed, ceiling)
    assert latest_due(wall, zone, committed, ceiling) == expected


@st.composite
def cron_fields(draw: st.DrawFn, low: int, high: int, star: float) -> str:
    if draw(st.floats(0, 1)) < star:
        return "*"
    elements = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.integers(low, high))
        b = draw(st.integers(a, high))
        kind = draw(st.sampled_from(["value", "range", "stepped", "star-step"]))
        n = draw(st.integers(1, 5))
        elements.append(
            {"value": str(a), "range": f"{a}-{b}", "stepped": f"{a}-{b}/{n}"}.get(
                kind, f"*/{draw(st.integers(2, max(2, (high - low) // 2)))}"
            )
        )
    return ",".join(elements)


cron_expressions = st.tuples(
    cron_fields(0, 59, 0.1),
    cron_fields(0, 23, 0.2),
    cron_fields(1, 31, 0.5),
    cron_fields(1, 12, 0.7),
    cron_fields(0, 7, 0.5),
).map(lambda fields: canonical_cron(" ".join(fields)))


def cron_matches(expression: str) -> Matches:
    """The wall times ``expression`` selects, read from its text (Vixie's day rule)."""
    limits = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
    sets: list[set[int]] = []
    for (low, high), text in zip(limits, expression.split(), strict=True):
        values: set[int] = set()
        for element in text.split(","):
            head, _, step = element.partition("/")
            first, _, last = head.partition("-")
            start, end = (low, high) if head == "*" else (int(first), int(last or first))
            values |= set(range(start, end + 1, int(step or 1)))
        sets.append(values)
    minutes, hours, days, months, weekdays = sets
    weekdays = {day % 7 for day in weekdays}
    texts = expression.split()
    either = not (texts[2].startswith("*") or texts[4].startswith("*"))

    def matches(wall: dt.datetime) -> bool:
        if wall.minute not in minutes or wall.hour not in hours or wall.month not in months:
            return False
        on_day, on_weekday = wall.day in days, wall.isoweekday() % 7 in weekdays
        return (on_day or on_weekday) if either else (on_day and on_weekday)

    return matches


@settings(max_examples=120, deadline=None)
@given(floors(), cron_expressions)
def test_cron_agrees_with_the_brute_force(where: tuple[ZoneInfo, int], expression: str) -> None:
    zone, floor = where
    found = next_after(cron_wall(expression), zone, floor)
    expected = brute_next(cron_matches(expression), 0, zone, floor)
    window_end = floor // MINUTE_MS * MINUTE_MS + WINDOW * MINUTE_MS
    if found is not None and found <= window_end:
        assert found == expected
    else:
        assert expected is None  # nothing in the window, as the engine says


@settings(max_examples=80, deadline=None)
@given(floors(), cron_expressions, st.integers(0, 3 * DAY_MS))
def test_cron_latest_due_agrees_with_the_brute_force(
    where: tuple[ZoneInfo, int], expression: str, late: int
) -> None:
    zone, floor = where
    wall = cron_wall(expression)
    committed = next_after(wall, zone, floor)
    if committed is None:
        return
    ceiling = min(committed + late, MAX_INSTANT_MS)
    expected = brute_latest(cron_matches(expression), 0, zone, committed, ceiling)
    assert latest_due(wall, zone, committed, ceiling) == expected


def test_the_transition_lists_cover_more_than_ten_years() -> None:
    for zone in ZONES:
        changes = transitions(zone)
        if str(zone) == "Asia/Kolkata":
            assert changes == ()  # no daylight saving: the uniform floors cover it
            continue
        years = {dt.datetime.fromtimestamp(change / 1000, tz=dt.UTC).year for change in changes}
        assert len(years) >= 10, (zone, sorted(years))
    # Samoa's day across the date line is one of them.
    skip = bisect.bisect_left(transitions(APIA), ms("2011-12-30T00:00:00.000Z"))
    assert iso(transitions(APIA)[skip]) == "2011-12-30T10:00:00.000Z"
