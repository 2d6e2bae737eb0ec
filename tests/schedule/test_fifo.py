"""The Agent's schedule FIFO: arrival order, cancellation, no allocation while idle."""

from __future__ import annotations

import asyncio

from dsh_schedule._fifo import Fifo

from .harness import spin


async def hold(fifo: Fifo, name: str, order: list[str], release: asyncio.Event) -> None:
    async with fifo:
        order.append(name)
        await release.wait()


async def test_waiters_run_in_arrival_order_and_nothing_stays_allocated():
    fifo = Fifo()
    order: list[str] = []
    gates = {name: asyncio.Event() for name in "abc"}
    tasks = [asyncio.create_task(hold(fifo, name, order, gates[name])) for name in "abc"]
    await spin()
    assert order == ["a"]
    assert fifo.locked()
    gates["a"].set()
    await spin()
    assert order == ["a", "b"]
    late = asyncio.create_task(hold(fifo, "late", order, asyncio.Event()))
    gates["b"].set()
    gates["c"].set()
    await spin(20)
    assert order == ["a", "b", "c", "late"]  # the late arrival never overtook "c"
    late.cancel()
    await asyncio.gather(*tasks, late, return_exceptions=True)
    assert not fifo.locked()
    assert fifo._waiters is None


async def test_a_cancelled_waiter_leaves_the_queue():
    fifo = Fifo()
    order: list[str] = []
    first, second = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(hold(fifo, "holder", order, first))
    await spin()
    waiting = asyncio.create_task(hold(fifo, "cancelled", order, second))
    after = asyncio.create_task(hold(fifo, "after", order, second))
    await spin()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    first.set()
    second.set()
    await asyncio.gather(holder, after)
    assert order == ["holder", "after"]
    assert not fifo.locked()


async def test_a_waiter_cancelled_just_after_the_handover_passes_ownership_on():
    fifo = Fifo()
    order: list[str] = []
    gate = asyncio.Event()
    holder = asyncio.create_task(hold(fifo, "holder", order, gate))
    await spin()
    handed = asyncio.create_task(hold(fifo, "handed", order, asyncio.Event()))
    after = asyncio.create_task(hold(fifo, "after", order, asyncio.Event()))
    await spin()
    gate.set()
    await asyncio.sleep(0)  # the holder releases: "handed" now owns the FIFO but has not run
    handed.cancel()
    await asyncio.gather(holder, handed, return_exceptions=True)
    await spin()
    assert order == ["holder", "after"]
    after.cancel()
    await asyncio.gather(after, return_exceptions=True)
    assert not fifo.locked()


async def test_a_waiter_cancelled_in_the_same_tick_as_the_release_is_skipped():
    fifo = Fifo()
    await fifo.__aenter__()
    order: list[str] = []
    waiting = asyncio.create_task(hold(fifo, "cancelled", order, asyncio.Event()))
    await spin()
    waiting.cancel()  # its future is cancelled now; the task has not handled it yet
    await fifo.__aexit__(None, None, None)  # the release skips the cancelled waiter
    assert not fifo.locked()
    await asyncio.gather(waiting, return_exceptions=True)
    assert order == []
    assert not fifo.locked()
