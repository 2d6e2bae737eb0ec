"""A model failure after the dispatch does not retract the receipt (the ``none`` adapter)."""

from __future__ import annotations

from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until
from dsh_host.web import history_page


async def test_none_model_turn_fails_after_dispatch_and_the_receipt_stays():
    clock = ManualClock()
    async with LiveHost(backend=MemoryBackend(), clock=clock, model="none") as host:
        host.load_plugin("schedule")
        agent = await host.create_session()
        created = await agent.execute_tool(
            "schedule_create", {"prompt": "Check the deployment log", "after_seconds": 1}
        )
        assert created["id"] == "schedule-1"
        await wait_until(lambda: host.plugins.pm.get_plugin("schedule").owners[agent]._run is None)
        clock.advance(1)
        session = agent.session
        await wait_until(
            lambda: any(
                e.type == "turn/end" and e.data["outcome"] == "error" for e in session.events
            )
        )
        end = next(e for e in session.events if e.type == "turn/end")
        assert "no model is configured" in end.data["error"]
        assert await host.sessions.flush(session) is True
        page = await history_page(host, session.id, before_seq=None, max_messages=50)
        views = [
            entry["view"]
            for entry in page["entries"]
            if entry["event"]["type"] == "schedule/change" and "view" in entry
        ]
        assert views == [
            {
                "for": "event",
                "view": {
                    "scheduleId": "schedule-1",
                    "prompt": "Check the deployment log",
                    "occurrenceAt": "2026-08-05T12:00:01.000Z",
                    "deliveryMode": "session-local",
                },
            }
        ]
