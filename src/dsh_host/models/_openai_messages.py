"""The ``openai`` adapter's request body: a Session's transcript as chat messages, trimmed to the
context budget, and the Agent's tools as functions.

* ``user/message`` -> a ``user`` message (a plugin follow-up's text verbatim: it carries its own
  framing);
* ``assistant/message`` -> an ``assistant`` message;
* consecutive ``tool/call`` events -> one ``assistant`` message with ``tool_calls`` (an
  ``assistant/message`` said just before them is that message's content), and each
  ``tool/result`` -> a ``tool`` message with ``tool_call_id`` = the call's id and the value as
  compact JSON. A call is sent only with its result, and a result only with its call;
* a tool call the user ran from the page (``"source": {"kind": "user"}``, outside any turn) and
  its result -> one ``user`` message ``[USER ACTION] ...`` naming the tool, its arguments and
  its result (the model did not make that call, so it is not one of its ``tool_calls``);
* ``turn/end`` with outcome ``cancelled`` (the user pressed Stop) -> one ``user`` message
  :data:`STOPPED_NOTE` (``[USER ACTION] ...``), so the model knows that reply was cut short on
  purpose; other outcomes (``ok``, and ``error``: a failure the model need not hear of) are
  skipped;
* every other event type is not the model's business and is skipped.

The budget counts the characters of the serialized messages: the oldest whole exchanges (an
exchange starts at a user message) go first; the current exchange is always kept. A call and its
result always sit in one exchange, so trimming never splits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_hookspecs import Event, JSONValue, Tool

from .. import _json

__all__ = [
    "STOPPED_NOTE",
    "SYSTEM_PROMPT",
    "chat_messages",
    "function_tools",
    "transcript_messages",
]

#: The system message's first line; the turn's time context follows it.
SYSTEM_PROMPT = (
    "You are the assistant of a dsh Session: a conversation that can keep reminders and other "
    "durable state through the tools you are offered. Use a tool when the user asks for what it "
    "does, and answer in the user's language. A user message that starts with a bracketed "
    "marker in capitals was written by this host, not typed by the user: do what a plugin's "
    "message asks; [USER ACTION] tells you what the user did on the page themselves (it needs "
    "no answer of its own)."
)

#: What the model is told of a turn the user stopped (``turn/end {"outcome": "cancelled"}``).
STOPPED_NOTE = (
    "[USER ACTION] On the page, the user stopped the reply to the message above before it "
    "finished; anything not shown above was not kept."
)

Message = dict[str, Any]


def _arguments_text(arguments: JSONValue) -> str:
    """A recorded call's arguments as the ``arguments`` string of a function call.

    An object is its compact JSON. Arguments the model sent that were not a JSON object were
    recorded as their raw text (or ``null``): they go back as a JSON value too (a quoted string),
    so every server can parse the history while the model still sees what it sent.
    """
    return _json.dumps(arguments)


def transcript_messages(events: Sequence[Event]) -> list[Message]:
    """The chat messages (no system message) the transcript ``events`` map to."""
    calls = {
        event.data.get("callId")
        for event in events
        if event.type == "tool/call" and isinstance(event.data, dict)
    }
    results = {
        event.data.get("callId")
        for event in events
        if event.type == "tool/result" and isinstance(event.data, dict)
    }
    paired = calls & results
    messages: list[Message] = []
    calling: Message | None = None  # the assistant message the current run of calls joins
    by_user: dict[object, dict[str, Any]] = {}  # the user's own calls awaiting their result
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue
        if data.get("callId") in by_user and event.type == "tool/result":
            call = by_user.pop(data.get("callId"))
            messages.append({"role": "user", "content": _user_action(call, data.get("value"))})
            calling = None
        elif _by_user(event) and data.get("callId") in paired:
            by_user[data.get("callId")] = data
        elif event.type in ("user/message", "assistant/message"):
            role = "user" if event.type == "user/message" else "assistant"
            messages.append({"role": role, "content": str(data.get("text", ""))})
            calling = None
        elif event.type == "tool/call" and data.get("callId") in paired:
            if calling is None:
                last = messages[-1] if messages else None
                if last is not None and last["role"] == "assistant" and "tool_calls" not in last:
                    calling = last
                else:
                    calling = {"role": "assistant", "content": None}
                    messages.append(calling)
                calling["tool_calls"] = []
            calling["tool_calls"].append(
                {
                    "id": str(data["callId"]),
                    "type": "function",
                    "function": {
                        "name": str(data.get("name", "")),
                        "arguments": _arguments_text(data.get("arguments")),
                    },
                }
            )
        elif event.type == "tool/result" and data.get("callId") in paired:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": str(data["callId"]),
                    "content": _json.dumps(data.get("value")),
                }
            )
        elif event.type == "turn/start":
            calling = None
        elif event.type == "turn/end" and data.get("outcome") == "cancelled":
            messages.append({"role": "user", "content": STOPPED_NOTE})
            calling = None
    return messages


def _by_user(event: Event) -> bool:
    """Whether ``event`` is a tool call the user made (not the model)."""
    data = event.data
    source = data.get("source") if isinstance(data, dict) else None
    return event.type == "tool/call" and isinstance(source, dict) and source.get("kind") == "user"


def _user_action(call: dict[str, Any], value: JSONValue) -> str:
    """What the model is told of a tool the user ran from the page."""
    return (
        f"[USER ACTION] On the page, the user ran the tool {call.get('name', '')} with "
        f"{_arguments_text(call.get('arguments'))}; its result: {_json.dumps(value)}"
    )


def _exchanges(messages: list[Message]) -> list[list[Message]]:
    """``messages`` cut before each user message (what precedes the first one is an exchange)."""
    exchanges: list[list[Message]] = []
    for message in messages:
        if message["role"] == "user" or not exchanges:
            exchanges.append([])
        exchanges[-1].append(message)
    return exchanges


def _size(messages: Sequence[Message]) -> int:
    return sum(len(_json.dumps(message)) for message in messages)


def chat_messages(system: str, events: Sequence[Event], budget: int) -> list[Message]:
    """The system message, then the transcript's messages without the oldest whole exchanges
    that do not fit in ``budget`` characters; the newest exchange stays even when it alone does
    not fit."""
    head: Message = {"role": "system", "content": system}
    exchanges = _exchanges(transcript_messages(events))
    sizes = [_size(exchange) for exchange in exchanges]
    total = _size([head]) + sum(sizes)
    first = 0
    while first < len(exchanges) - 1 and total > budget:
        total -= sizes[first]
        first += 1
    return [head, *(message for exchange in exchanges[first:] for message in exchange)]


def function_tools(tools: Sequence[Tool]) -> list[Message]:
    """The Agent's tools as chat-completions ``tools`` entries."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]
