"""Zone names a user may give, checked and loaded from the tzdata package (dsh_hookspecs._zones)."""

from __future__ import annotations

import datetime as dt
import importlib.resources
import json
import os
import subprocess
import sys
import textwrap
import zoneinfo

import pytest

from dsh_hookspecs import InvalidTimeZoneError, canonical_time_zone, load_time_zone

SHAPE_MESSAGE = "time_zone must be UTC or a valid IANA Area/Location name."

ACCEPTED = [
    "UTC",
    "America/New_York",
    "Asia/Shanghai",
    "Australia/Lord_Howe",
    "Etc/GMT+8",
    "US/Eastern",
    "America/Argentina/Buenos_Aires",
]


@pytest.mark.parametrize("name", ACCEPTED)
def test_utc_and_area_location_names_that_tzdata_ships_are_accepted_as_given(name):
    assert canonical_time_zone(name) == name
    zone = load_time_zone(name)
    assert isinstance(zone, zoneinfo.ZoneInfo)
    assert zone.key == name
    assert load_time_zone(name) is zone  # cached


@pytest.mark.parametrize(
    "name",
    [
        "",
        " UTC",
        "UTC ",
        "UTC\n",
        "utc",
        "Utc",
        "CST",
        "PST",
        "GMT",
        "EST5EDT",
        "+08:00",
        "Not/A_Real_Zone",
        "a/../b",
        "America/./New_York",
        "America/..",
        "/America/New_York",
        "America/New_York/",
        "America//New_York",
        "america/new_york",  # case is exact, whatever the file system
        "1America/New_York",
        "America/New York",
        "Amérique/Paris",
        "America",  # no Location
        "America/Indiana",  # a directory, not a zone
        "UTC/Extra",  # below a zone file
        "America/__init__.py",  # a file of the package that is not a zone
        "America/__pycache__",
    ],
)
def test_malformed_and_unknown_names_are_refused_with_one_message(name):
    with pytest.raises(InvalidTimeZoneError) as caught:
        canonical_time_zone(name)
    assert caught.value.message == SHAPE_MESSAGE
    assert str(caught.value) == SHAPE_MESSAGE
    assert caught.value.code == "invalid_time_zone"
    with pytest.raises(InvalidTimeZoneError):
        load_time_zone(name)


@pytest.mark.parametrize("value", [None, 8, 1.5, True, ["UTC"], {"zone": "UTC"}, b"UTC"])
def test_a_name_that_is_not_a_string_is_refused_as_such(value):
    with pytest.raises(InvalidTimeZoneError) as caught:
        canonical_time_zone(value)
    assert caught.value.message == "time_zone must be a string."
    with pytest.raises(InvalidTimeZoneError, match="must be a string"):
        load_time_zone(value)


def test_the_error_is_a_value_error():
    assert issubclass(InvalidTimeZoneError, ValueError)


def test_the_zones_compute_the_offsets_of_their_rules():
    def offset(name: str, *fields: int) -> dt.timedelta | None:
        return dt.datetime(*fields, tzinfo=load_time_zone(name)).utcoffset()

    assert offset("UTC", 2026, 7, 1) == dt.timedelta(0)
    assert offset("America/New_York", 2026, 1, 15) == dt.timedelta(hours=-5)
    assert offset("America/New_York", 2026, 7, 15) == dt.timedelta(hours=-4)
    assert offset("US/Eastern", 2026, 7, 15) == dt.timedelta(hours=-4)
    assert offset("Asia/Shanghai", 2026, 7, 15) == dt.timedelta(hours=8)
    assert offset("Etc/GMT+8", 2026, 7, 15) == dt.timedelta(hours=-8)  # POSIX sign
    assert offset("Australia/Lord_Howe", 2026, 1, 15) == dt.timedelta(hours=11)
    assert offset("Australia/Lord_Howe", 2026, 7, 15) == dt.timedelta(hours=10, minutes=30)


PROBE = textwrap.dedent(
    """
    import datetime as dt, json, sys
    from dsh_hookspecs import InvalidTimeZoneError, canonical_time_zone, load_time_zone

    out = {}
    for name in json.loads(sys.argv[1]):
        try:
            canonical_time_zone(name)
        except InvalidTimeZoneError as error:
            out[name] = error.message
            continue
        instant = dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.timezone.utc)
        local = instant.astimezone(load_time_zone(name))
        out[name] = [local.isoformat(), local.tzname()]
    print(json.dumps(out))
    """
)


def _probe(names: list[str], **environ: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(names)],
        env={**os.environ, **environ},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answer: dict[str, object] = json.loads(completed.stdout)
    return answer


def test_the_answers_do_not_depend_on_the_system_zone_files(tmp_path):
    names = ["UTC", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe", "Fake/Zone"]
    # A system zone directory that lies: New York with Shanghai's rules, and a zone tzdata lacks.
    # Plain zoneinfo.ZoneInfo reads it (PYTHONTZPATH is its search path); ours never does.
    tzif = importlib.resources.files("tzdata.zoneinfo").joinpath("Asia/Shanghai").read_bytes()
    for fake in ("America/New_York", "Fake/Zone"):
        (tmp_path / fake).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / fake).write_bytes(tzif)
    assert _system_new_york(tmp_path) == "2026-11-01T13:30:00+08:00"  # the lie is really there

    lying = _probe(names, PYTHONTZPATH=str(tmp_path))
    without = _probe(names, PYTHONTZPATH="/nonexistent")
    assert without == lying == _probe(names)
    assert without["America/New_York"] == ["2026-11-01T01:30:00-04:00", "EDT"]
    assert without["Asia/Shanghai"] == ["2026-11-01T13:30:00+08:00", "CST"]
    assert without["Australia/Lord_Howe"] == ["2026-11-01T16:30:00+11:00", "+11"]
    assert without["UTC"] == ["2026-11-01T05:30:00+00:00", "UTC"]
    assert without["Fake/Zone"] == SHAPE_MESSAGE


def _system_new_york(tzpath: object) -> str:
    """What plain ``zoneinfo.ZoneInfo`` makes of 05:30Z in New York under that TZPATH."""
    script = (
        "import datetime as dt, zoneinfo\n"
        "zone = zoneinfo.ZoneInfo('America/New_York')\n"
        "print(dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC).astimezone(zone).isoformat())\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONTZPATH": str(tzpath)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return completed.stdout.strip()
