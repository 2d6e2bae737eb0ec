"""The owned-task helpers every host and plugin task goes through (dsh_hookspecs._tasks)."""

from __future__ import annotations

import asyncio

import pytest

from dsh_hookspecs import Once, TaskSet, TaskSlot


async def test_a_slot_runs_one_task_at_a_time_and_frees_itself_when_it_finishes() -> None:
    gate = asyncio.Event()
    runs: list[int] = []

    async def work() -> None:
        runs.append(len(runs))
        await gate.wait()

    slot = TaskSlot("work")
    first = slot.start(work)
    assert slot.start(work) is first  # a second start while busy is the same task
    assert (slot.busy, slot.task) == (True, first)
    gate.set()
    await slot.join()
    assert first.done()
    assert (slot.busy, slot.task) == (False, None)
    assert runs == [0]
    second = slot.start(work)
    assert second is not first
    await slot.join()
    assert runs == [0, 1]


async def test_stopping_a_slot_cancels_and_waits_and_consumes_the_failure() -> None:
    cleaned = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.set()

    slot = TaskSlot("forever")
    task = slot.start(forever)
    await asyncio.sleep(0)  # let it reach its wait
    await slot.stop()
    assert task.cancelled()
    assert cleaned.is_set()
    assert not slot.busy
    await slot.stop()  # stopping an empty slot is a no-op

    async def boom() -> None:
        raise ValueError("boom")

    failed = slot.start(boom)
    await slot.join()  # the failure is retrieved: no "never retrieved" warning at collection
    assert isinstance(failed.exception(), ValueError)


async def test_on_done_runs_after_the_slot_is_free_so_it_may_start_the_next_task() -> None:
    slot = TaskSlot("chain")
    seen: list[tuple[bool, bool]] = []
    restarted: list[asyncio.Task[None]] = []

    async def quick() -> None:
        return None

    def settled(task: asyncio.Task[None]) -> None:
        seen.append((task.done(), slot.busy))
        if len(seen) == 1:
            restarted.append(slot.start(quick, on_done=settled))

    slot.start(quick, on_done=settled)
    await asyncio.wait_for(_until(lambda: len(seen) == 2), 5)
    assert seen == [(True, False), (True, False)]
    assert restarted
    assert restarted[0].done()


async def test_a_task_may_release_its_slot_while_winding_down() -> None:
    slot = TaskSlot("driver")
    later: list[asyncio.Task[None]] = []

    async def second() -> None:
        return None

    async def first() -> None:
        slot.release()
        later.append(slot.start(second))  # not refused: the slot is free again
        await slot.stop()  # ... and stopping the new one from here waits for it, not for us

    task = slot.start(first)
    await asyncio.wait_for(task, 5)
    assert later
    assert later[0].done()
    assert not slot.busy


async def test_a_slot_can_be_cancelled_without_waiting() -> None:
    slot = TaskSlot("wait")
    slot.cancel()  # empty: nothing happens
    task = slot.start(lambda: asyncio.Event().wait())  # type: ignore[arg-type, return-value]
    slot.cancel()
    await slot.join()
    assert task.cancelled()


async def test_once_runs_one_disposal_that_every_caller_awaits() -> None:
    gate = asyncio.Event()
    runs: list[int] = []

    async def dispose() -> None:
        runs.append(1)
        await gate.wait()

    once = Once("dispose")
    assert not _started(once)
    waiters = [asyncio.ensure_future(once.run(dispose)) for _ in range(3)]
    await asyncio.sleep(0)
    assert _started(once)
    waiters[0].cancel()  # one impatient caller gives up ...
    await asyncio.gather(waiters[0], return_exceptions=True)
    gate.set()
    await asyncio.gather(*waiters[1:])  # ... the run goes on and the others see its end
    await once.run(dispose)  # later calls return at once
    assert runs == [1]


async def test_once_raises_the_runs_failure_to_every_caller() -> None:
    async def fail() -> None:
        raise OSError("disk")

    once = Once("dispose")
    for _ in range(2):
        with pytest.raises(OSError, match="disk"):
            await once.run(fail)


async def test_a_task_set_stops_every_task_even_ones_spawned_while_stopping() -> None:
    tasks = TaskSet("writes")
    spawned: list[asyncio.Task[None]] = []

    async def spawns_on_cancel() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            spawned.append(tasks.spawn(asyncio.Event().wait()))  # type: ignore[arg-type]

    first = tasks.spawn(spawns_on_cancel())
    await asyncio.sleep(0)
    assert len(tasks) == 1
    await tasks.stop()
    assert first.cancelled()
    assert spawned
    assert spawned[0].cancelled()
    assert len(tasks) == 0


async def test_a_task_set_joins_without_cancelling_and_skips_the_calling_task() -> None:
    tasks = TaskSet("writes")
    results: list[str] = []

    async def write(name: str) -> None:
        await asyncio.sleep(0)
        results.append(name)

    async def joiner() -> None:
        await tasks.join()  # from inside the set: waits for the others, not for itself
        results.append("joined")

    tasks.spawn(write("a"))
    tasks.spawn(write("b"))
    tasks.spawn(joiner())
    await asyncio.wait_for(tasks.join(), 5)
    assert sorted(results[:2]) == ["a", "b"]
    assert results[2] == "joined"
    await tasks.stop()  # empty now: returns at once


async def _until(condition: object) -> None:
    assert callable(condition)
    while not condition():
        await asyncio.sleep(0)


def _started(once: Once) -> bool:
    return once.started  # read through a call: mypy would narrow the property across awaits


async def test_a_task_stopping_its_own_slot_does_not_wait_for_itself() -> None:
    slot = TaskSlot("self")
    await slot.join()  # empty: returns at once

    async def stops_itself() -> None:
        await slot.stop()  # cancels itself; must not deadlock waiting for its own end
        await asyncio.sleep(0)  # the cancellation lands here

    task = slot.start(stops_itself)
    await asyncio.wait_for(slot.join(), 5)
    assert task.cancelled()
