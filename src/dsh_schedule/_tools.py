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

from ._codec import MAX_AFTER_SECONDS
from ._runtime import ScheduleOwner
from ._transactions import Refused, Uncertain

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
        "schedule_create accepts exactly the after_seconds selector in this version."
    ),
    "invalid_rule": "after_seconds must be a positive safe integer.",
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
    "Create a reminder in this conversation. Version 1 accepts exactly a non-empty prompt and "
    "a positive safe-integer after_seconds delay. The reminder is session-local: it is "
    "delivered into this session only, while the session is open; if the session is closed "
    "when it falls due, it is delivered once the session is opened again."
)
LIST_DESCRIPTION = (
    "List every active reminder of this session in creation order, with its id, UTC target "
    "(scheduledAt), state (scheduled or overdue) and session-local delivery."
)
DELETE_DESCRIPTION = (
    "Delete one active reminder of this session by its exact id. An unknown or already "
    "finished id returns deleted: false."
)

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
    },
    "required": ["prompt", "after_seconds"],
}
LIST_PARAMETERS: Final = {"type": "object", "properties": {}}
DELETE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Exact session-local schedule id."},
    },
    "required": ["id"],
}


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
        return error(outcome.code)

    # -- the tools --------------------------------------------------------------------------------
    async def create(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        arguments = call.arguments
        if set(arguments) - {"prompt", "after_seconds"}:
            return error("invalid_selector")
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return error("invalid_prompt")
        prompt = prompt.strip()
        if len(prompt) > self.max_prompt:
            return {"code": "prompt_too_long", "message": PROMPT_TOO_LONG.format(self.max_prompt)}
        after_seconds = arguments.get("after_seconds")
        if type(after_seconds) is not int or not 0 < after_seconds <= MAX_AFTER_SECONDS:
            return error("invalid_rule")
        made = await owner.create(prompt, after_seconds, max_active=self.max_active)
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
