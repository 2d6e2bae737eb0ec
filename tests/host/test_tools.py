"""Tool layers and argument validation through the Agent's tool pipeline."""

from __future__ import annotations

import pytest

from dsh_hookspecs import Tool, ToolConflictError
from dsh_host import SchemaError, ToolLayer
from dsh_host import validate_arguments as validate

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "name": {"type": "string"},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["count"],
    "additionalProperties": False,
}


def echo_tool(name="echo", schema=None, calls=None):
    async def handler(call):
        if calls is not None:
            calls.append(call)
        return {"echo": call.arguments, "agent": call.agent.id}

    return Tool(name=name, description="echo", parameters=schema or SCHEMA, handler=handler)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"count": True}, "$.count must be of type integer"),
        ({"count": 1.0}, "$.count must be of type integer"),
        ({"count": "5"}, "$.count must be of type integer"),
        ({"count": 1, "ratio": False}, "$.ratio must be of type number"),
        ({"count": 1, "flag": 1}, "$.flag must be of type boolean"),
        ({"count": 1, "mode": "c"}, "$.mode must be one of"),
        ({"count": 1, "tags": ["x", 2]}, "$.tags[1] must be of type string"),
        ({"count": 1, "extra": 1}, "unexpected properties ['extra']"),
        ({}, "$.count is required"),
    ],
)
def test_validation_is_strict(arguments, problem):
    message = validate(SCHEMA, arguments)
    assert message is not None
    assert problem in message


def test_valid_arguments_pass():
    assert validate(SCHEMA, {"count": 3, "ratio": 1, "name": "n", "flag": False}) is None
    assert validate(SCHEMA, {"count": 3, "ratio": 0.5, "mode": "a", "tags": []}) is None


def test_schemas_with_unsupported_keywords_are_refused():
    with pytest.raises(SchemaError):
        ToolLayer().register(echo_tool(schema={"type": "object", "oneOf": []}))
    with pytest.raises(SchemaError):
        ToolLayer().register(echo_tool(schema={"type": "tuple"}))


AT_SCHEMA = {
    "type": "object",
    "properties": {
        "at": {
            "oneOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "date": {"type": "string"},
                        "time": {"type": "string"},
                        "time_zone": {"type": "string"},
                    },
                    "required": ["date", "time", "time_zone"],
                },
            ]
        }
    },
}
LOCAL = {"date": "2026-08-07", "time": "09:30:00", "time_zone": "Asia/Shanghai"}


@pytest.mark.parametrize(
    "at", ["2026-08-06T09:00:00+08:00", "not checked here", LOCAL], ids=["offset", "any", "local"]
)
def test_one_of_accepts_a_value_matching_exactly_one_branch(at):
    assert validate(AT_SCHEMA, {"at": at}) is None
    assert validate(AT_SCHEMA, {}) is None  # an optional property may be absent


@pytest.mark.parametrize(
    "at",
    [
        {**LOCAL, "extra": "x"},
        {"date": "2026-08-07", "time": "09:30:00"},
        {**LOCAL, "date": 20260807},
        42,
        None,
        [],
        ["2026-08-06T09:00:00Z"],
        True,
    ],
    ids=["extra key", "no time_zone", "numeric date", "number", "null", "array", "list", "true"],
)
def test_one_of_refuses_a_value_matching_no_branch(at):
    assert validate(AT_SCHEMA, {"at": at}) == "$.at must match exactly one of its 2 schemas"


def test_one_of_refuses_a_value_matching_two_branches():
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    assert validate(schema, 5) == "$ must match exactly one of its 2 schemas"
    assert validate(schema, 5.5) is None
    assert validate(schema, True) is not None  # JSON true is never a number


@pytest.mark.parametrize(
    "schema",
    [
        {"oneOf": "string"},
        {"oneOf": []},
        {"oneOf": [{"type": "tuple"}]},
        {"properties": {"at": {"oneOf": [{"type": "string"}, {"format": "date"}]}}},
    ],
)
def test_one_of_branches_are_checked_at_registration(schema):
    with pytest.raises(SchemaError):
        ToolLayer().register(echo_tool(schema=schema))


def test_a_schema_with_one_of_registers():
    layer = ToolLayer()
    layer.register(echo_tool(schema=AT_SCHEMA))
    assert layer.names() == ("echo",)


def test_duplicate_names_in_one_layer_are_refused_and_disposers_are_idempotent():
    layer = ToolLayer()
    first = echo_tool()
    dispose = layer.register(first)
    with pytest.raises(ToolConflictError):
        layer.register(echo_tool())
    dispose()
    dispose()
    assert layer.get("echo") is None
    again = echo_tool()
    dispose_again = layer.register(again)
    dispose()  # the old disposer must not remove the new registration
    assert layer.get("echo") is again
    dispose_again()
    assert layer.names() == ()


async def test_agent_layer_shadows_the_global_layer_for_that_agent_only(host):
    one = await host.create_session()
    two = await host.create_session()

    async def global_handler(call):
        return "global"

    async def local_handler(call):
        return "local"

    host.tools.register(Tool(name="t", description="", parameters={}, handler=global_handler))
    one.tools.register(Tool(name="t", description="", parameters={}, handler=local_handler))
    assert await one.execute_tool("t", {}) == "local"
    assert await two.execute_tool("t", {}) == "global"


async def test_pipeline_records_call_and_result_and_validates_before_the_body(host):
    agent = await host.create_session()
    calls = []
    agent.tools.register(echo_tool(calls=calls))
    bad = await agent.execute_tool("echo", {"count": True}, call_id="c1")
    assert bad == {"code": "invalid_arguments", "message": "$.count must be of type integer"}
    assert calls == []
    good = await agent.execute_tool("echo", {"count": 2}, call_id="c2")
    assert good == {"echo": {"count": 2}, "agent": agent.id}
    assert calls[0].agent is agent
    events = [e for e in agent.session.events if e.type.startswith("tool/")]
    assert [e.data for e in events] == [
        {"callId": "c1", "name": "echo", "arguments": {"count": True}},
        {"callId": "c1", "name": "echo", "value": bad},
        {"callId": "c2", "name": "echo", "arguments": {"count": 2}},
        {"callId": "c2", "name": "echo", "value": good},
    ]


async def test_unknown_tool_and_non_object_arguments_are_values(host):
    agent = await host.create_session()
    missing = await agent.execute_tool("nope", {})
    assert missing["code"] == "unknown_tool"
    agent.tools.register(echo_tool())
    assert (await agent.execute_tool("echo", [1]))["code"] == "invalid_arguments"


async def test_a_raising_tool_body_is_contained(host):
    agent = await host.create_session()

    async def broken(call):
        raise RuntimeError("secret backend detail")

    async def not_json(call):
        return {"x": float("nan")}

    agent.tools.register(Tool(name="broken", description="", parameters={}, handler=broken))
    agent.tools.register(Tool(name="nan", description="", parameters={}, handler=not_json))
    for name in ("broken", "nan"):
        value = await agent.execute_tool(name, {})
        assert value["code"] == "tool_failed"
        assert "secret" not in value["message"]


async def test_unstorable_arguments_are_a_value_not_an_exception(host):
    agent = await host.create_session()
    agent.tools.register(echo_tool(schema={"type": "object"}))
    deep: object = "leaf"
    for _ in range(300):
        deep = [deep]
    for arguments in ({"x": deep}, {"s": "lone \ud800"}, {"n": 10**5000}):
        value = await agent.execute_tool("echo", arguments)
        assert value["code"] == "invalid_arguments"
    calls = [e.data for e in agent.session.events if e.type == "tool/call"]
    assert [c["arguments"] for c in calls] == [None, None, None]
    assert await host.sessions.flush(agent.session) is True  # the log stays storable


def test_a_schema_is_checked_once_yet_a_bad_one_is_refused_every_time() -> None:
    # Each Agent registers the same Tool objects: the check of a sound schema is remembered
    # (by identity, a bounded memo), a refused one never is.
    bad = echo_tool("bad", {"type": "object", "patternProperties": {}})
    for _ in range(2):
        with pytest.raises(SchemaError):
            ToolLayer().register(bad)
    tools = [  # more than the memo holds: it starts over, still correct
        echo_tool(f"t{i}", {"type": "object", "properties": {}}) for i in range(300)
    ]
    for tool in tools:
        ToolLayer().register(tool)
    layer = ToolLayer()
    for tool in tools:
        layer.register(tool)
    assert layer.names() == tuple(f"t{i}" for i in range(300))
