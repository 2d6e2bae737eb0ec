"""Cold delivery and idle eviction through real ``dsh serve`` processes (issue 11, proof), on
SQLite and PostgreSQL (restarted as the same host, and as a new host: see ``tests/web/lanes.py``).

The example overlay turns the Schedule plugin's ``cold_delivery`` on. Nobody attaches to the
Sessions under test: no ``/events`` stream, no message, no resume. Until a reminder has fired the
tests read only the Sessions listing and the server's structured log (JSON lines on stderr), so
it is the host's wake index that brings each Session back, not a client.

"On time" is measured from the log itself: a dispatch's envelope ``time`` (epoch ms at append,
the host's wall clock) minus the reminder's ``scheduledAt``. It is never negative (not early) and
stays under :data:`ON_TIME_MS`. Eviction is seen the same way: the ``host.session_evicted`` log
line and ``"live": false`` in the listing.
"""

from __future__ import annotations

import pytest

from dsh_schedule import parse_instant
from tests.api import call_tool, dispatches, new_session, wait_for
from tests.api import history as events
from tests.pg import pg_cluster  # noqa: F401 - the session's cluster, for the postgres cases
from tests.web.lanes import (  # noqa: F401 - store is a fixture
    Store,
    lag_ms,
    live,
    now_ms,
    store,
    wait_logged,
)

#: The bound on a dispatch's lateness after its due instant.
ON_TIME_MS = 2000
#: How far ahead the on-time reminder is set: past a SIGKILL and a restart, with room to spare.
LEAD_SECONDS = 6


def test_reminders_fire_once_and_on_time_after_a_sigkill_restart_with_nobody_attached(
    store: Store,  # noqa: F811 - the imported fixture
) -> None:
    """One reminder falls due while no server runs (delivered at start-up); another falls due
    after the restarted server is up (delivered at its instant, not before, not late)."""
    boot1 = store.serve()
    try:
        overdue, on_time = new_session(boot1), new_session(boot1)
        late = call_tool(boot1, overdue, "schedule_create", {"prompt": "a", "after_seconds": 1})
        soon = call_tool(
            boot1, on_time, "schedule_create", {"prompt": "b", "after_seconds": LEAD_SECONDS}
        )
        assert late["state"] == soon["state"] == "scheduled"
    finally:
        store.sigkill(boot1)  # both creates were already acknowledged
    wait_for(lambda: now_ms() > parse_instant(late["scheduledAt"]))  # due while no server runs

    boot2 = store.serve()
    try:
        cold_at_start = live(boot2, on_time)
        checked = now_ms()
        assert checked < parse_instant(soon["scheduledAt"]), "the restart took longer than the lead"
        assert cold_at_start is False  # not resumed before it is due

        # The overdue one: the wake service resumes it at start-up.
        wait_logged(boot2, "host.wake_delivered", session_id=overdue)
        fired_late = wait_for(lambda: dispatches(events(boot2, overdue)))
        assert lag_ms(fired_late[0], late["scheduledAt"]) >= 0

        # The on-time one: watched only through the listing and the log until it has fired.
        wait_logged(boot2, "host.wake_delivered", session_id=on_time, timeout=LEAD_SECONDS + 20)
        fired = wait_for(lambda: dispatches(events(boot2, on_time)))
        assert 0 <= lag_ms(fired[0], soon["scheduledAt"]) < ON_TIME_MS
        for sid in (overdue, on_time):
            assert boot2.http.post(f"/api/sessions/{sid}/flush").json()["durable"] is True
            assert len(dispatches(events(boot2, sid))) == 1
    finally:
        store.sigkill(boot2)

    boot3 = store.serve()
    try:
        for sid in (overdue, on_time):
            assert len(dispatches(events(boot3, sid))) == 1  # never delivered twice
            assert live(boot3, sid) is False  # cold history activated nothing
    finally:
        boot3.close()


EVICT = ("--evict-idle", "1")  # the smallest timeout dsh serve takes (0 turns eviction off)


def replies_after(server, sid: str, seq: int) -> list[str]:
    """The assistant replies appended after log index ``seq``."""
    return [
        e["event"]["data"]["text"]
        for e in events(server, sid)
        if e["event"]["type"] == "assistant/message" and e["event"]["seq"] > seq
    ]


@pytest.mark.parametrize("store", ["sqlite", "postgres"], indirect=True)
def test_an_evicted_session_is_woken_by_its_reminder_then_reads_cold_and_resumes_on_a_message(
    store: Store,  # noqa: F811 - the imported fixture
) -> None:
    boot1 = store.serve(extra=EVICT)
    try:
        sid = new_session(boot1)
        made = call_tool(boot1, sid, "schedule_create", {"prompt": "c", "after_seconds": 5})
        due_ms = parse_instant(made["scheduledAt"])
        # Idle for a second: the host flushes it and detaches it, the reminder still standing.
        wait_logged(boot1, "host.session_evicted", session_id=sid)
        assert live(boot1, sid) is False
        assert now_ms() < due_ms, "evicted only after the reminder was due"
        # The wake index brings it back at its instant, with nobody attached.
        wait_logged(boot1, "host.wake_delivered", session_id=sid, timeout=30)
        fired = wait_for(lambda: dispatches(events(boot1, sid)))
        assert 0 <= lag_ms(fired[0], made["scheduledAt"]) < ON_TIME_MS
        # Its follow-up turn ends and it goes cold again: that eviction's flush was durable.
        wait_logged(boot1, "host.session_evicted", session_id=sid, count=2)
    finally:
        store.sigkill(boot1)

    boot2 = store.serve(extra=EVICT)
    try:
        cold = events(boot2, sid)  # a browser-less client reads the evicted Session cold
        receipts = dispatches(cold)
        assert len(receipts) == 1
        assert receipts[0]["view"]["view"]["occurrenceAt"] == made["scheduledAt"]
        assert live(boot2, sid) is False  # reading history activated nothing
        last = cold[-1]["event"]["seq"]
        assert call_tool(boot2, sid, "schedule_list", {}) == []  # a message resumes it
        assert wait_for(lambda: replies_after(boot2, sid, last))
        assert len(dispatches(events(boot2, sid))) == 1
    finally:
        boot2.process.kill()
        boot2.close()
