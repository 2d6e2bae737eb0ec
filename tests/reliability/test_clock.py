"""Clock (issue "Reliability harness", part 3): never early, late by at most one segment.

In-process with :class:`~dsh_host.testing.ManualClock`: loop time moves only when the test
advances it, and the test advances it exactly to the next armed timer, so every owner wakes
at the loop instant it asked for and lateness is measured, not sampled. Reminders with random
targets (seconds to hours) are spread over several Sessions; at a random instant the wall clock

* is set back 1 h (an administrator's correction),
* is set forward 1 day,
* jumps while loop time stalls (a suspend of minutes to hours: timers did not notice).

For each reminder the loop instant at which the wall clock first reaches its target is known
exactly (the wall is loop time plus an offset that changes once, at the jump). Asserted for
every dispatch: its wall time is not before the target (never early) and it happened at most
one segment (``max_segment_seconds``) of loop time after the target was reached.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

import pytest

from dsh_hookspecs import Event
from dsh_host import Appended, LiveSession
from dsh_schedule import parse_instant
from tests.chaos.figures import full_size
from tests.schedule.harness import make_harness, settle_quiet

pytestmark = pytest.mark.chaos

HOUR = 3600.0
EPSILON = 1e-3  # seconds: float rounding of the manual clock's loop time
SEEDS = range(25 if full_size() else 3)


@dataclass(frozen=True)
class Jump:
    name: str
    #: seconds the wall clock moves at the jump
    delta: float


def _jump(scenario: str, rng: random.Random) -> Jump:
    if scenario == "set back 1 h":
        return Jump(scenario, -HOUR)
    if scenario == "forward 1 day":
        return Jump(scenario, 24 * HOUR)
    return Jump(scenario, rng.uniform(5 * 60, 8 * HOUR))  # suspend


@dataclass
class Dispatched:
    loop: float
    wall_ms: int


@pytest.mark.parametrize("segment", [60.0, 7.0])
@pytest.mark.parametrize("scenario", ["set back 1 h", "forward 1 day", "suspend"])
@pytest.mark.parametrize("seed", SEEDS)
async def test_reminders_are_never_early_and_late_by_at_most_one_segment(
    scenario: str, segment: float, seed: int, tally: Counter[str]
) -> None:
    rng = random.Random(f"{scenario}/{segment}/{seed}")
    h = await make_harness(config={"max_segment_seconds": segment})
    try:
        agents = [await h.agent() for _ in range(3)]
        longest = 2 * HOUR if segment >= 60 else 20 * 60
        targets: dict[tuple[str, str], int] = {}
        for index in range(24):
            agent = agents[index % len(agents)]
            after = max(1, round(math.exp(rng.uniform(0, math.log(longest)))))
            value = await h.call(
                agent, "schedule_create", {"prompt": f"r{index}", "after_seconds": after}
            )
            assert isinstance(value, dict)
            assert "id" in value, value
            targets[(agent.session.id, value["id"])] = parse_instant(value["scheduledAt"])
        await settle_quiet(h.host, agents)

        dispatched: dict[tuple[str, str], Dispatched] = {}
        repeated: Counter[tuple[str, str]] = Counter()

        def observe(session: LiveSession, event: Event) -> None:
            data = event.data
            if event.type == "schedule/change" and data["operation"] == "dispatch":  # type: ignore[index]
                key = (session.id, data["id"])  # type: ignore[index]
                if key in dispatched:
                    # Counted, not asserted here: the store only logs an observer's exception.
                    repeated[key] += 1
                    return
                dispatched[key] = Dispatched(h.clock.loop_time, event.time)

        remove = h.host.sessions.subscribe(lambda o: observe(o.session, o.event), Appended)
        wall0 = h.clock.now_ms()
        jump = _jump(scenario, rng)
        jump_at = rng.uniform(0, longest)
        shift = round(jump.delta * 1000)
        horizon = longest + max(0.0, -jump.delta) + 2 * segment + 1
        jumped = False
        while h.clock.loop_time < horizon and len(dispatched) < len(targets):
            delays = h.clock.pending_delays()
            step = min([horizon - h.clock.loop_time, *delays[:1]])
            if not jumped and h.clock.loop_time + step >= jump_at:
                h.clock.advance(max(0.0, jump_at - h.clock.loop_time))
                await settle_quiet(h.host, agents)
                h.clock.set_wall(h.clock.now_ms() + shift)  # loop time does not move
                jumped = True
                continue
            h.clock.advance(step)
            await settle_quiet(h.host, agents)
        remove()

        # The figures first (a failing case still reports them), then the assertions.
        tally["reminders lost"] += len(targets.keys() - dispatched.keys())
        tally["reminders early"] += sum(
            1 for key, got in dispatched.items() if key in targets and got.wall_ms < targets[key]
        )
        tally["reminders duplicated"] += sum(repeated.values())
        assert not repeated, repeated  # none dispatched twice ...
        assert dispatched.keys() == targets.keys()  # ... none lost ...
        for key, target in targets.items():
            # ... none early: the wall clock said the target was reached ...
            got = dispatched[key]
            assert got.wall_ms >= target, (key, got, target)
            # ... and at most one segment after the loop instant the wall first reached it.
            before_jump = (target - wall0) / 1000
            if before_jump < jump_at:
                due = before_jump
            else:
                due = max(jump_at, (target - wall0 - shift) / 1000)
            late = got.loop - due
            assert -EPSILON <= late <= segment + EPSILON, (key, late, segment)
            worst = f"max lateness (s), {scenario}, segment {segment:g}"
            tally[worst] = max(tally[worst], round(max(late, 0.0), 3))
            tally["reminders checked"] += 1
            tally["reminders on time (late < 1 ms)"] += late < EPSILON
        tally["scenarios run"] += 1
    finally:
        await h.host.close()
