"""Owned tasks: the one way a host or a plugin keeps a background task.

Three shapes cover every background task in dsh:

* :class:`TaskSlot`: at most one task at a time (a driver, a writer, a wait), started on demand,
  forgotten when it finishes, cancelled and awaited on stop;
* :class:`Once`: a coroutine run at most once (a disposal) that every caller awaits, each
  shielded from its own cancellation;
* :class:`TaskSet`: any number of short tasks (background writes) awaited together on close.

Stopping waits until the task has really finished and consumes its outcome, so closing an owner
leaves no task pending and no "exception was never retrieved" warning. Where a task's lifetime
is one ``async`` scope, use :class:`asyncio.TaskGroup` instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["Once", "TaskSet", "TaskSlot"]

#: What the helpers start: a zero-argument callable returning a fresh coroutine.
Factory = Callable[[], Coroutine[Any, Any, None]]


async def settle(task: asyncio.Task[Any]) -> None:
    """Wait until ``task`` is done and mark its outcome retrieved (never raises it).

    A cancellation of the caller still propagates; ``task`` itself is left running then.
    """
    if task is asyncio.current_task():
        return  # a task stopping its own owner: it finishes when it returns
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()


class TaskSlot:
    """Owns at most one task at a time."""

    __slots__ = ("_name", "_task")

    def __init__(self, name: str) -> None:
        self._name = name
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """A task was started and has not finished (or released the slot) yet."""
        return self._task is not None

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def start(
        self,
        factory: Factory,
        *,
        on_done: Callable[[asyncio.Task[None]], None] | None = None,
    ) -> asyncio.Task[None]:
        """Start ``factory()`` unless a task is already running; return the slot's task.

        ``on_done`` runs once the started task has finished, after the slot is free again.
        """
        task = self._task
        if task is not None:
            return task
        task = asyncio.get_running_loop().create_task(factory(), name=self._name)
        self._task = task

        def settled(done: asyncio.Task[None]) -> None:
            if self._task is done:
                self._task = None
            if on_done is not None:
                on_done(done)

        task.add_done_callback(settled)
        return task

    def release(self) -> None:
        """Free the slot now (called by the running task as it winds down): the next
        :meth:`start` starts a new task even before this one has returned."""
        self._task = None

    def cancel(self) -> None:
        """Ask the running task to stop, without waiting."""
        if self._task is not None:
            self._task.cancel()

    async def join(self) -> None:
        """Wait until the running task (if any) has finished; its outcome is consumed."""
        if self._task is not None:
            await settle(self._task)

    async def stop(self) -> None:
        """Cancel the running task (if any) and wait until it has finished."""
        task = self._task
        if task is not None:
            task.cancel()
            await settle(task)


class Once:
    """Runs one coroutine at most once; every call awaits that same run."""

    __slots__ = ("_name", "_task")

    def __init__(self, name: str) -> None:
        self._name = name
        self._task: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        return self._task is not None

    async def run(self, factory: Factory) -> None:
        """Start ``factory()`` on the first call; await it (shielded) on every call.

        A caller that is cancelled stops waiting; the run itself goes on to its end. The run's
        exception, if any, is raised to every caller.
        """
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(factory(), name=self._name)
        await asyncio.shield(self._task)


class TaskSet:
    """Owns any number of tasks until each finishes."""

    __slots__ = ("_name", "_tasks")

    def __init__(self, name: str) -> None:
        self._name = name
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Start ``coro`` as an owned task."""
        task = asyncio.get_running_loop().create_task(coro, name=self._name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def join(self) -> None:
        """Wait until every owned task (including ones spawned meanwhile) has finished."""
        current = asyncio.current_task()
        while others := [task for task in self._tasks if task is not current]:
            for task in others:
                await settle(task)

    async def stop(self) -> None:
        """Cancel every owned task and wait until all have finished."""
        current = asyncio.current_task()
        while others := [task for task in self._tasks if task is not current]:
            for task in others:
                task.cancel()
            for task in others:
                await settle(task)
