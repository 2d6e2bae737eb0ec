"""Properties: the incremental fold is the reference fold; codec and instants round-trip. The
logs mix after, at, every, daily, weekly and cron records (some titled), updates, every
dispatches with and without ``acceptedAt`` and calendar dispatches with and without
``occurrenceAt`` and ``nextAt``."""

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_hookspecs import Event
from dsh_schedule import (
    MAX_AFTER_SECONDS,
    MAX_EVERY_SECONDS,
    MAX_INSTANT_MS,
    MAX_RENOTIFY_MINUTES,
    MAX_TITLE_CHARS,
    MIN_EVERY_SECONDS_FLOOR,
    MIN_INSTANT_MS,
    MIN_RENOTIFY_MINUTES,
    SCHEDULE_CHANGE,
    Ack,
    AfterRecord,
    AtRecord,
    Create,
    CronRecord,
    DailyRecord,
    Delete,
    Dispatch,
    EveryRecord,
    IncrementalFold,
    ScheduleLogError,
    SnoozedFrom,
    Update,
    WeeklyRecord,
    decode_change,
    encode_change,
    fold,
    format_instant,
    parse_instant,
)
from dsh_schedule._fold import allocate_id

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LOG_SETTINGS = settings(max_examples=150, deadline=None)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)

INSTANTS = ["2026-08-05T12:00:00.000Z", "2026-08-05T12:00:00.001Z", "2030-01-01T00:00:00.000Z"]
#: Decision times of every dispatches: on a target, between targets, far later, at the end.
ACCEPTED = [
    "2026-08-05T12:00:00.000Z",
    "2026-08-05T12:07:30.000Z",
    "2026-08-05T13:00:00.001Z",
    "2030-01-01T00:05:00.000Z",
    "9999-12-31T23:59:59.999Z",
]
ID_POOL = ["schedule-1", "schedule-2", "schedule-3", "custom"]
KINDS = ["after", "at", "every", "daily", "weekly", "cron"]
CALENDAR = {"daily", "weekly", "cron"}
#: A calendar dispatch's nextAt: a later target, the end (null), or one not after acceptedAt.
NEXT = [None, "2026-08-06T12:00:00.000Z", "2030-01-02T00:00:00.000Z", INSTANTS[0]]


def record_data(
    schedule_id: str,
    prompt: str = "Check the log",
    at: str = INSTANTS[0],
    kind: str = "after",
    title: str | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {"id": schedule_id, "kind": kind, "prompt": prompt}
    if kind == "after":
        record["afterSeconds"] = 60
    elif kind == "every":
        record["everySeconds"] = 300
    elif kind == "cron":
        record.update(expression="*/5 9-17 * * 1-5", timeZone="Europe/Paris")
    elif kind in CALENDAR:
        record.update(time="09:00:00.000", timeZone="America/New_York")
        if kind == "weekly":
            record["weekdays"] = [1, 3, 5]
    record["scheduledAt"] = at
    if title is not None:
        record["title"] = title
    return record


def create(
    schedule_id: str,
    prompt: str = "Check the log",
    at: str = INSTANTS[0],
    kind: str = "after",
    title: str | None = None,
) -> dict[str, Any]:
    record = record_data(schedule_id, prompt, at, kind, title)
    return {"version": 1, "operation": "create", "schedule": record}


def update(schedule_id: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operation": "update", "id": schedule_id, "schedule": record}


def ended(
    operation: str,
    schedule_id: str,
    accepted_at: str | None = None,
    occurrence_at: str | None = None,
    next_at: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {"version": 1, "operation": operation, "id": schedule_id}
    if accepted_at is not None:
        data["acceptedAt"] = accepted_at
    if occurrence_at is not None:
        data["occurrenceAt"] = occurrence_at
        data["nextAt"] = next_at
    return data


@st.composite
def near_misses(draw: st.DrawFn) -> Any:
    """A valid payload with one key replaced, added or removed (at either level)."""
    data = draw(
        st.sampled_from(
            [
                create("schedule-1"),
                create("schedule-1", kind="at"),
                create("schedule-1", kind="every"),
                create("schedule-1", kind="daily", title="Daily"),
                create("schedule-1", kind="weekly"),
                create("schedule-1", kind="cron"),
                update("a", record_data("a", kind="at")),
                ended("delete", "a"),
                ended("dispatch", "a"),
                ended("dispatch", "a", ACCEPTED[0]),
                ended("dispatch", "a", ACCEPTED[1], INSTANTS[0], NEXT[1]),
                ended("dispatch", "a", ACCEPTED[1], INSTANTS[0], None),
            ]
        )
    )
    target = data["schedule"] if "schedule" in data and draw(st.booleans()) else data
    key = draw(st.sampled_from(sorted(target)))
    action = draw(st.sampled_from(["replace", "add", "remove"]))
    if action == "replace":
        target[key] = draw(json_values | st.sampled_from([True, 1.0, "1", "", " a", 0, 2]))
    elif action == "add":
        target[draw(st.text(max_size=8))] = draw(json_values)
    else:
        del target[key]
    return data


# Payloads that can never decode (plus near misses that may happen to stay valid).
malformed = st.one_of(
    json_values,
    near_misses(),
    st.sampled_from(
        [
            None,
            {"version": 2, "operation": "dispatch", "id": "schedule-1"},
            {"version": True, "operation": "dispatch", "id": "schedule-1"},
            ended("dispatch", " schedule-1"),
            create("schedule-1", prompt=" padded"),
            create("schedule-1", at="2026-02-30T00:00:00.000Z"),
            create("schedule-1", kind="later"),
            create("schedule-1", kind="daily", title=" padded"),
            {**create("schedule-1", kind="every"), "schedule": {"everySeconds": 59}},
            {**create("schedule-1", kind="weekly"), "schedule": {"weekdays": [2, 1]}},
            ended("dispatch", "schedule-1", None, INSTANTS[0], None),
            ended("dispatch", "schedule-1", "2026-08-05T12:00:00Z"),
        ]
    ),
)


def pool_ids() -> st.SearchStrategy[str]:
    return st.sampled_from(ID_POOL)


@st.composite
def owned_entry(
    draw: st.DrawFn, active: list[str], seen: set[str], kinds: dict[str, str] | None = None
) -> tuple[str, Any]:
    """One owned event, biased towards valid transitions so logs stay sound for a while
    (``kinds``: the kind of each created id, so dispatches mostly match their record)."""
    kinds = {} if kinds is None else kinds
    kind = draw(
        st.sampled_from(
            ["create"] * 5 + ["end"] * 4 + ["update"] * 2 + ["other"] * 3 + ["corrupting"]
        )
    )
    if kind == "create":
        # Mostly the next allocated id, sometimes a hand-picked one that is still free.
        unused = [name for name in ("custom", "schedule-3", "schedule-5") if name not in seen]
        schedule_id = draw(st.sampled_from([allocate_id(seen, len(seen))] * 3 + unused))
        record_kind = draw(st.sampled_from(KINDS))
        at = draw(st.sampled_from([*INSTANTS, "9999-12-31T23:58:00.000Z"]))
        title = draw(st.sampled_from([None, None, "T"]))
        return SCHEDULE_CHANGE, create(
            schedule_id, at=at, prompt=draw(st.sampled_from("ab")), kind=record_kind, title=title
        )
    if kind == "update" and active:
        schedule_id = draw(st.sampled_from(active))
        # Now and then a record that holds another id.
        held = draw(st.sampled_from([schedule_id] * 9 + ["other"]))
        record = record_data(
            held,
            prompt=draw(st.sampled_from("abc")),
            at=draw(st.sampled_from(INSTANTS)),
            kind=draw(st.sampled_from(KINDS)),
            title=draw(st.sampled_from([None, "U"])),
        )
        return SCHEDULE_CHANGE, update(schedule_id, record)
    if kind == "end" and active:
        operation = draw(st.sampled_from(["delete", "dispatch"]))
        schedule_id = draw(st.sampled_from(active))
        form = {"every": "every", "daily": "calendar", "weekly": "calendar", "cron": "calendar"}
        expected = form.get(kinds.get(schedule_id, ""), "one-shot")
        if operation == "dispatch" and draw(st.integers(0, 9)) == 0:
            expected = draw(st.sampled_from(["one-shot", "every", "calendar"]))  # the wrong form
        if operation != "dispatch" or expected == "one-shot":
            return SCHEDULE_CHANGE, ended(operation, schedule_id)
        accepted_at = draw(st.sampled_from(ACCEPTED))
        if expected == "every":
            return SCHEDULE_CHANGE, ended(operation, schedule_id, accepted_at)
        occurrence_at = draw(st.sampled_from([*INSTANTS, accepted_at]))
        return SCHEDULE_CHANGE, ended(
            operation, schedule_id, accepted_at, occurrence_at, draw(st.sampled_from(NEXT))
        )
    if kind == "corrupting":
        how = draw(st.sampled_from(["reuse", "inactive", "malformed"]))
        if how == "reuse" and seen:
            return SCHEDULE_CHANGE, create(draw(st.sampled_from(sorted(seen))))
        if how == "malformed":
            return SCHEDULE_CHANGE, draw(malformed)
        operation = draw(st.sampled_from(["delete", "dispatch", "update"]))
        inactive = draw(st.sampled_from([name for name in ID_POOL if name not in active] + ["x"]))
        if operation == "update":
            return SCHEDULE_CHANGE, update(inactive, record_data(inactive))
        return SCHEDULE_CHANGE, ended(operation, inactive)
    return draw(st.sampled_from(["user/message", "session/end-seed", "tool/result"])), draw(
        json_values
    )


def track(
    entry: tuple[str, Any], active: list[str], seen: set[str], kinds: dict[str, str] | None = None
) -> None:
    """Keep the generator's rough model of the stream (it only biases choices)."""
    kinds = {} if kinds is None else kinds
    event_type, data = entry
    if event_type != SCHEDULE_CHANGE or not isinstance(data, dict):
        return
    if data.get("operation") == "create" and isinstance(data.get("schedule"), dict):
        schedule_id = data["schedule"].get("id")
        if isinstance(schedule_id, str) and schedule_id not in seen:
            seen.add(schedule_id)
            active.append(schedule_id)
            kinds[schedule_id] = str(data["schedule"].get("kind"))
    elif data.get("id") in active:
        if data.get("operation") == "update" and isinstance(data.get("schedule"), dict):
            kinds[data["id"]] = str(data["schedule"].get("kind"))
            return
        recurring = kinds.get(data["id"]) in {"every", *CALENDAR}
        if not (recurring and data.get("operation") == "dispatch"):
            active.remove(data["id"])  # a recurring dispatch usually advances the record


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[Event], int]:
    """A contiguous log and its seed length; a fork's inherited prefix is arbitrary junk."""
    entries: list[tuple[str, Any]] = []
    if draw(st.booleans()):
        inherited = st.tuples(st.just(SCHEDULE_CHANGE), malformed | st.builds(create, pool_ids()))
        entries += draw(
            st.lists(inherited | st.tuples(st.just("user/message"), json_values), max_size=4)
        )
        entries.append(("session/end-seed", {}))
    seed_length = len(entries)
    active: list[str] = []
    seen: set[str] = set()
    kinds: dict[str, str] = {}
    for _ in range(draw(st.integers(0, 24))):
        entry = draw(owned_entry(active, seen, kinds))
        track(entry, active, seen, kinds)
        entries.append(entry)
    events = [
        Event(seq=seq, type=event_type, time=seq, data=data)
        for seq, (event_type, data) in enumerate(entries)
    ]
    return events, seed_length


def outcome(run: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", run()
    except ScheduleLogError as exc:
        return "corrupt", str(exc)


def applied(folder: IncrementalFold, events: list[Event]) -> Callable[[], Any]:
    def run() -> Any:
        folder.apply(events)
        return folder.result()

    return run


@LOG_SETTINGS
@given(case=logs(), chunks=st.lists(st.integers(0, 5), max_size=30))
def test_incremental_fold_agrees_with_fold_on_every_prefix(case, chunks):
    events, seed_length = case
    for short in range(seed_length):
        assert outcome(lambda short=short: fold(events[:short], seed_length))[0] == "corrupt"
        assert outcome(applied(IncrementalFold(seed_length), events[:short]))[0] == "corrupt"

    # One event at a time: every prefix is compared.
    stepper = IncrementalFold(seed_length)
    first_error = None
    for end in range(seed_length, len(events) + 1):
        expected = outcome(lambda end=end: fold(events[:end], seed_length))
        assert outcome(applied(stepper, events[:end])) == expected
        assert stepper.position == end or stepper.error is not None
        if first_error is not None:
            assert stepper.error is first_error  # once corrupt, always corrupt
        first_error = stepper.error

    # Random chunks (0 = the same log again): only the new events are folded each time.
    chunked = IncrementalFold(seed_length)
    end = seed_length
    for size in [*chunks, len(events)]:
        end = min(end + size, len(events))
        expected = outcome(lambda end=end: fold(events[:end], seed_length))
        assert outcome(applied(chunked, events[:end])) == expected


candidates = st.one_of(
    st.builds(create, pool_ids(), kind=st.sampled_from(KINDS)),
    st.builds(ended, st.sampled_from(["delete", "dispatch"]), pool_ids()),
    st.builds(ended, st.just("dispatch"), pool_ids(), st.sampled_from(ACCEPTED)),
    st.builds(
        ended,
        st.just("dispatch"),
        pool_ids(),
        st.sampled_from(ACCEPTED),
        st.sampled_from(INSTANTS),
        st.sampled_from(NEXT),
    ),
    st.builds(
        update,
        pool_ids(),
        st.builds(record_data, pool_ids(), kind=st.sampled_from(KINDS)),
    ),
    malformed,
).map(lambda data: (SCHEDULE_CHANGE, data)) | st.tuples(st.just("user/message"), json_values)


@LOG_SETTINGS
@given(case=logs(), extra=st.lists(candidates, min_size=1, max_size=3))
def test_check_raises_exactly_when_the_extended_log_is_corrupt(case, extra):
    events, seed_length = case
    folder = IncrementalFold(seed_length)
    for end in range(seed_length, len(events) + 1):
        prefix = events[:end]
        outcome(lambda prefix=prefix: folder.apply(prefix))
        before = outcome(folder.result)
        upcoming = [
            Event(seq=end, type=event_type, time=end, data=data) for event_type, data in extra
        ]
        upcoming += events[end : end + 1]
        for candidate in upcoming:
            expected = outcome(
                lambda candidate=candidate, prefix=prefix: fold([*prefix, candidate], seed_length)
            )
            verdict = outcome(lambda candidate=candidate: folder.check(candidate))
            assert verdict[0] == expected[0]
            if expected[0] == "corrupt":
                assert verdict[1] == expected[1]
            assert outcome(folder.result) == before  # check never mutates


@given(st.integers(MIN_INSTANT_MS, MAX_INSTANT_MS))
def test_instants_round_trip_over_the_whole_range(ms):
    text = format_instant(ms)
    assert parse_instant(text) == ms
    oracle = EPOCH + dt.timedelta(milliseconds=ms)
    assert text == oracle.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@given(
    st.from_regex(
        r"[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9]\.[0-9]{3}Z",
        fullmatch=True,
    )
)
def test_parse_instant_accepts_exactly_the_real_instants(text):
    try:
        oracle = dt.datetime.strptime(text + "+0000", "%Y-%m-%dT%H:%M:%S.%fZ%z")
    except ValueError:
        oracle = None
    if oracle is None:
        assert outcome_value_error(text)
    else:
        epoch_ms = (oracle - EPOCH) // dt.timedelta(milliseconds=1)
        assert parse_instant(text) == epoch_ms


def outcome_value_error(text: str) -> bool:
    try:
        parse_instant(text)
    except ValueError:
        return True
    return False


@given(st.text(max_size=30))
def test_parse_instant_accepts_only_its_own_output(text):
    if not outcome_value_error(text):
        assert format_instant(parse_instant(text)) == text


ids = st.text(min_size=1, max_size=12).filter(lambda text: text == text.strip())
records = st.builds(
    AfterRecord,
    id=ids,
    kind=st.just("after"),
    prompt=ids,
    after_seconds=st.integers(1, MAX_AFTER_SECONDS),
    scheduled_at=st.integers(MIN_INSTANT_MS, MAX_INSTANT_MS).map(format_instant),
)
instants = st.integers(MIN_INSTANT_MS, MAX_INSTANT_MS).map(format_instant)
renotify = st.none() | st.integers(MIN_RENOTIFY_MINUTES, MAX_RENOTIFY_MINUTES)
at_records = st.builds(
    AtRecord,
    id=ids,
    kind=st.just("at"),
    prompt=ids,
    scheduled_at=instants,
    renotify_minutes=renotify,
    snoozed_from=st.none() | st.builds(SnoozedFrom, id=ids, occurrence_at=instants),
)
every_records = st.builds(
    EveryRecord,
    id=ids,
    kind=st.just("every"),
    prompt=ids,
    every_seconds=st.integers(MIN_EVERY_SECONDS_FLOOR, MAX_EVERY_SECONDS),
    scheduled_at=instants,
    renotify_minutes=renotify,
)
titles = st.none() | st.text(min_size=1, max_size=MAX_TITLE_CHARS).filter(
    lambda text: text == text.strip()
)
zones = st.sampled_from(["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+12"])
times = st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
daily_records = st.builds(
    DailyRecord,
    id=ids,
    kind=st.just("daily"),
    prompt=ids,
    time=times.map(lambda t: f"{t[0]:02d}:{t[1]:02d}:{t[2]:02d}.{t[3]:03d}"),
    time_zone=zones,
    scheduled_at=instants,
    title=titles,
)
weekly_records = st.builds(
    WeeklyRecord,
    id=ids,
    kind=st.just("weekly"),
    prompt=ids,
    time=times.map(lambda t: f"{t[0]:02d}:{t[1]:02d}:{t[2]:02d}.{t[3]:03d}"),
    time_zone=zones,
    weekdays=st.frozensets(st.integers(1, 7), min_size=1).map(lambda days: tuple(sorted(days))),
    scheduled_at=instants,
    title=titles,
)
cron_records = st.builds(
    CronRecord,
    id=ids,
    kind=st.just("cron"),
    prompt=ids,
    expression=st.sampled_from(["* * * * *", "0 9 */2 * 1", "5-50/15 0 1 1 0,5-6"]),
    time_zone=zones,
    scheduled_at=instants,
    title=titles,
)
any_records = records | at_records | every_records | daily_records | weekly_records | cron_records
changes = st.one_of(
    st.builds(Create, record=any_records),
    st.builds(Update, id=ids, record=any_records),
    st.builds(Delete, id=ids),
    st.builds(Dispatch, id=ids),
    st.builds(Dispatch, id=ids, accepted_at=instants),
    st.builds(
        Dispatch, id=ids, accepted_at=instants, occurrence_at=instants, next_at=st.none() | instants
    ),
    st.builds(Ack, id=ids, occurrence_at=instants),
)


@given(changes)
def test_encode_decode_round_trip(change):
    data = encode_change(change)
    assert decode_change(data) == change
    assert decode_change(json.loads(json.dumps(data, allow_nan=False))) == change


@given(near_misses())
def test_decoding_never_coerces(data):
    # Whatever decodes re-encodes to the very same JSON text: True, 1.0 or "1" never become 1.
    try:
        change = decode_change(data)
    except ScheduleLogError:
        return
    assert json.dumps(encode_change(change), sort_keys=True) == json.dumps(data, sort_keys=True)
