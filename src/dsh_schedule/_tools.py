"""The model-facing tools: ``schedule_create``, ``schedule_list``, ``schedule_delete``.

The tools parse arguments and word answers; the calling Agent's owner runs the transaction
(:mod:`._transactions`: preflight, decision from the fold, append, barrier). Shape errors are
answered before the Agent's schedule FIFO and without a flush; a checkpoint that was not
acknowledged answers ``persistence_uncertain`` instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from dsh_hookspecs import Agent, JSONValue, Tool, ToolCall, ToolConflictError

from ._codec import MIN_EVERY_SECONDS
from ._instants import MAX_SAFE_INTEGER
from ._runtime import ScheduleOwner
from ._transactions import Refused, Selector, Uncertain

#: A prompt longer than this (after trimming) is refused with ``prompt_too_long``.
MAX_PROMPT_CHARS: Final = 4000
#: A Session holding this many active reminders refuses another with ``too_many_active``.
MAX_ACTIVE: Final = 1000

#: The fixed messages of the two bounds, quoting the configured limit.
PROMPT_TOO_LONG: Final = "prompt must be at most {} characters after trimming."
TOO_MANY_ACTIVE: Final = "This session already holds {} active reminders; delete one first."

MESSAGES: Final = {
    "invalid_prompt": "prompt must be non-empty after trimming.",
    "invalid_selector": (
        "schedule_create accepts exactly one of after_seconds, at, or every_seconds."
    ),
    "invalid_rule": "after_seconds must be a positive safe integer.",
    "invalid_every_rule": "every_seconds must be a safe integer.",
    "frequency_too_high": f"every_seconds must be at least {MIN_EVERY_SECONDS}.",
    "invalid_time_zone": "time_zone must be UTC or a valid IANA Area/Location name.",
    "not_future": "The scheduled time must be strictly in the future.",
    "invalid_delete_id": ("schedule_delete id must be non-empty without surrounding whitespace."),
    "time_out_of_range": (
        "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
    ),
    "corrupt_schedule_log": "The session schedule log is corrupt.",
    "persistence_uncertain": (
        "Schedule persistence is uncertain; retry with schedule_list before relying on this result."
    ),
    "internal_error": "The schedule operation failed.",
    "prompt_too_long": PROMPT_TOO_LONG.format(MAX_PROMPT_CHARS),
    "too_many_active": TOO_MANY_ACTIVE.format(MAX_ACTIVE),
}


def error(code: str, *, message_key: str | None = None) -> dict[str, JSONValue]:
    return {"code": code, "message": MESSAGES[message_key or code]}


def uncertain(operation: str, schedule_id: str | None = None) -> dict[str, JSONValue]:
    value = error("persistence_uncertain")
    value["operation"] = operation
    if schedule_id is not None:
        value["id"] = schedule_id
    return value


CREATE_DESCRIPTION = (
    "Create one reminder in this conversation from a non-empty prompt and exactly one selector. "
    "after_seconds: a positive safe-integer delay in seconds, for relative requests ('in 10 "
    "minutes' is 600). at: an absolute target, either a strict RFC 3339 string with an explicit "
    "offset ('2026-08-06T09:00:00+08:00' or '...Z') or a local calendar object {date: "
    "'YYYY-MM-DD', time: 'HH:mm:ss', time_zone: IANA name such as 'Europe/Berlin' or 'UTC'}. "
    "For a wall-clock request like 'tomorrow at 9', work out the date from the current time "
    "you are given and pass {date, time, time_zone} in the user's time zone (the one the time "
    "context names); if no zone is known, ask the user or use an explicit-offset string they "
    "confirmed. every_seconds: a fixed-rate safe-integer interval of at least 300 seconds, for "
    "recurring requests ('every 30 minutes' is 1800); it first fires one interval after "
    "creation, stays aligned to creation, skips missed occurrences and delivers only the "
    "latest one when overdue. Delivery is session-local: into this session only, while the "
    "session is open; if the session is closed when a reminder falls due, it is delivered "
    "once the session is opened again."
)
LIST_DESCRIPTION = (
    "List every active reminder of this session in creation order, with its id, kind (after, "
    "at or every), UTC target (scheduledAt; for a recurring reminder, its next occurrence), "
    "state (scheduled or overdue) and session-local delivery."
)
DELETE_DESCRIPTION = (
    "Delete one active reminder of this session by its exact id (a recurring reminder stops "
    "for good). An unknown or already finished id returns deleted: false."
)

#: The three selectors; a create takes exactly one.
SELECTORS: Final = ("after_seconds", "at", "every_seconds")

CREATE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "prompt": {
            "type": "string",
            "description": "Reminder content to present when the target becomes due.",
        },
        "after_seconds": {
            "type": "number",
            "description": "Positive safe-integer delay in seconds.",
        },
        "every_seconds": {
            "type": "number",
            "description": "Fixed-rate safe-integer interval in seconds, at least 300.",
        },
        "at": {
            "description": (
                "Absolute target: a strict RFC 3339 date-time with an explicit Z or numeric "
                "offset, or a local date and time with an explicit IANA time zone."
            ),
            "oneOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "date": {"type": "string", "description": "Local date, YYYY-MM-DD."},
                        "time": {
                            "type": "string",
                            "description": "Local time, HH:mm:ss with optional .sss.",
                        },
                        "time_zone": {
                            "type": "string",
                            "description": "UTC or an IANA Area/Location name.",
                        },
                    },
                    "required": ["date", "time", "time_zone"],
                },
            ],
        },
    },
    "required": ["prompt"],
}
LIST_PARAMETERS: Final = {"type": "object", "properties": {}}
DELETE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Exact session-local schedule id."},
    },
    "required": ["id"],
}


def _selector_problem(selector: Selector) -> dict[str, JSONValue] | None:
    """The answer to an integer selector that is refused before the queue (``at`` is checked
    only inside it, at the creation sample).

    Only the shape is checked here: a positive safe integer of seconds whose target is not
    representable (``after_seconds`` of 9,007,199,254,740,991) passes, and is answered
    ``time_out_of_range`` in the queue after the preflight flush, as is ``every_seconds``."""
    name, value = selector
    if name == "after_seconds":
        if type(value) is not int or not 0 < value <= MAX_SAFE_INTEGER:
            return error("invalid_rule")
    elif name == "every_seconds":
        if type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return error("invalid_rule", message_key="invalid_every_rule")
        if value < MIN_EVERY_SECONDS:
            return error("frequency_too_high")
    return None


class ScheduleTools:
    """The three tools, shared by every root Agent the plugin installed.

    One set of :class:`~dsh_hookspecs.Tool` objects is built once and registered in each
    installed Agent's own layer; a call acts only for the Agent that makes it, through that
    Agent's owner. A call from an Agent without an installed owner (a child, an Agent published
    before the plugin loaded, a disposed one) is refused with ``internal_error``: it never
    reaches another Agent's Session. :attr:`max_prompt` and :attr:`max_active` are the
    configured bounds.
    """

    __slots__ = ("_definitions", "max_active", "max_prompt", "owners")

    def __init__(self, owners: Mapping[Agent, ScheduleOwner]) -> None:
        self.owners = owners
        self.max_prompt = MAX_PROMPT_CHARS
        self.max_active = MAX_ACTIVE
        self._definitions = tuple(
            Tool(
                name=name,
                title=title,
                description=description,
                parameters=parameters,
                handler=handler,
            )
            for name, title, description, parameters, handler in (
                (
                    "schedule_create",
                    "Create reminder",
                    CREATE_DESCRIPTION,
                    CREATE_PARAMETERS,
                    self.create,
                ),
                ("schedule_list", "List reminders", LIST_DESCRIPTION, LIST_PARAMETERS, self.list),
                (
                    "schedule_delete",
                    "Delete reminder",
                    DELETE_DESCRIPTION,
                    DELETE_PARAMETERS,
                    self.delete,
                ),
            )
        )

    def register(self, agent: Agent) -> tuple[Callable[[], None], ...]:
        """Register all three in ``agent``'s own layer, or none (a later conflict rolls back).

        Returns the three disposers, in registration order.
        """
        disposers: list[Callable[[], None]] = []
        try:
            for tool in self._definitions:
                disposers.append(agent.tools.register(tool))  # noqa: PERF401
        except ToolConflictError:
            for dispose in reversed(disposers):
                dispose()
            raise
        return tuple(disposers)

    def _owner(self, call: ToolCall) -> ScheduleOwner | None:
        """The calling Agent's own owner, or ``None`` when the plugin did not install it."""
        owner = self.owners.get(call.agent)
        return owner if owner is not None and owner.agent is call.agent else None

    def _refusal(self, operation: str, outcome: Refused | Uncertain) -> dict[str, JSONValue]:
        if isinstance(outcome, Uncertain):
            return uncertain(operation, outcome.schedule_id)
        if outcome.code == "too_many_active":
            return {"code": outcome.code, "message": TOO_MANY_ACTIVE.format(self.max_active)}
        if outcome.message is not None:
            return {"code": outcome.code, "message": outcome.message}
        return error(outcome.code)

    # -- the tools --------------------------------------------------------------------------------
    async def create(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        arguments = call.arguments
        chosen = [name for name in SELECTORS if name in arguments]
        if set(arguments) - {"prompt", *SELECTORS} or len(chosen) != 1:
            return error("invalid_selector")
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return error("invalid_prompt")
        prompt = prompt.strip()
        if len(prompt) > self.max_prompt:
            return {"code": "prompt_too_long", "message": PROMPT_TOO_LONG.format(self.max_prompt)}
        selector: Selector = (chosen[0], arguments[chosen[0]])
        problem = _selector_problem(selector)
        if problem is not None:
            return problem
        made = await owner.create(prompt, selector, max_active=self.max_active)
        return self._refusal("create", made) if isinstance(made, Refused | Uncertain) else made

    async def list(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        views = await owner.list()
        return self._refusal("list", views) if isinstance(views, Refused | Uncertain) else views

    async def delete(self, call: ToolCall) -> JSONValue:
        schedule_id = call.arguments.get("id")
        if (
            not isinstance(schedule_id, str)
            or not schedule_id
            or schedule_id != schedule_id.strip()
        ):
            return error("invalid_rule", message_key="invalid_delete_id")
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        deleted = await owner.delete(schedule_id)
        if isinstance(deleted, Refused | Uncertain):
            return self._refusal("delete", deleted)
        if not deleted:
            return {"id": schedule_id, "deleted": False, "code": "schedule_not_found"}
        return {"id": schedule_id, "deleted": True}
