"""Properties of fixed-rate reminders (issue 12 item 5): over 10,000 simulated occurrences with
random delivery delays (busy Agents, cold Sessions) and restarts that replay the fold from the
log, ``every`` never drifts and never delivers a backlog.

Each step is what the owner does: read the active record from the fold, decide at a decision
time at or after its target (:func:`~dsh_schedule._due.due_decision`), append the batch's
dispatch and fold it. A restart throws the fold away and replays the whole log.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_hookspecs import Event
from dsh_schedule import (
    MAX_INSTANT_MS,
    SCHEDULE_CHANGE,
    Create,
    EveryRecord,
    IncrementalFold,
    encode_change,
    fold,
    format_instant,
    parse_instant,
    resolve_every_occurrence,
)
from dsh_schedule._due import Batch, due_decision

OCCURRENCES = 10_000
#: 2026-08-05T12:00:00.000Z.
START = 1_785_931_200_000


def delay_ms(rng: random.Random, interval: int) -> int:
    """How late the owner decides after a target: mostly on time, sometimes busy for a few
    intervals, now and then cold for many."""
    roll = rng.random()
    if roll < 0.6:
        return rng.randrange(0, 2_000)
    if roll < 0.9:
        return rng.randrange(0, 4 * interval)
    return rng.randrange(0, 40 * interval)


@settings(max_examples=20, deadline=None)
@given(
    seconds=st.integers(300, 86_400),
    offset=st.integers(0, 10**12),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_never_drifts_nor_delivers_a_backlog(seconds, offset, seed):
    rng = random.Random(seed)
    interval = seconds * 1000
    created_at = START + offset  # the creation sample, any millisecond
    anchor = created_at + interval  # the first occurrence: one full interval after creation
    record = EveryRecord(
        id="schedule-1",
        kind="every",
        prompt="drink water",
        every_seconds=seconds,
        scheduled_at=format_instant(anchor),
    )
    events = [Event(seq=0, type=SCHEDULE_CHANGE, time=0, data=encode_change(Create(record=record)))]
    folded = IncrementalFold(0)
    folded.apply(events)
    previous = None
    restarts = deliveries = 0
    while True:
        (active,) = folded.active
        target = parse_instant(active.scheduled_at)
        # Targets always lie on the creation anchor's grid.
        assert (target - anchor) % interval == 0
        assert previous is None or target == previous + interval
        decided = target + delay_ms(rng, interval)
        if (decided - anchor) // interval >= OCCURRENCES or decided > MAX_INSTANT_MS:
            break
        decision = due_decision(folded.active, decided)
        assert isinstance(decision, Batch)
        ((batched, occurrence),) = decision.items
        assert batched == active
        # The latest occurrence at or before the decision: one delivery, never a backlog.
        assert occurrence == anchor + (decided - anchor) // interval * interval
        assert target <= occurrence <= decided < occurrence + interval
        assert previous is None or occurrence > previous
        (dispatch,) = decision.dispatches()
        assert dispatch.accepted_at == format_instant(decided)
        candidate = Event(
            seq=len(events), type=SCHEDULE_CHANGE, time=len(events), data=encode_change(dispatch)
        )
        folded.check(candidate)  # what the invariant companion asks before the append
        events.append(candidate)
        deliveries += 1
        if rng.random() < 0.002:  # a restart: the fold is replayed from the log
            restarts += 1
            folded = IncrementalFold(0)
        folded.apply(events)
        previous = occurrence
    assert deliveries >= 1
    # The log alone says the same: replaying it from scratch gives the fold the owner kept.
    assert fold(events, 0) == folded.result()
    assert resolve_every_occurrence(folded.active[0], decided).occurrence_ms <= decided


@settings(max_examples=300, deadline=None)
@given(
    seconds=st.integers(300, 86_400),
    target=st.integers(START - 10**11, START + 10**11),
    skipped=st.integers(0, 10_000),
    into=st.floats(0, 1, exclude_max=True),
)
def test_the_occurrence_is_the_latest_target_and_the_next_stays_on_the_anchor(
    seconds, target, skipped, into
):
    interval = seconds * 1000
    record = EveryRecord(
        id="a", kind="every", prompt="p", every_seconds=seconds, scheduled_at=format_instant(target)
    )
    accepted = target + skipped * interval + int(into * interval)
    occurrence = resolve_every_occurrence(record, accepted)
    assert occurrence.occurrence_ms == target + skipped * interval
    assert occurrence.next_ms == target + (skipped + 1) * interval
