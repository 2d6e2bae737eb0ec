"""The model-facing tools: ``schedule_create``, ``schedule_list``, ``schedule_delete``.

Every read or decision first awaits a preflight flush that must be acknowledged with ``True``;
create and an actual delete wait for a second barrier after their append. Any failed or
unacknowledged barrier answers ``persistence_uncertain`` instead of guessing. Shape errors are
answered before the Agent's schedule FIFO and without a flush. Flushes per call: create 2,
list 1, delete 2, delete of an unknown or finished id 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import structlog

from dsh_hookspecs import Agent, JSONValue, Tool, ToolCall, ToolConflictError

from ._codec import (
    MAX_AFTER_SECONDS,
    MAX_INSTANT_MS,
    AfterRecord,
    Create,
    Delete,
    ScheduleLogError,
    encode_change,
    format_instant,
)
from ._fold import SCHEDULE_CHANGE, IncrementalFold
from ._runtime import ScheduleOwner
from ._views import record_view

log = structlog.get_logger(__name__)

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

    One set of :class:`~dsh_hookspecs.Tool` objects is registered in each installed Agent's
    own layer; a call acts only for the Agent that makes it, through that Agent's owner. A call
    from an Agent without an installed owner (a child, an Agent published before the plugin
    loaded, a disposed one) is refused with ``internal_error``: it never reaches another
    Agent's Session.
    """

    __slots__ = ("_definitions", "max_active", "max_prompt", "owners")

    def __init__(
        self,
        owners: Mapping[Agent, ScheduleOwner],
        *,
        max_prompt: int = MAX_PROMPT_CHARS,
        max_active: int = MAX_ACTIVE,
    ) -> None:
        self.owners = owners
        self.max_prompt = max_prompt
        self.max_active = max_active
        self._definitions = (
            Tool(
                name="schedule_create",
                title="Create reminder",
                description=CREATE_DESCRIPTION,
                parameters=CREATE_PARAMETERS,
                handler=self.create,
            ),
            Tool(
                name="schedule_list",
                title="List reminders",
                description=LIST_DESCRIPTION,
                parameters=LIST_PARAMETERS,
                handler=self.list,
            ),
            Tool(
                name="schedule_delete",
                title="Delete reminder",
                description=DELETE_DESCRIPTION,
                parameters=DELETE_PARAMETERS,
                handler=self.delete,
            ),
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

    # -- shared steps -----------------------------------------------------------------------------
    def _owner(self, call: ToolCall) -> ScheduleOwner | None:
        """The calling Agent's own owner, or ``None`` when the plugin did not install it."""
        owner = self.owners.get(call.agent)
        return owner if owner is not None and owner.agent is call.agent else None

    @staticmethod
    async def _checkpoint(owner: ScheduleOwner, operation: str) -> bool:
        """A preflight or barrier (only a literal ``True`` counts); a confirmed one re-drives
        the owner, since the fold it decides from is now on disk."""
        if not await owner.checkpoint(operation):
            return False
        try:
            owner.request_drive()
        except Exception:
            log.exception("tools.notify_failed", agent_id=owner.agent.id)
        return True

    @staticmethod
    def _fold(owner: ScheduleOwner) -> IncrementalFold:
        return owner.folds.of(owner.agent.session)

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
        async with owner.queue:
            return await self._create(owner, prompt, after_seconds)

    async def _create(self, owner: ScheduleOwner, prompt: str, after_seconds: int) -> JSONValue:
        if not await self._checkpoint(owner, "create"):
            return uncertain("create")
        try:
            folded = self._fold(owner)
            if len(folded.active) >= self.max_active:
                return {
                    "code": "too_many_active",
                    "message": TOO_MANY_ACTIVE.format(self.max_active),
                }
            schedule_id = folded.next_id()
            target = owner.host.clock.now_ms() + after_seconds * 1000
            if target > MAX_INSTANT_MS:
                return error("time_out_of_range")
            record = AfterRecord(
                id=schedule_id,
                kind="after",
                prompt=prompt,
                after_seconds=after_seconds,
                scheduled_at=format_instant(target),
            )
            owner.agent.session.append(SCHEDULE_CHANGE, encode_change(Create(record=record)))
        except ScheduleLogError:
            return error("corrupt_schedule_log")
        except Exception:
            log.exception("tools.create_failed", agent_id=owner.agent.id)
            return error("internal_error")
        if not await self._checkpoint(owner, "create"):
            return uncertain("create", schedule_id)
        try:
            return record_view(record, owner.host.clock.now_ms())
        except Exception:
            log.exception("tools.create_failed", agent_id=owner.agent.id)
            return error("internal_error")

    async def list(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        async with owner.queue:
            if not await self._checkpoint(owner, "list"):
                return uncertain("list")
            try:
                active = self._fold(owner).active
                now = owner.host.clock.now_ms()
                return [record_view(record, now) for record in active]
            except ScheduleLogError:
                return error("corrupt_schedule_log")
            except Exception:
                log.exception("tools.list_failed", agent_id=owner.agent.id)
                return error("internal_error")

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
        async with owner.queue:
            return await self._delete(owner, schedule_id)

    async def _delete(self, owner: ScheduleOwner, schedule_id: str) -> JSONValue:
        if not await self._checkpoint(owner, "delete"):
            return uncertain("delete", schedule_id)
        try:
            if self._fold(owner).get(schedule_id) is None:
                return {"id": schedule_id, "deleted": False, "code": "schedule_not_found"}
            owner.agent.session.append(SCHEDULE_CHANGE, encode_change(Delete(id=schedule_id)))
        except ScheduleLogError:
            return error("corrupt_schedule_log")
        except Exception:
            log.exception("tools.delete_failed", agent_id=owner.agent.id)
            return error("internal_error")
        if not await self._checkpoint(owner, "delete"):
            return uncertain("delete", schedule_id)
        return {"id": schedule_id, "deleted": True}
