"""The tools: shapes, values, closed error codes, flush counts, uncertainty, recovery."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Tool, ToolCall, ToolConflictError, hookimpl
from dsh_host.testing import wait_until
from dsh_schedule import MAX_AFTER_SECONDS, MAX_INSTANT_MS, MESSAGES
from dsh_schedule._runtime import ScheduleOwner

from .harness import START

UNCERTAIN = MESSAGES["persistence_uncertain"]


def view(schedule_id, prompt, after, at, state="scheduled"):
    return {
        "id": schedule_id,
        "kind": "after",
        "prompt": prompt,
        "afterSeconds": after,
        "scheduledAt": at,
        "state": state,
        "deliveryMode": "session-local",
    }


async def test_six_agent_scoped_tools_are_installed_and_disposed_together(h):
    agent = await h.agent()
    assert list(agent.tools.names()) == [
        "schedule_create",
        "schedule_list",
        "schedule_update",
        "schedule_delete",
        "schedule_ack",
        "schedule_snooze",
    ]
    assert h.host.tools.names() == ()  # never global
    titles = {agent.tools.get(n).title for n in agent.tools.names()}
    assert titles == {
        "Create reminder",
        "List reminders",
        "Edit reminder",
        "Delete reminder",
        "Mark reminder done",
        "Snooze reminder",
    }
    await agent.dispose()
    assert agent.tools.names() == ()


async def test_registration_rolls_back_on_a_later_name_conflict(h):
    agent = await h.agent()
    await agent.dispose()  # frees the agent's layer

    async def other(call):
        return None

    agent.tools.register(Tool(name="schedule_delete", description="", parameters={}, handler=other))
    with pytest.raises(ToolConflictError):
        h.plugin.tools.register(agent)
    assert agent.tools.names() == ("schedule_delete",)


async def test_one_set_of_tool_objects_serves_every_agent(h):
    one, two = await h.agent(), await h.agent()
    assert one.tools.get("schedule_list") is two.tools.get("schedule_list")
    await h.call(one, "schedule_create", {"prompt": "one", "after_seconds": 99})
    await h.call(two, "schedule_create", {"prompt": "two", "after_seconds": 99})
    assert [v["prompt"] for v in await h.call(one, "schedule_list", {})] == ["one"]
    assert [v["prompt"] for v in await h.call(two, "schedule_list", {})] == ["two"]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"prompt": "x", "after_seconds": 5, "at": "2026-01-01"}, "invalid_selector"),
        ({"prompt": "x", "after_seconds": 5, "every_seconds": 60}, "invalid_selector"),
        (
            {
                "prompt": "x",
                "after_seconds": 5,
                "cron": {"expression": "* * * * *", "time_zone": "UTC"},
            },
            "invalid_selector",
        ),
        ({"prompt": "x", "after_seconds": 5, "time_zone": "UTC"}, "invalid_selector"),
        ({"prompt": "   ", "after_seconds": 5}, "invalid_prompt"),
        ({"prompt": "", "after_seconds": 5}, "invalid_prompt"),
        ({"prompt": "x" * 4001, "after_seconds": 5}, "prompt_too_long"),
        ({"prompt": "x", "after_seconds": 0}, "invalid_rule"),
        ({"prompt": "x", "after_seconds": -3}, "invalid_rule"),
        ({"prompt": "x", "after_seconds": 1.5}, "invalid_rule"),
        ({"prompt": "x", "after_seconds": 2.0}, "invalid_rule"),
        ({"prompt": "x", "after_seconds": 2**53}, "invalid_rule"),
        # No selector: the schema requires only the prompt since three selectors exist (the
        # registry answered invalid_arguments while after_seconds was the only one).
        ({"prompt": "x"}, "invalid_selector"),
        ({"prompt": "x", "at": "2026-08-06T09:00:00Z", "every_seconds": 300}, "invalid_selector"),
        ({"prompt": "x", "after_seconds": 5, "at": "x", "every_seconds": 300}, "invalid_selector"),
        ({"prompt": "  ", "at": "not even parsed"}, "invalid_prompt"),
        ({"prompt": "  ", "every_seconds": 1.5}, "invalid_prompt"),
        ({"prompt": "x", "every_seconds": 1.5}, "invalid_every_rule"),
        ({"prompt": "x", "every_seconds": 300.0}, "invalid_every_rule"),
        ({"prompt": "x", "every_seconds": 2**53}, "invalid_every_rule"),
        ({"prompt": "x", "every_seconds": 299}, "frequency_too_high"),
        ({"prompt": "x", "every_seconds": 0}, "frequency_too_high"),
        ({"prompt": "x", "every_seconds": -600}, "frequency_too_high"),
        ({"prompt": "x", "every_seconds": -(2**53) + 1}, "frequency_too_high"),
    ],
)
async def test_shape_errors_are_answered_before_any_flush(h, arguments, code):
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_create", arguments)
    message_key = code
    if code == "invalid_every_rule":
        code = "invalid_rule"
    assert value == {"code": code, "message": MESSAGES[message_key]}
    assert flushes == 0
    assert h.changes(agent) == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"after_seconds": 5},
        {"prompt": "x", "after_seconds": True},
        {"prompt": 5, "after_seconds": 1},
        {"prompt": "x", "every_seconds": True},
        {"prompt": "x", "every_seconds": "300"},
        {"prompt": "x", "at": 42},
        {"prompt": "x", "at": None},
        {"prompt": "x", "at": ["2026-08-06T09:00:00Z"]},
        {"prompt": "x", "at": {"date": "2026-08-07", "time": "09:30:00"}},
        {"prompt": "x", "at": {"date": 20260807, "time": "09:30:00", "time_zone": "UTC"}},
        {"prompt": "x", "at": {"date": "2026-08-07", "time": "09:30", "time_zone": "UTC", "x": 1}},
    ],
)
async def test_argument_type_violations_are_the_registrys_not_the_domains(h, arguments):
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_create", arguments)
    assert value["code"] == "invalid_arguments"
    assert flushes == 0


async def test_prompt_is_trimmed_and_4000_characters_are_allowed(h):
    agent = await h.agent()
    value = await h.call(
        agent, "schedule_create", {"prompt": f"  {'y' * 4000}\n", "after_seconds": 1}
    )
    assert value["prompt"] == "y" * 4000


async def test_create_list_delete_with_exact_flush_counts(h):
    agent = await h.agent()
    created, flushes = await h.flushes(
        agent, "schedule_create", {"prompt": " Check the deploy ", "after_seconds": 20}
    )
    assert created == view("schedule-1", "Check the deploy", 20, "2026-08-05T12:00:20.000Z")
    assert flushes == 2
    listed, flushes = await h.flushes(agent, "schedule_list", {})
    assert listed == [created]
    assert flushes == 1
    deleted, flushes = await h.flushes(agent, "schedule_delete", {"id": "schedule-1"})
    assert deleted == {"id": "schedule-1", "deleted": True}
    assert flushes == 2
    missing, flushes = await h.flushes(agent, "schedule_delete", {"id": "schedule-1"})
    assert missing == {"id": "schedule-1", "deleted": False, "code": "schedule_not_found"}
    assert flushes == 1
    assert await h.call(agent, "schedule_list", {}) == []
    stored = await h.host.inspect(agent.session.id)
    assert [e.type for e in stored.events].count("schedule/change") == 2


async def test_list_derives_overdue_from_one_clock_sample(h):
    agent = await h.agent()
    await h.call(agent, "schedule_create", {"prompt": "a", "after_seconds": 5})
    await h.call(agent, "schedule_create", {"prompt": "b", "after_seconds": 50})
    await h.settle(agent)
    h.clock.suspend(5)  # wall clock only: the owner's timer has not fired
    listed = await h.call(agent, "schedule_list", {})
    assert [v["state"] for v in listed] == ["overdue", "scheduled"]


async def test_ids_are_never_reused(h):
    agent = await h.agent()
    for _ in range(2):
        await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 100})
    await h.call(agent, "schedule_delete", {"id": "schedule-2"})
    third = await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 100})
    assert third["id"] == "schedule-3"


@pytest.mark.parametrize("bad", ["", " schedule-1", "schedule-1 ", "\tx"])
async def test_padded_or_empty_delete_ids_are_refused_before_anything(h, bad):
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_delete", {"id": bad})
    assert value == {"code": "invalid_rule", "message": MESSAGES["invalid_delete_id"]}
    assert flushes == 0


async def test_range_error_only_after_the_preflight(h):
    agent = await h.agent()
    h.clock.set_wall(MAX_INSTANT_MS - 1_000)
    value, flushes = await h.flushes(agent, "schedule_create", {"prompt": "p", "after_seconds": 2})
    assert value == {"code": "time_out_of_range", "message": MESSAGES["time_out_of_range"]}
    assert flushes == 1
    ok = await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 1})
    assert ok["scheduledAt"] == "9999-12-31T23:59:59.999Z"


@pytest.mark.parametrize(
    "arguments",
    [
        {"prompt": "p", "after_seconds": MAX_AFTER_SECONDS + 1},
        {"prompt": "p", "after_seconds": 2**53 - 1},
        {"prompt": "p", "every_seconds": MAX_AFTER_SECONDS + 1},
        {"prompt": "p", "every_seconds": 2**53 - 1},
    ],
)
async def test_a_safe_integer_with_an_unrepresentable_target_is_out_of_range(h, arguments):
    # A positive safe integer is a valid rule: only its target cannot be written, which the
    # contract answers in the queue, after the preflight flush, and nothing is appended.
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_create", arguments)
    assert value == {"code": "time_out_of_range", "message": MESSAGES["time_out_of_range"]}
    assert flushes == 1
    assert h.changes(agent) == []


class FailingClock:
    def __init__(self, clock, fail_on):
        self.clock, self.fail_on, self.calls = clock, fail_on, 0

    def now_ms(self):
        self.calls += 1
        if self.calls in self.fail_on:
            raise RuntimeError("clock broke")
        return self.clock.now_ms()

    def time(self):  # the owner's arming clock keeps working: only the tools' reads fail
        return self.clock.time()

    def call_later(self, delay, callback):
        return self.clock.call_later(delay, callback)


async def test_clock_failure_during_list_is_an_internal_error(h):
    agent = await h.agent()
    await h.settle(agent)
    tools = h.plugin.tools
    h.host.clock = FailingClock(h.clock, {1})
    value = await tools.list(ToolCall(call_id="c", name="schedule_list", arguments={}, agent=agent))
    assert value == {"code": "internal_error", "message": MESSAGES["internal_error"]}
    h.host.clock = h.clock


@pytest.mark.parametrize("fail_on", [{1}, {2}])
async def test_clock_failure_is_an_internal_error(h, fail_on):
    agent = await h.agent()
    await h.settle(agent)
    tools = h.plugin.tools
    h.host.clock = FailingClock(h.clock, fail_on)
    value = await tools.create(
        ToolCall(
            call_id="c",
            name="schedule_create",
            arguments={"prompt": "p", "after_seconds": 9},
            agent=agent,
        )
    )
    assert value == {"code": "internal_error", "message": MESSAGES["internal_error"]}
    h.host.clock = h.clock


class BrokenOwner(ScheduleOwner):
    __slots__ = ()

    def request_drive(self):
        raise RuntimeError("projection bug")


async def test_owner_notification_failure_is_contained(h):
    agent = await h.agent()
    await h.settle(agent)
    tools = h.plugin.tools
    h.plugin.owners[agent] = BrokenOwner(agent, h.host, h.plugin.folds)
    call = ToolCall(
        call_id="c",
        name="schedule_create",
        arguments={"prompt": "p", "after_seconds": 9},
        agent=agent,
    )
    with capture_logs() as logs:
        value = await tools.create(call)
    assert value["id"] == "schedule-1"
    assert sum(e["event"] == "tools.notify_failed" for e in logs) == 2


@pytest.mark.parametrize("mode", ["false", "raise"])
async def test_missing_or_failing_persistence_is_uncertainty_before_reads(h, mode):
    agent = await h.agent()
    await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 99})
    h.flush.mode = mode
    create = await h.call(agent, "schedule_create", {"prompt": "q", "after_seconds": 9})
    assert create == {"code": "persistence_uncertain", "message": UNCERTAIN, "operation": "create"}
    assert await h.call(agent, "schedule_list", {}) == {
        "code": "persistence_uncertain",
        "message": UNCERTAIN,
        "operation": "list",
    }
    assert await h.call(agent, "schedule_delete", {"id": "schedule-1"}) == {
        "code": "persistence_uncertain",
        "message": UNCERTAIN,
        "operation": "delete",
        "id": "schedule-1",
    }
    assert len(h.changes(agent)) == 1  # nothing decided, nothing appended


async def test_create_barrier_rejection_reports_the_id_and_a_later_list_recovers(h):
    agent = await h.agent()
    await h.settle(agent)
    h.flush.once = ["ok", "raise"]
    value = await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 30})
    assert value == {
        "code": "persistence_uncertain",
        "message": UNCERTAIN,
        "operation": "create",
        "id": "schedule-1",
    }
    await h.settle(agent)
    listed = await h.call(agent, "schedule_list", {})
    assert [v["id"] for v in listed] == ["schedule-1"]
    stored = await h.host.inspect(agent.session.id)
    assert any(e.type == "schedule/change" for e in stored.events)
    # The owner was armed by the recovering preflight.
    await h.settle(agent)
    h.clock.advance(30)
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


async def test_delete_barrier_rejection_then_clarification(h):
    agent = await h.agent()
    await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 30})
    await h.settle(agent)
    h.flush.once = ["ok", "raise"]
    value = await h.call(agent, "schedule_delete", {"id": "schedule-1"})
    assert value["code"] == "persistence_uncertain"
    assert value["id"] == "schedule-1"
    again = await h.call(agent, "schedule_delete", {"id": "schedule-1"})
    assert again == {"id": "schedule-1", "deleted": False, "code": "schedule_not_found"}
    assert await h.call(agent, "schedule_list", {}) == []


async def test_concurrent_transactions_are_serialized_across_both_barriers(h):
    agent = await h.agent()
    await h.settle(agent)
    order: list[int] = []
    h.flush.before = order.append
    h.flush.mode = "gate"
    first = asyncio.create_task(
        h.call(agent, "schedule_create", {"prompt": "a", "after_seconds": 9})
    )
    second = asyncio.create_task(
        h.call(agent, "schedule_create", {"prompt": "b", "after_seconds": 9})
    )
    await wait_until(lambda: len(order) >= 1)
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(order) == 1  # the second create waits in the FIFO, not in a flush
    h.flush.mode = "ok"
    h.flush.gate.set()
    a, b = await asyncio.gather(first, second)
    assert (a["id"], b["id"]) == ("schedule-1", "schedule-2")
    creates = [c["schedule"]["id"] for c in h.changes(agent)]
    assert creates == ["schedule-1", "schedule-2"]


async def test_no_fold_of_an_unconfirmed_corrupt_suffix(h):
    agent = await h.agent()
    await h.settle(agent)
    h.flush.mode = "false"
    # Whatever the live suffix holds, an unconfirmed preflight answers uncertainty first.
    assert (await h.call(agent, "schedule_list", {}))["code"] == "persistence_uncertain"


class RejectChanges:
    """A plugin whose validator refuses every schedule/change append (an append failure)."""

    @hookimpl
    def dsh_event_validate(self, session, event):
        if event.type == "schedule/change":
            raise RuntimeError("storage policy refuses this event")


async def test_append_failures_are_internal_errors(h):
    agent = await h.agent()
    await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 99})
    h.host.load_plugin("reject", factory=RejectChanges)
    create = await h.call(agent, "schedule_create", {"prompt": "q", "after_seconds": 9})
    assert create == {"code": "internal_error", "message": MESSAGES["internal_error"]}
    delete = await h.call(agent, "schedule_delete", {"id": "schedule-1"})
    assert delete == {"code": "internal_error", "message": MESSAGES["internal_error"]}


async def test_calls_from_agents_without_an_installed_owner_are_refused(h):
    one = await h.agent()
    child = h.host.agents.create_child(one)  # children never get an owner
    gone = await h.agent()
    await gone.dispose()
    impostor = await h.agent()
    h.plugin.owners[impostor] = h.owner(one)  # an owner that belongs to another Agent
    await h.settle(one)
    tools = h.plugin.tools
    for caller in (child, gone, impostor):
        for handler, arguments in (
            (tools.create, {"prompt": "p", "after_seconds": 9}),
            (tools.list, {}),
            (tools.delete, {"id": "schedule-1"}),
        ):
            call = ToolCall(call_id="c", name="x", arguments=arguments, agent=caller)
            value = await handler(call)
            assert value == {"code": "internal_error", "message": MESSAGES["internal_error"]}
    assert h.changes(one) == []
    assert [e.type for e in child.session.events if e.type == "schedule/change"] == []


async def test_too_many_active_is_decided_after_the_preflight_from_the_fold(h):
    await h.host.unload_plugin("schedule")
    h.host.load_plugin("schedule", {"max_active": 2})
    agent = await h.agent()
    for _ in range(2):
        await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 99})
    value, flushes = await h.flushes(agent, "schedule_create", {"prompt": "p", "after_seconds": 99})
    # Fails before this fix: the message quoted the default limit (1000), not the configured 2.
    assert value == {
        "code": "too_many_active",
        "message": "This session already holds 2 active reminders; delete one first.",
    }
    assert flushes == 1
    await h.call(agent, "schedule_delete", {"id": "schedule-1"})
    assert (await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 9}))[
        "id"
    ] == "schedule-3"


async def test_prompt_too_long_quotes_the_configured_limit(h):
    await h.host.unload_plugin("schedule")
    h.host.load_plugin("schedule", {"max_prompt_chars": 10})
    agent = await h.agent()
    value = await h.call(agent, "schedule_create", {"prompt": "x" * 11, "after_seconds": 9})
    assert value == {
        "code": "prompt_too_long",
        "message": "prompt must be at most 10 characters after trimming.",
    }
    assert h.changes(agent) == []


async def test_every_value_is_rendered_through_the_tool_pipeline_as_json(h):
    agent = await h.agent()
    agent.send('/tool schedule_create {"prompt": "Check the deployment log", "after_seconds": 1}')
    await h.settle(agent)
    result = next(e for e in agent.session.events if e.type == "tool/result")
    assert result.data["value"] == view(
        "schedule-1", "Check the deployment log", 1, "2026-08-05T12:00:01.000Z"
    )
    assert START.startswith("2026-08-05")
