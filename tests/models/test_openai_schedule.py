"""The ``openai`` adapter with the Schedule plugin (issue 12 item 2): the model's
``schedule_create`` runs through the pipeline, and the reminder's follow-up reaches the next
request's messages as a user message carrying its framing verbatim."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

from dsh_hookspecs import load_time_zone
from dsh_host import Overlay
from dsh_host.testing import wait_until

from .conftest import MakeHost, ask, of
from .fake_openai import FakeOpenAI, text, tool_calls

OVERLAY = Path(__file__).resolve().parents[2] / "examples" / "web-schedule" / "overlay.toml"


async def _follow_up(
    fake: FakeOpenAI, make_host: MakeHost, arguments: dict[str, Any], *, within: float
) -> tuple[list[Any], dict[str, Any]]:
    """Have the fake model create a reminder with ``arguments``; wait for the follow-up turn's
    request. Returns the create's result and that request's body."""
    pieces = json.dumps(arguments)
    middle = len(pieces) // 2
    fake.script(
        tool_calls(("create-1", "schedule_create", [pieces[:middle], pieces[middle:]])),
        text("Reminder set."),
        text("Time to drink water!"),
    )
    host = await make_host(overlay=Overlay.load(OVERLAY))
    agent = await host.create_session()
    events = await ask(host, agent, "remind me to drink water")
    created = of(events, "tool/result")
    await wait_until(
        lambda: (
            len(fake.requests) == 3
            and agent.phase == "idle"
            and of(list(agent.session.events), "assistant/message")[-1]["text"]
            == "Time to drink water!"
        ),
        timeout=within,
    )
    follow_up = [
        event.data
        for event in agent.session.events
        if event.type == "user/message" and isinstance(event.data, dict) and "source" in event.data
    ]
    body = fake.requests[2].body
    assert len(follow_up) == 1
    assert body["messages"][-1] == {"role": "user", "content": follow_up[0]["text"]}
    return created, body


async def test_a_reminders_follow_up_reaches_the_model_with_its_framing(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    created, body = await _follow_up(
        fake, make_host, {"prompt": "drink water", "after_seconds": 1}, within=15
    )
    assert created[0]["name"] == "schedule_create"
    assert created[0]["value"]["state"] == "scheduled"
    framing = body["messages"][-1]["content"]
    assert framing.startswith("[SCHEDULE REMINDER]")
    assert "drink water" in framing
    # The follow-up's turn is told UTC: the user's zone went only to the user's own turn.
    assert "The user's time zone is unknown for this turn" in body["messages"][0]["content"]
    # The whole earlier exchange came along: the create, its result, the confirmation.
    roles = [message["role"] for message in body["messages"][1:]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    names = [tool["function"]["name"] for tool in body["tools"]]
    assert {"schedule_create", "schedule_list", "schedule_delete"} <= set(names)


async def test_an_at_reminder_in_a_named_zone_fires_and_reaches_the_model(
    fake: FakeOpenAI, make_host: MakeHost
) -> None:
    berlin = load_time_zone("Europe/Berlin")
    target = dt.datetime.fromtimestamp(int(time.time()) + 3, tz=berlin)
    at = {"date": f"{target:%Y-%m-%d}", "time": f"{target:%H:%M:%S}", "time_zone": "Europe/Berlin"}
    created, body = await _follow_up(
        fake, make_host, {"prompt": "drink water", "at": at}, within=20
    )
    value = created[0]["value"]
    assert value["kind"] == "at"
    assert value["state"] == "scheduled"
    utc = target.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert value["scheduledAt"] == utc
    framing = body["messages"][-1]["content"]
    assert framing.startswith("[SCHEDULE REMINDER]")
    assert "drink water" in framing
