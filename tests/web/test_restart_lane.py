"""The restart lane: real ``dsh serve`` processes on one store, stopped with SIGKILL; the store is
a data folder (SQLite) or a PostgreSQL database (issue 11 item 6), restarted as the same host
(``--host-id``) or as a new one that first waits out the killed one's leases
(``tests/web/lanes.py``).

Boot 1 writes a pending reminder (+3600 s) and one that falls due while the server is down.
Boot 2 resumes the pending Session (still pending), forks it (the child inherits no active
work) and resumes the overdue one (exactly one dispatch, flush True). Boot 3 reads cold history
(no Agent activated) and finds the receipt with its view. Boot 4 resumes the delivered Session
again and nothing new is dispatched.

It runs the spec's mode (the Schedule plugin's ``cold_delivery`` off): a cold Session does
nothing until it is resumed. With cold delivery on, the host resumes it at start-up instead
(tests/host/test_cold_delivery.py).
"""

from __future__ import annotations

import time

from dsh_schedule import parse_instant
from tests.api import call_tool, dispatches, new_session, wait_for
from tests.api import history as events
from tests.pg import pg_cluster  # noqa: F401 - the session's cluster, for the postgres case
from tests.web.lanes import Store, live, store  # noqa: F401 - store is a fixture

PENDING = "Water the plants"
OVERDUE = "Check the deployment log"


#: The web-schedule overlay without ``cold_delivery``: the spec's behaviour.
SPEC_OVERLAY = "[plugins.schedule]\n\n[plugins.ui-schedule]\n"


def test_pending_fork_overdue_cold_history_and_no_redelivery_across_sigkills(
    tmp_path,
    store: Store,  # noqa: F811 - the imported fixture
):
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(SPEC_OVERLAY)

    boot1 = store.serve(overlay=overlay)
    try:
        pending = new_session(boot1)
        overdue = new_session(boot1)
        made = call_tool(
            boot1, pending, "schedule_create", {"prompt": PENDING, "after_seconds": 3600}
        )
        assert made["id"] == "schedule-1"
        made = call_tool(boot1, overdue, "schedule_create", {"prompt": OVERDUE, "after_seconds": 1})
        assert made["state"] == "scheduled"
        due_at = made["scheduledAt"]
    finally:
        store.sigkill(boot1)  # the success values above were already acknowledged
    due_ms = parse_instant(due_at)
    wait_for(lambda: time.time() * 1000 > due_ms)  # it falls due while no server runs

    boot2 = store.serve(overlay=overlay)
    try:
        assert live(boot2, pending) is False
        assert dispatches(events(boot2, overdue)) == []  # due while down, not yet delivered
        listed = call_tool(boot2, pending, "schedule_list", {})  # resumes the Session
        assert [(v["id"], v["prompt"], v["state"]) for v in listed] == [
            ("schedule-1", PENDING, "scheduled")
        ]
        child = boot2.http.post(f"/api/sessions/{pending}/fork", json={}).json()["id"]
        assert call_tool(boot2, child, "schedule_list", {}) == []  # the fork inherits none
        assert boot2.http.post(f"/api/sessions/{overdue}/resume").json() == {
            "id": overdue,
            "live": True,
        }
        wait_for(lambda: dispatches(events(boot2, overdue)))
        flushed = boot2.http.post(f"/api/sessions/{overdue}/flush").json()
        assert flushed["durable"] is True
        delivered = events(boot2, overdue)
        assert len(dispatches(delivered)) == 1
        assert call_tool(boot2, overdue, "schedule_list", {}) == []
        assert boot2.http.post(f"/api/sessions/{overdue}/flush").json()["durable"] is True
    finally:
        store.sigkill(boot2)

    boot3 = store.serve(overlay=overlay)
    try:
        cold = events(boot3, overdue)
        receipts = dispatches(cold)
        assert len(receipts) == 1
        assert receipts[0]["view"] == {
            "for": "event",
            "view": {
                "scheduleId": "schedule-1",
                "prompt": OVERDUE,
                "occurrenceAt": due_at,
                "deliveryMode": "session-local",
            },
        }
        assert live(boot3, overdue) is False  # cold history activated nothing
        assert live(boot3, pending) is False
    finally:
        store.sigkill(boot3)

    boot4 = store.serve(overlay=overlay)
    try:
        assert boot4.http.post(f"/api/sessions/{overdue}/resume").json()["live"] is True
        assert call_tool(boot4, overdue, "schedule_list", {}) == []
        assert boot4.http.post(f"/api/sessions/{overdue}/flush").json()["durable"] is True
        assert len(dispatches(events(boot4, overdue))) == 1
        followups = [e for e in events(boot4, overdue) if e["event"]["type"] == "agent/followup"]
        assert len(followups) == 1
        reminder_turns = [
            e
            for e in events(boot4, overdue)
            if e["event"]["type"] == "turn/start"
            and e["event"]["data"]["messageId"] == followups[0]["event"]["data"]["messageId"]
        ]
        assert len(reminder_turns) == 1
    finally:
        boot4.process.kill()
        boot4.close()
