"""Model adapters: the keyless ``scripted`` demo model and the ``none`` adapter (DESIGN section 4).

``scripted`` is deterministic:

* ``/tool NAME {json}`` calls that tool with those arguments, then replies with the result;
* "remind me in N seconds|minutes|hours to TEXT", "list reminders" and "delete schedule-N" map
  to ``schedule_create``, ``schedule_list`` and ``schedule_delete``;
* a ``[SCHEDULE REMINDER]`` follow-up is presented to the user as the reminder;
* anything else gets a short help text.

``none`` fails every turn with a visible error.
"""

from __future__ import annotations

import re

from dsh_hookspecs import JSONValue

from . import _json
from ._agent import ModelAdapter, Turn


class ModelUnavailableError(RuntimeError):
    """The ``none`` adapter: no model is configured."""


class NoModel:
    name = "none"

    async def run_turn(self, turn: Turn) -> None:  # noqa: ARG002 - the adapter protocol
        raise ModelUnavailableError("no model is configured (--model none); this turn cannot run")


_TOOL = re.compile(r"^/tool\s+(?P<name>[A-Za-z0-9_.\-]+)(?:\s+(?P<args>.*))?$", re.DOTALL)
_REMIND = re.compile(
    r"^\s*remind me in\s+(?P<n>\d{1,9})\s*(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|h)"
    r"\s+(?:to\s+)?(?P<text>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LIST = re.compile(r"^\s*(?:list|show)\s+(?:my\s+)?reminders?\s*[.!?]?\s*$", re.IGNORECASE)
_DELETE = re.compile(
    r"^\s*(?:delete|cancel|remove)\s+(?:reminder\s+)?(?P<id>\S+?)\s*[.!?]?\s*$", re.IGNORECASE
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}

HELP = (
    'I am the scripted demo model. Try "remind me in 10 seconds to stretch", '
    '"list reminders", "delete schedule-1", or "/tool NAME {json}".'
)


class ScriptedModel:
    name = "scripted"

    async def run_turn(self, turn: Turn) -> None:
        text = turn.message.text
        if text.startswith("[SCHEDULE REMINDER]"):
            turn.say(_present_reminder(text))
            return
        match = _TOOL.match(text.strip())
        if match:
            raw = (match["args"] or "{}").strip()
            try:
                arguments = _json.loads(raw)
            except _json.JSONError as exc:
                turn.say(f"Those tool arguments are not valid JSON: {exc}")
                return
            value = await turn.call_tool(match["name"], arguments)
            turn.say(_json.dumps(value))
            return
        match = _REMIND.match(text)
        if match:
            unit = match["unit"].lower()[0]
            seconds = int(match["n"]) * _UNIT_SECONDS[unit]
            value = await turn.call_tool(
                "schedule_create", {"prompt": match["text"], "after_seconds": seconds}
            )
            turn.say(_describe_create(value))
            return
        if _LIST.match(text):
            value = await turn.call_tool("schedule_list", {})
            turn.say(_describe_list(value))
            return
        match = _DELETE.match(text)
        if match:
            value = await turn.call_tool("schedule_delete", {"id": match["id"]})
            turn.say(_describe_delete(value))
            return
        turn.say(HELP)


def _error(value: JSONValue) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("code"), str) and "deleted" not in value:
        message = value.get("message")
        return f"{value['code']}: {message}" if isinstance(message, str) else str(value["code"])
    return None


def _describe_create(value: JSONValue) -> str:
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"I could not create that reminder ({problem})."
    return (
        f"Done: reminder {value.get('id')} is due at {value.get('scheduledAt')} "
        f'("{value.get("prompt")}"). It is delivered in this session only.'
    )


def _describe_list(value: JSONValue) -> str:
    problem = _error(value)
    if problem or not isinstance(value, list):
        return f"I could not list reminders ({problem})."
    if not value:
        return "You have no active reminders in this session."
    lines = [
        f'- {item.get("id")}: "{item.get("prompt")}" at {item.get("scheduledAt")} '
        f"({item.get('state')})"
        for item in value
        if isinstance(item, dict)
    ]
    return "\n".join(["Active reminders in this session:", *lines])


def _describe_delete(value: JSONValue) -> str:
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"I could not delete that reminder ({problem})."
    if value.get("deleted") is True:
        return f"Deleted reminder {value.get('id')}."
    return f"There is no active reminder {value.get('id')}."


def _present_reminder(frame: str) -> str:
    prompt: JSONValue = None
    for line in frame.split("\n"):
        if line.startswith("reminder_prompt_json: "):
            try:
                prompt = _json.loads(line.removeprefix("reminder_prompt_json: "))
            except _json.JSONError:
                prompt = None
    if not isinstance(prompt, str):
        return "A reminder is due, but its text could not be read."
    return f"Reminder: {prompt}"


def make_model(name: str) -> ModelAdapter:
    if name == "scripted":
        return ScriptedModel()
    if name == "none":
        return NoModel()
    raise ValueError(f"unknown model adapter {name!r} (choose scripted or none)")
