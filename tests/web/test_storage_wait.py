"""The storage wait of a request (issue 23 item 6): :class:`StorageWait` in isolation.

Past its deadline a request answers 503 ``storage_unavailable`` with ``Retry-After``; the
operation goes on by itself and how it ends is logged. The storage calls of one request share
one deadline. A storage failure inside is answered as before (503, 409 for another live host).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_host.persistence import SessionLiveElsewhereError, StorageError
from dsh_host.testing import wait_until
from dsh_host.web._errors import DEFAULT_STORAGE_WAIT, ERROR_CODES, ApiError, StorageWait


def _never() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


async def _timed_out(wait: StorageWait, call: Any, **kw: Any) -> tuple[ApiError, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(ApiError) as caught:
        await wait.run("list", call, **kw)
    return caught.value, loop.time() - start


async def test_a_call_that_does_not_answer_gets_503_with_retry_after_at_the_deadline() -> None:
    wait = StorageWait(0.3)
    pending = _never()
    with capture_logs() as logs:
        error, elapsed = await _timed_out(wait, pending)
    assert 0.3 <= elapsed < 0.3 + 2
    assert (ERROR_CODES[error.code], error.code) == (503, "storage_unavailable")
    assert error.headers == {"Retry-After": "1"}
    assert str(error.message) == "storage did not answer within 0.3 s (list); retry later"
    assert [e["event"] for e in logs] == ["web.storage_timeout"]
    assert not pending.done()  # not cancelled: it goes on by itself
    assert wait.pending == 1
    pending.set_result(None)
    await wait_until(lambda: wait.pending == 0)


def test_retry_after_is_whole_seconds_and_at_least_one() -> None:
    assert StorageWait(0.2).retry_after == "1"
    assert StorageWait(1.5).retry_after == "2"
    assert StorageWait().seconds == DEFAULT_STORAGE_WAIT == 5.0
    assert StorageWait().retry_after == "5"


async def test_the_calls_of_one_request_share_one_deadline() -> None:
    wait = StorageWait(0.8)
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = wait.deadline()
    assert await wait.run("inspect", asyncio.sleep(0.5, "first"), deadline=deadline) == "first"
    with pytest.raises(ApiError):
        await wait.run("history", _never(), deadline=deadline)
    # A fresh wait for the second call would end at 0.5 + 0.8 s at the earliest.
    assert 0.8 <= loop.time() - start < 1.25
    # A deadline already past: even a call that is ready at once is not waited for.
    error, _ = await _timed_out(wait, asyncio.sleep(0.01), deadline=loop.time())
    assert error.code == "storage_unavailable"


async def test_what_the_request_became_is_told_at_the_moment_it_stops_waiting() -> None:
    wait = StorageWait(0.1)
    told: list[int] = []

    def late() -> str:
        told.append(wait.pending)  # called after the operation was set aside
        return "the action was not run"

    error, _ = await _timed_out(wait, _never(), late=late)
    assert told == [1]
    assert str(error.message).endswith("(list); the action was not run")
    fixed, _ = await _timed_out(wait, _never(), late="it may still complete")
    assert str(fixed.message).endswith("(list); it may still complete")


@pytest.mark.parametrize(
    ("ending", "logged"),
    [
        ("result", "web.storage_late_done"),
        ("error", "web.storage_late_failed"),
        ("cancel", "web.storage_late_cancelled"),
    ],
)
async def test_how_a_late_operation_ends_is_logged(ending: str, logged: str) -> None:
    wait = StorageWait(0.05)
    pending = _never()
    with capture_logs() as logs:
        await _timed_out(wait, pending)
        if ending == "result":
            pending.set_result(1)
        elif ending == "error":
            pending.set_exception(StorageError("the server went away"))
        else:
            pending.cancel()
        await wait_until(lambda: wait.pending == 0)
    ends = [e for e in logs if e["event"].startswith("web.storage_late")]
    assert [(e["event"], e["operation"]) for e in ends] == [(logged, "list")]
    if ending == "error":
        assert "the server went away" in ends[0]["error"]


async def test_a_storage_failure_inside_still_answers_503_and_another_host_409() -> None:
    wait = StorageWait(5)

    async def fails(exc: Exception) -> None:
        raise exc

    with capture_logs() as logs:
        error, elapsed = await _timed_out(wait, fails(StorageError("disk I/O error")))
    assert elapsed < 1
    assert (ERROR_CODES[error.code], error.code, error.headers) == (
        503,
        "storage_unavailable",
        {"Retry-After": "5"},
    )
    assert str(error.message) == "storage is unavailable (list); retry later"
    assert [e["event"] for e in logs] == ["web.storage_failed"]
    elsewhere, _ = await _timed_out(wait, fails(SessionLiveElsewhereError("live on host-b")))
    assert (ERROR_CODES[elsewhere.code], elsewhere.code) == (409, "session_live_elsewhere")
    with pytest.raises(KeyError):  # anything else passes through
        await wait.run("resume", fails(KeyError("s1")))
    assert wait.pending == 0


async def test_a_request_cancelled_while_it_waits_sets_its_operation_aside() -> None:
    wait = StorageWait(30)
    pending = _never()
    waiting = asyncio.ensure_future(wait.run("list", pending))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert wait.pending == 1
    assert not pending.cancelled()
    pending.set_result(None)
    await wait_until(lambda: wait.pending == 0)
