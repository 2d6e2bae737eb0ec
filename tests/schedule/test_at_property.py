"""Properties of the ``at`` selector's local form (dsh_schedule._at): round trips through every
tzdata zone, and every wall time inside the DST gaps and overlaps of zones with different rules.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_hookspecs import InvalidTimeZoneError, canonical_time_zone, load_time_zone
from dsh_schedule._at import ScheduleInputError, at_instant
from dsh_schedule._instants import MAX_INSTANT_MS, MIN_INSTANT_MS, format_instant

PROPERTY = settings(max_examples=200, deadline=None)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
#: A clock before every target, so the properties are about the zone and not the clock.
BEFORE_ALL = MIN_INSTANT_MS - 1


def _valid(name: str) -> bool:
    try:
        canonical_time_zone(name)
    except InvalidTimeZoneError:
        return False
    return True


@functools.cache
def zones() -> list[str]:
    """Every UTC or Area/Location zone tzdata ships (its own list of keys)."""
    listing = importlib.resources.files("tzdata").joinpath("zones").read_text("utf-8")
    return sorted(name for name in listing.split() if _valid(name))


def utc(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def wall_of(ms: int, zone: str) -> dict[str, object]:
    """The local ``{date, time, time_zone}`` of an instant."""
    local = utc(ms).astimezone(load_time_zone(zone))
    return {
        "date": f"{local.year:04d}-{local.month:02d}-{local.day:02d}",
        "time": f"{local:%H:%M:%S}.{local.microsecond // 1000:03d}",
        "time_zone": zone,
    }


def wall_ms(selector: dict[str, object]) -> int:
    """The selector's local fields read as UTC epoch ms."""
    naive = dt.datetime.fromisoformat(f"{selector['date']}T{selector['time']}")
    return (naive.replace(tzinfo=dt.UTC) - EPOCH) // dt.timedelta(milliseconds=1)


def offset_ms(ms: int, zone: str) -> int:
    offset = utc(ms).astimezone(load_time_zone(zone)).utcoffset()
    assert offset is not None
    return offset // dt.timedelta(milliseconds=1)


def test_the_zone_list_is_tzdatas():
    names = zones()
    assert len(names) > 300
    assert {"UTC", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe"} <= set(names)


# Stay four days inside the four-digit range: local dates, and the offsets sampled two days
# either side of them, stay inside it too.
# Half from today's era, where the zones' rules change most.
INSTANTS = st.one_of(
    st.integers(MIN_INSTANT_MS + 4 * DAY_MS, MAX_INSTANT_MS - 4 * DAY_MS),
    st.integers(-2_208_988_800_000, 4_102_444_800_000),  # 1900-2100
)


@PROPERTY
@given(instant=INSTANTS, zone=st.sampled_from(zones()))
def test_a_local_time_parses_back_to_its_instant_or_the_earlier_of_an_overlap(instant, zone):
    selector = wall_of(instant, zone)
    back = at_instant(selector, BEFORE_ALL)
    if back != instant:
        # Only an ambiguous wall time may resolve elsewhere: to an earlier instant that shows
        # the very same local fields.
        assert back < instant
        assert wall_of(back, zone) == selector
    # Nothing earlier shows these fields: every instant with this wall time is wall - offset for
    # one of the zone's offsets near it (sampled a day and two days either side).
    wall = wall_ms(selector)
    near = {offset_ms(wall + k * DAY_MS, zone) for k in range(-2, 3)}
    earlier = [wall - o for o in near if wall - o < back]
    assert all(wall_of(other, zone) != selector for other in earlier)


# --------------------------------------------------------------------------------------------
# DST gaps and overlaps

DST_ZONES = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]


@functools.cache
def transitions(zone: str) -> list[tuple[int, int, int]]:
    """``(instant, offset before, offset after)`` of each offset change of ``zone`` between 1970
    and 2100 (past tzdata's table, the zone's POSIX rule), found by a six-hour scan and a
    bisection to the millisecond."""
    found: list[tuple[int, int, int]] = []
    start = (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) - EPOCH) // dt.timedelta(milliseconds=1)
    stop = (dt.datetime(2100, 1, 1, tzinfo=dt.UTC) - EPOCH) // dt.timedelta(milliseconds=1)
    step = 6 * HOUR_MS
    previous = offset_ms(start, zone)
    for low in range(start, stop, step):
        current = offset_ms(low + step, zone)
        if current == previous:
            continue
        before, after = low, low + step  # offset(before) == previous != offset(after)
        while after - before > 1:
            middle = (before + after) // 2
            if offset_ms(middle, zone) == previous:
                before = middle
            else:
                after = middle
        found.append((after, previous, current))
        previous = current
    return found


def changes(zone: str, *, forward: bool) -> list[tuple[int, int, int]]:
    return [change for change in transitions(zone) if (change[2] > change[1]) == forward]


@pytest.mark.parametrize("zone", DST_ZONES)
def test_each_zone_has_gaps_and_overlaps_of_its_own_size(zone):
    sizes = {after - before for _, before, after in transitions(zone)}
    shift = 30 * 60_000 if zone == "Australia/Lord_Howe" else HOUR_MS
    assert shift in sizes
    assert -shift in sizes
    assert len(changes(zone, forward=True)) > 50
    assert len(changes(zone, forward=False)) > 50


def local_selector(wall: int, zone: str) -> dict[str, object]:
    text = format_instant(wall)
    return {"date": text[:10], "time": text[11:23], "time_zone": zone}


@PROPERTY
@given(data=st.data(), zone=st.sampled_from(DST_ZONES))
def test_every_wall_time_in_a_gap_does_not_exist(data, zone):
    instant, before, after = data.draw(st.sampled_from(changes(zone, forward=True)))
    # The clock jumps from instant + before to instant + after: the walls between are skipped.
    wall = data.draw(st.integers(instant + before, instant + after - 1))
    with pytest.raises(ScheduleInputError) as caught:
        at_instant(local_selector(wall, zone), BEFORE_ALL)
    assert (caught.value.code, caught.value.message) == (
        "invalid_rule",
        "The local at time does not exist in the selected time zone.",
    )
    # The wall right after the gap is the transition itself; the one right before, 1 ms earlier.
    assert at_instant(local_selector(instant + after, zone), BEFORE_ALL) == instant
    assert at_instant(local_selector(instant + before - 1, zone), BEFORE_ALL) == instant - 1


@PROPERTY
@given(data=st.data(), zone=st.sampled_from(DST_ZONES))
def test_every_wall_time_in_an_overlap_is_the_earlier_instant(data, zone):
    instant, before, after = data.draw(st.sampled_from(changes(zone, forward=False)))
    # The clock falls back from instant + before to instant + after: those walls occur twice,
    # first with the old offset (wall - before), then with the new one (wall - after).
    wall = data.draw(st.integers(instant + after, instant + before - 1))
    earlier, later = wall - before, wall - after
    assert wall_of(earlier, zone) == wall_of(later, zone) == local_selector(wall, zone)
    assert at_instant(local_selector(wall, zone), BEFORE_ALL) == earlier
    # Past the overlap, the wall is unambiguous again.
    assert (
        at_instant(local_selector(instant + before, zone), BEFORE_ALL) == instant + before - after
    )
