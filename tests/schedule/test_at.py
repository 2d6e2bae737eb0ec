"""The ``at`` selector's parser (dsh_schedule._at): every example of the upstream contract's
sections 2 and 8 "At", with its exact code and message."""

from __future__ import annotations

import datetime as dt

import pytest

from dsh_schedule._at import ScheduleInputError, _resolve, at_instant, future_instant
from dsh_schedule._instants import (
    MAX_INSTANT_MS,
    MAX_SAFE_INTEGER,
    MIN_INSTANT_MS,
    format_instant,
    parse_instant,
)

NOW = parse_instant("2026-08-05T12:00:00.000Z")

SHAPE = (
    "at must use YYYY-MM-DDTHH:mm:ss with optional 1-3 digit fractional seconds and an "
    "explicit Z or numeric offset."
)
NOT_REAL = "The at value must be a real ISO calendar date and time."
LOCAL_NOT_REAL = "The local at value must be a real ISO calendar date and time."
BAD_OFFSET = "The at numeric offset is invalid."
LOCAL_SHAPE = (
    "Local at requires date YYYY-MM-DD and time HH:mm:ss with optional one-to-three digit "
    "milliseconds."
)
OUT_OF_RANGE = "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
NOT_FUTURE = "The scheduled time must be strictly in the future."
ZONE = "time_zone must be UTC or a valid IANA Area/Location name."
IN_GAP = "The local at time does not exist in the selected time zone."


def at(value: object, now: int = NOW) -> str:
    return format_instant(at_instant(value, now))


def refusal(value: object, now: int = NOW) -> tuple[str, str]:
    with pytest.raises(ScheduleInputError) as caught:
        at_instant(value, now)
    return caught.value.code, caught.value.message


def local(date: str, time: str, time_zone: object) -> dict[str, object]:
    return {"date": date, "time": time, "time_zone": time_zone}


@pytest.mark.parametrize(
    ("value", "instant"),
    [
        ("2026-08-06T09:00:00+08:00", "2026-08-06T01:00:00.000Z"),
        ("2026-08-06T09:00:00Z", "2026-08-06T09:00:00.000Z"),
        ("2026-08-06T09:00:00+00:00", "2026-08-06T09:00:00.000Z"),
        ("2026-08-06T09:00:00.1Z", "2026-08-06T09:00:00.100Z"),
        ("2026-08-06T09:00:00.12Z", "2026-08-06T09:00:00.120Z"),
        ("2026-08-06T09:00:00-05:30", "2026-08-06T14:30:00.000Z"),
        ("2026-08-07T09:00:00.123+23:59", "2026-08-06T09:01:00.123Z"),
        ("2026-08-05T00:00:00-23:59", "2026-08-05T23:59:00.000Z"),
        ("2028-02-29T00:00:00Z", "2028-02-29T00:00:00.000Z"),  # a leap day
    ],
)
def test_offset_strings_normalise_to_the_utc_instant(value, instant):
    assert at(value) == instant


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2026-08-06T09:00:00", SHAPE),  # no offset
        ("2026-08-06 09:00:00Z", SHAPE),  # space separator
        ("2026-02-30T09:00:00Z", NOT_REAL),  # Feb 30
        ("2026-08-06T24:00:00Z", NOT_REAL),
        ("2026-08-06T09:00:60Z", NOT_REAL),
        ("2026-08-06T09:00:00.1234Z", SHAPE),  # four fraction digits
        ("2026-08-06T09:00:00-00:00", BAD_OFFSET),
        ("2026-08-06T09:00:00+24:00", BAD_OFFSET),
        ("2026-08-06T09:00:00+01:60", BAD_OFFSET),
        ("0000-08-06T09:00:00Z", NOT_REAL),  # year 0000
        # the rest of the grammar
        ("2026-08-06t09:00:00Z", SHAPE),
        ("2026-08-06T09:00:00z", SHAPE),
        ("2026-08-06T09:00:00+0800", SHAPE),
        ("2026-08-06T09:00:00+08", SHAPE),
        ("2026-08-06T09:00Z", SHAPE),  # no seconds
        ("2026-08-06T09:00:00.Z", SHAPE),
        ("2026-8-06T09:00:00Z", SHAPE),
        ("+2026-08-06T09:00:00Z", SHAPE),
        ("2026-08-06T09:00:00Z\n", SHAPE),
        ("\u0662\u0660\u0662\u0666-08-06T09:00:00Z", SHAPE),  # Arabic-Indic digits
        (" 2026-08-06T09:00:00Z", SHAPE),
        ("\uff12\uff10\uff12\uff16-08-06T09:00:00Z", SHAPE),  # fullwidth digits
        ("", SHAPE),
        ("2026-04-31T09:00:00Z", NOT_REAL),
        ("2027-02-29T09:00:00Z", NOT_REAL),  # not a leap year
        ("2026-13-01T09:00:00Z", NOT_REAL),
        ("2026-00-01T09:00:00Z", NOT_REAL),
        ("2026-08-00T09:00:00Z", NOT_REAL),
        ("2026-08-06T09:60:00Z", NOT_REAL),
        # the calendar is checked before the offset
        ("2026-02-30T09:00:00-00:00", NOT_REAL),
    ],
)
def test_strict_strings_are_refused_with_the_first_failing_check(value, message):
    assert refusal(value) == ("invalid_rule", message)


def test_years_1_to_99_are_not_remapped():
    assert at("0099-01-01T00:00:00Z", MIN_INSTANT_MS) == "0099-01-01T00:00:00.000Z"
    assert at("0001-01-01T00:00:00.001Z", MIN_INSTANT_MS) == "0001-01-01T00:00:00.001Z"


def test_a_present_or_past_target_is_not_future_and_one_millisecond_ahead_is_accepted():
    assert refusal("2026-08-05T12:00:00Z") == ("not_future", NOT_FUTURE)
    assert refusal("2026-08-05T20:00:00+08:00") == ("not_future", NOT_FUTURE)  # equal instant
    assert refusal("2020-01-01T00:00:00Z") == ("not_future", NOT_FUTURE)
    assert at("2026-08-05T12:00:00.001Z") == "2026-08-05T12:00:00.001Z"
    assert refusal(local("2026-08-05", "12:00:00", "UTC")) == ("not_future", NOT_FUTURE)


def test_range_is_checked_before_not_future():
    before_year_1 = MIN_INSTANT_MS - 10**9
    assert refusal("9999-12-31T23:59:59.999-23:59") == ("time_out_of_range", OUT_OF_RANGE)
    assert refusal("0001-01-01T00:00:00+23:59", before_year_1) == (
        "time_out_of_range",
        OUT_OF_RANGE,
    )
    # in the past and out of range: range wins
    assert refusal("0001-01-01T00:00:00+00:01") == ("time_out_of_range", OUT_OF_RANGE)
    assert at("9999-12-31T23:59:59.999Z") == format_instant(MAX_INSTANT_MS)
    assert at("9999-12-31T23:59:59.999+23:59") == "9999-12-31T00:00:59.999Z"


@pytest.mark.parametrize("now", [float("nan"), 1.5e12, True, MAX_SAFE_INTEGER + 1, None])
def test_a_clock_that_is_not_a_safe_integer_is_time_out_of_range(now):
    assert refusal("2026-08-06T09:00:00Z", now) == ("time_out_of_range", OUT_OF_RANGE)


def test_the_forms_own_checks_come_before_the_clock():
    assert refusal("2026-02-30T09:00:00Z", float("nan")) == ("invalid_rule", NOT_REAL)


def test_future_instant_is_the_shared_range_then_not_future_check():
    assert future_instant(NOW + 1, NOW) == NOW + 1
    assert future_instant(MAX_INSTANT_MS, MIN_INSTANT_MS) == MAX_INSTANT_MS
    for target, now in [(NOW, NOW), (NOW - 1, NOW), (MIN_INSTANT_MS, MIN_INSTANT_MS + 1)]:
        with pytest.raises(ScheduleInputError) as caught:
            future_instant(target, now)
        assert (caught.value.code, caught.value.message) == ("not_future", NOT_FUTURE)
    for target, now in [
        (MAX_INSTANT_MS + 1, NOW),
        (MIN_INSTANT_MS - 1, MIN_INSTANT_MS - 2),
        (MAX_SAFE_INTEGER + 1, NOW),
        (1.5, NOW),
        (NOW + 1, -MAX_SAFE_INTEGER - 1),
    ]:
        with pytest.raises(ScheduleInputError) as caught:
            future_instant(target, now)  # type: ignore[arg-type]
        assert (caught.value.code, caught.value.message) == ("time_out_of_range", OUT_OF_RANGE)


def test_the_error_carries_code_and_message():
    error = ScheduleInputError("not_future", NOT_FUTURE)
    assert (error.code, error.message) == ("not_future", NOT_FUTURE)
    assert str(error) == f"not_future: {NOT_FUTURE}"


# --------------------------------------------------------------------------------------------
# Local {date, time, time_zone}


def test_local_times_resolve_in_their_zone():
    shanghai = local("2026-08-07", "09:30:00.25", "Asia/Shanghai")
    assert at(shanghai) == "2026-08-07T01:30:00.250Z"
    assert at(local("2026-08-07", "09:30:00", "Asia/Shanghai")) == "2026-08-07T01:30:00.000Z"
    assert at(local("2026-08-07", "09:30:00.5", "UTC")) == "2026-08-07T09:30:00.500Z"
    assert at(local("2026-08-07", "09:30:00.007", "UTC")) == "2026-08-07T09:30:00.007Z"
    assert at(local("2026-08-07", "09:30:00", "US/Eastern")) == "2026-08-07T13:30:00.000Z"
    assert at(local("2026-08-07", "09:30:00", "Etc/GMT+8")) == "2026-08-07T17:30:00.000Z"


def test_a_dst_overlap_takes_the_earlier_instant():
    assert at(local("2026-11-01", "01:30:00", "America/New_York")) == "2026-11-01T05:30:00.000Z"
    assert at(local("2026-11-01", "00:59:59.999", "America/New_York")) == (
        "2026-11-01T04:59:59.999Z"
    )
    assert at(local("2026-11-01", "02:00:00", "America/New_York")) == "2026-11-01T07:00:00.000Z"


def test_a_dst_gap_does_not_exist():
    gap = ("invalid_rule", IN_GAP)
    assert refusal(local("2026-03-08", "02:30:00", "America/New_York")) == gap
    assert refusal(local("2026-03-08", "02:00:00", "America/New_York")) == gap
    assert refusal(local("2026-03-08", "02:59:59.999", "America/New_York")) == gap
    # the gap is found before the clock (this March is already past)
    assert refusal(local("2026-03-08", "03:00:00", "America/New_York")) == (
        "not_future",
        NOT_FUTURE,
    )
    earlier = parse_instant("2026-01-01T00:00:00.000Z")
    assert at(local("2026-03-08", "03:00:00", "America/New_York"), earlier) == (
        "2026-03-08T07:00:00.000Z"
    )
    assert at(local("2026-03-08", "01:59:59.999", "America/New_York"), earlier) == (
        "2026-03-08T06:59:59.999Z"
    )


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        # eight malformed local selectors
        (local("2026-08-07", "09:30", "Asia/Shanghai"), "invalid_rule", LOCAL_SHAPE),
        (local("2026/08/07", "09:30:00", "Asia/Shanghai"), "invalid_rule", LOCAL_SHAPE),
        (local("2026-08-07", "09:30:00.1234", "Asia/Shanghai"), "invalid_rule", LOCAL_SHAPE),
        (local("2026-08-07", "24:00:00", "Asia/Shanghai"), "invalid_rule", LOCAL_NOT_REAL),
        (local("0000-08-07", "09:30:00", "Asia/Shanghai"), "invalid_rule", LOCAL_NOT_REAL),
        (local("2026-02-30", "09:30:00", "Asia/Shanghai"), "invalid_rule", NOT_REAL),
        (local("2026-08-07", "09:30:00", "CST"), "invalid_time_zone", ZONE),
        (local("2026-08-07", "09:30:00", 8), "invalid_time_zone", "time_zone must be a string."),
        # and the rest of the object form
        (local("2026-08-07", "09:30:00Z", "UTC"), "invalid_rule", LOCAL_SHAPE),
        (local("2026-08-07T09:30:00", "09:30:00", "UTC"), "invalid_rule", LOCAL_SHAPE),
        (local("2026-08-07", "09:60:00", "UTC"), "invalid_rule", LOCAL_NOT_REAL),
        (local("2026-08-07", "09:30:60", "UTC"), "invalid_rule", LOCAL_NOT_REAL),
        (local("2026-13-07", "09:30:00", "UTC"), "invalid_rule", NOT_REAL),
        # a bad date and a bad zone report the date
        (local("2026-02-30", "09:30:00", "Not/A_Real_Zone"), "invalid_rule", NOT_REAL),
        (local("2026-08-07", "9:30", "Not/A_Real_Zone"), "invalid_rule", LOCAL_SHAPE),
        # but a zone that is not a string is a structural check, before the format
        (local("2026-08-07", "9:30", None), "invalid_time_zone", "time_zone must be a string."),
        (local(2026, "09:30:00", "UTC"), "invalid_rule", "Local at date and time must be strings."),
        (
            local("2026-08-07", None, "UTC"),
            "invalid_rule",
            "Local at date and time must be strings.",
        ),
        (local("2026-08-07", 930, None), "invalid_rule", "Local at date and time must be strings."),
    ],
)
def test_malformed_local_selectors_are_refused_in_the_contract_order(value, code, message):
    assert refusal(value) == (code, message)


@pytest.mark.parametrize(
    "zone", ["", " UTC", "utc", "CST", "PST", "GMT", "EST5EDT", "+08:00", "Not/A_Real_Zone"]
)
def test_zones_are_refused_as_the_shared_check_refuses_them(zone):
    assert refusal(local("2026-08-07", "09:30:00", zone)) == ("invalid_time_zone", ZONE)


@pytest.mark.parametrize(
    "value",
    [
        {"date": "2026-08-07", "time": "09:30:00"},
        {"date": "2026-08-07", "time": "09:30:00", "time_zone": "UTC", "extra": 1},
        {"date": "2026-08-07", "time": "09:30:00", "timeZone": "UTC"},
        {},
    ],
)
def test_a_local_selector_has_exactly_date_time_and_time_zone(value):
    message = "Local at must contain exactly date, time, and time_zone."
    assert refusal(value) == ("invalid_rule", message)


@pytest.mark.parametrize("value", [None, 42, 1.5, True, ["2026-08-06T09:00:00Z"], ("a",), b"x"])
def test_a_selector_that_is_neither_a_string_nor_an_object_is_refused(value):
    message = "at must be an explicit-offset string or local calendar object."
    assert refusal(value) == ("invalid_rule", message)


def test_a_local_time_past_year_9999_in_utc_is_time_out_of_range():
    last = local("9999-12-31", "23:59:59.999", "America/New_York")
    assert refusal(last, MIN_INSTANT_MS) == ("time_out_of_range", OUT_OF_RANGE)
    assert at(local("9999-12-31", "23:59:59.999", "Asia/Shanghai"), MIN_INSTANT_MS) == (
        "9999-12-31T15:59:59.999Z"
    )
    # year 1 ahead of UTC (Shanghai's LMT is +08:05:43) is before the first instant
    first = local("0001-01-01", "00:00:00", "Asia/Shanghai")
    assert refusal(first, MIN_INSTANT_MS - 10**9) == ("time_out_of_range", OUT_OF_RANGE)
    assert at(local("0001-01-01", "00:00:00", "America/New_York"), MIN_INSTANT_MS) == (
        "0001-01-01T04:56:02.000Z"  # New York's LMT is -04:56:02
    )


class _Inconsistent(dt.tzinfo):
    """A zone whose offset jumps by a day at year 1: no ZoneInfo does that, but the resolver
    must still refuse rather than crash when the round trip leaves the calendar."""

    def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
        if when is not None and when.tzinfo is self and when.year == 1 and when.month == 1:
            return dt.timedelta(hours=-1)
        return dt.timedelta(hours=23)

    def dst(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def tzname(self, when: dt.datetime | None) -> str:
        return "X"

    def fromutc(self, when: dt.datetime) -> dt.datetime:
        return (when.replace(tzinfo=None) - dt.timedelta(days=2)).replace(tzinfo=self)


def test_a_round_trip_that_leaves_the_calendar_is_not_a_candidate():
    with pytest.raises(ScheduleInputError) as caught:
        _resolve(MIN_INSTANT_MS, _Inconsistent())
    assert (caught.value.code, caught.value.message) == ("invalid_rule", IN_GAP)
