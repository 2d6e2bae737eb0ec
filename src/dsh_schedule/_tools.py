"""The model-facing tools: ``schedule_create``, ``schedule_list``, ``schedule_update``,
``schedule_delete``, ``schedule_ack`` and ``schedule_snooze``.

The tools parse arguments and word answers; the calling Agent's owner runs the transaction
(:mod:`._transactions`: preflight, decision from the fold, append, barrier). Shape errors are
answered before the Agent's schedule FIFO and without a flush; a checkpoint that was not
acknowledged answers ``persistence_uncertain`` instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from dsh_hookspecs import Agent, JSONValue, Tool, ToolCall, ToolConflictError

from ._at import ScheduleInputError, at_target
from ._codec import MAX_RENOTIFY_MINUTES, MAX_TITLE_CHARS, MIN_EVERY_SECONDS, MIN_RENOTIFY_MINUTES
from ._instants import MAX_SAFE_INTEGER, format_instant
from ._rules import CalendarKind, calendar_rule
from ._runtime import ScheduleOwner
from ._transactions import (
    NO_EXPECTATION,
    Edit,
    NotUpdated,
    Refused,
    Selector,
    SnoozeTarget,
    Uncertain,
    Unchanged,
)

#: A prompt longer than this (after trimming) is refused with ``prompt_too_long``.
MAX_PROMPT_CHARS: Final = 4000
#: A Session holding this many active reminders refuses another with ``too_many_active``.
MAX_ACTIVE: Final = 1000
#: The longest snooze in minutes (a week).
MAX_SNOOZE_MINUTES: Final = 10_080

#: The fixed messages of the configurable bounds, quoting the configured limit.
PROMPT_TOO_LONG: Final = "prompt must be at most {} characters after trimming."
TOO_MANY_ACTIVE: Final = "This session already holds {} active reminders; delete one first."
FREQUENCY_TOO_HIGH: Final = "every_seconds must be at least {}."
#: The message of ``already_snoozed``, naming the snooze reminder.
ALREADY_SNOOZED: Final = "That occurrence is already snoozed by reminder {}."

MESSAGES: Final = {
    "invalid_prompt": "prompt must be non-empty after trimming.",
    "invalid_title": "title must be non-empty after trimming.",
    "title_too_long": f"title must be at most {MAX_TITLE_CHARS} characters.",
    "invalid_selector": (
        "schedule_create accepts exactly one of after_seconds, at, every_seconds, daily, "
        "weekly, or cron."
    ),
    "invalid_rule": "after_seconds must be a positive safe integer.",
    "invalid_every_rule": "every_seconds must be a safe integer.",
    "frequency_too_high": FREQUENCY_TOO_HIGH.format(MIN_EVERY_SECONDS),
    "invalid_time_zone": "time_zone must be UTC or a valid IANA Area/Location name.",
    "not_future": "The scheduled time must be strictly in the future.",
    "invalid_delete_id": ("schedule_delete id must be non-empty without surrounding whitespace."),
    "invalid_update_id": "schedule_update id must be non-empty without surrounding whitespace.",
    "invalid_update_selector": (
        "schedule_update accepts at most one of at, every_seconds, daily, weekly, or cron."
    ),
    "update_needs_change": (
        "schedule_update needs a new title, prompt, renotify_minutes, or one of at, "
        "every_seconds, daily, weekly, or cron."
    ),
    "invalid_renotify": (
        f"renotify_minutes must be a whole number from {MIN_RENOTIFY_MINUTES} to "
        f"{MAX_RENOTIFY_MINUTES}."
    ),
    "invalid_ack_id": "schedule_ack id must be non-empty without surrounding whitespace.",
    "invalid_snooze_id": "schedule_snooze id must be non-empty without surrounding whitespace.",
    "invalid_occurrence": (
        "occurrence_at must be the instant of a delivered occurrence, an RFC 3339 date-time "
        "with Z or a numeric offset."
    ),
    "invalid_snooze_selector": "schedule_snooze accepts exactly one of minutes or until.",
    "invalid_snooze_minutes": (
        f"minutes must be a whole number from 1 to {MAX_SNOOZE_MINUTES} (one week)."
    ),
    "invalid_until": (
        "until must be a real date and time, YYYY-MM-DDTHH:mm:ss with an explicit Z or numeric "
        "offset."
    ),
    "not_found": "This session delivered no occurrence of that reminder at that time.",
    "already_done": "That occurrence is already done.",
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


#: How the calendar selectors treat daylight saving time and downtime (two sentences the tool
#: descriptions quote).
DST_RULES: Final = (
    "Local times that do not exist in the zone are skipped; repeated local times fire once, at "
    "the earlier instant. After downtime, a recurring reminder delivers only its latest missed "
    "occurrence."
)
_CREATE_DESCRIPTION: Final = (
    "Create one reminder in this conversation from a non-empty prompt and exactly one selector. "
    "after_seconds: a positive safe-integer delay in seconds, for relative requests ('in 10 "
    "minutes' is 600). at: an absolute target, either a strict RFC 3339 string with an explicit "
    "offset ('2026-08-06T09:00:00+08:00' or '...Z') or a local calendar object {date: "
    "'YYYY-MM-DD', time: 'HH:mm:ss', time_zone: IANA name such as 'Europe/Berlin' or 'UTC'}. "
    "For a wall-clock request like 'tomorrow at 9', work out the date from the current time "
    "you are given and pass {date, time, time_zone} in the user's time zone (the one the time "
    "context names); if no zone is known, ask the user or use an explicit-offset string they "
    "confirmed. every_seconds: a fixed-rate safe-integer interval of at least {min_every} "
    "seconds, for elapsed-time repeats ('every 30 minutes' is 1800); it first fires one "
    "interval after creation, stays aligned to creation, skips missed occurrences and delivers "
    "only the latest one when overdue. For repeats on the calendar, in the user's time zone: "
    "daily {time: 'HH:mm:ss', time_zone} ('every day at 22:00'); weekly {time, time_zone, "
    "weekdays: ISO numbers 1=Monday .. 7=Sunday} ('every weekday at 9' is weekdays [1,2,3,4,5]); "
    "cron {expression: five fields 'minute hour day-of-month month day-of-week' with *, n, a-b, "
    "*/n, a-b/n and commas, no names, time_zone} for anything else ('on the 1st of every month "
    "at 9' is '0 9 1 * *'); each first fires at its next matching local time. " + DST_RULES + " "
    "title: an optional short name for the reminder (at most 120 characters). "
    "renotify_minutes: optional, only when the user asks to be reminded until they confirm: "
    "after each delivery, up to three more 'Still due' notifications are sent outside the "
    "conversation that many minutes apart (5 to 1440) until that occurrence is marked done "
    "or snoozed. Delivery is "
    "session-local: into this session only, while the session is open; if the session is "
    "closed when a reminder falls due, it is delivered once the session is opened again."
)
LIST_DESCRIPTION = (
    "List every active reminder of this session in creation order, with its id, kind (after, "
    "at, every, daily, weekly or cron), prompt, title when it has one, its rule (afterSeconds, "
    "everySeconds, time and timeZone, weekdays, or expression and timeZone), renotifyMinutes "
    "when it re-notifies, snoozedFrom ({id, occurrenceAt}) when it snoozes a delivered "
    "occurrence, UTC target (scheduledAt; for a recurring reminder, its next occurrence), state "
    "(scheduled or overdue) and session-local delivery."
)
UPDATE_DESCRIPTION = (
    "Change one active reminder of this session by its exact id: a new prompt, a new title, "
    "a new renotify_minutes (5 to 1440), and/or a new time given as at most one of at, "
    "every_seconds, daily, weekly or cron (the same forms schedule_create takes; after_seconds "
    "is not offered: give at). A new time is computed from now as a create would compute it, "
    "and the reminder then fires at its new time and never at its old one; a text-only change "
    "keeps its time. Asking for what it already is changes nothing and answers the reminder "
    "with updated: false. " + DST_RULES + " "
    "Answers the changed reminder as schedule_list shows it, or {id, updated: false, code} with "
    "schedule_not_found (no such id) or schedule_ended (already delivered for good or deleted)."
)
DELETE_DESCRIPTION = (
    "Delete one active reminder of this session by its exact id (a recurring reminder stops "
    "for good). An unknown or already finished id returns deleted: false."
)
ACK_DESCRIPTION = (
    "Mark one delivered occurrence of a reminder as done: its exact id and the occurrence_at "
    "its delivery named (the reminder message's occurrence_at). A repeating reminder keeps its "
    "schedule; pending 'Still due' notifications of that occurrence are withdrawn. Answers "
    "{done: true, id, occurrenceAt}, also when it was already done; not_found when this "
    "session delivered no such occurrence."
)
SNOOZE_DESCRIPTION = (
    "Remind again later about one delivered occurrence, without moving a repeating reminder: "
    "creates a new one-time reminder with the same prompt and title, linked to the occurrence "
    "as snoozedFrom, either minutes from now (1 to 10080) or at until (a strict RFC 3339 "
    "date-time with an explicit Z or numeric offset, in the future); give exactly one. Pending "
    "'Still due' notifications of that occurrence are withdrawn. Answers the new reminder as "
    "schedule_create does, with snoozedFrom; an occurrence is snoozed once (already_snoozed "
    "names the snooze reminder as snoozeId), not once done (already_done); not_found when this "
    "session delivered no such occurrence."
)

#: The selectors; a create takes exactly one.
SELECTORS: Final = ("after_seconds", "at", "every_seconds", "daily", "weekly", "cron")
#: The selectors an update may take (at most one).
UPDATE_SELECTORS: Final = ("at", "every_seconds", "daily", "weekly", "cron")
#: The selectors whose argument is a calendar rule.
CALENDAR_SELECTORS: Final[tuple[CalendarKind, ...]] = ("daily", "weekly", "cron")

_TIME_ZONE: Final = {
    "type": "string",
    "description": "UTC or an IANA Area/Location name such as 'Europe/Paris'.",
}
_LOCAL_TIME: Final = {
    "type": "string",
    "description": "Local wall time, HH:mm:ss with optional .sss.",
}
CALENDAR_PARAMETERS: Final[dict[str, dict[str, Any]]] = {
    "daily": {
        "type": "object",
        "description": "Every day at a local time.",
        "additionalProperties": False,
        "properties": {"time": _LOCAL_TIME, "time_zone": _TIME_ZONE},
        "required": ["time", "time_zone"],
    },
    "weekly": {
        "type": "object",
        "description": "On some weekdays at a local time.",
        "additionalProperties": False,
        "properties": {
            "time": _LOCAL_TIME,
            "time_zone": _TIME_ZONE,
            "weekdays": {
                "type": "array",
                "description": "ISO weekdays, 1 = Monday through 7 = Sunday, each once.",
                "items": {"type": "integer"},
            },
        },
        "required": ["time", "time_zone", "weekdays"],
    },
    "cron": {
        "type": "object",
        "description": "The local times a five-field cron expression selects.",
        "additionalProperties": False,
        "properties": {
            "expression": {
                "type": "string",
                "description": (
                    "minute hour day-of-month month day-of-week, e.g. '0 9 1 * *'; when both "
                    "day fields are restricted a date matching either one fires."
                ),
            },
            "time_zone": _TIME_ZONE,
        },
        "required": ["expression", "time_zone"],
    },
}
TITLE_PARAMETER: Final = {
    "type": "string",
    "description": "Optional short name of the reminder, at most 120 characters.",
}
RENOTIFY_PARAMETER: Final = {
    "type": "number",
    "description": (
        "Optional whole minutes from 5 to 1440: re-notify a delivery up to three times, that "
        "far apart, until it is marked done or snoozed."
    ),
}


def create_parameters(min_every: int) -> dict[str, Any]:
    """The create tool's parameters, quoting the configured ``every_seconds`` floor."""
    return {
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "description": "Reminder content to present when the target becomes due.",
            },
            "title": TITLE_PARAMETER,
            "after_seconds": {
                "type": "number",
                "description": "Positive safe-integer delay in seconds.",
            },
            "every_seconds": {
                "type": "number",
                "description": (
                    f"Fixed-rate safe-integer interval in seconds, at least {min_every}."
                ),
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
            **CALENDAR_PARAMETERS,
            "renotify_minutes": RENOTIFY_PARAMETER,
        },
        "required": ["prompt"],
    }


CREATE_PARAMETERS: Final = create_parameters(MIN_EVERY_SECONDS)


def update_parameters(min_every: int) -> dict[str, Any]:
    """The update tool's parameters: ``id``, and what it may change (the create's forms).

    A user action may also send ``expected`` (the record it showed); the schema's root is
    open, so it passes without being offered to the model."""
    created = create_parameters(min_every)["properties"]
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Exact session-local schedule id."},
            "prompt": {
                "type": "string",
                "description": "New reminder content (leave out to keep it).",
            },
            "title": TITLE_PARAMETER,
            **{name: created[name] for name in UPDATE_SELECTORS},
            "renotify_minutes": RENOTIFY_PARAMETER,
        },
        "required": ["id"],
    }


UPDATE_PARAMETERS: Final = update_parameters(MIN_EVERY_SECONDS)
LIST_PARAMETERS: Final = {"type": "object", "properties": {}}
DELETE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Exact session-local schedule id."},
    },
    "required": ["id"],
}
_OCCURRENCE_PARAMETER: Final = {
    "type": "string",
    "description": (
        "The delivered occurrence's instant, as its delivery named it: RFC 3339 with Z or a "
        "numeric offset, e.g. '2026-08-06T09:00:00.000Z'."
    ),
}
ACK_PARAMETERS: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "description": "Exact session-local schedule id."},
        "occurrence_at": _OCCURRENCE_PARAMETER,
    },
    "required": ["id", "occurrence_at"],
}
SNOOZE_PARAMETERS: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "description": "Exact session-local schedule id."},
        "occurrence_at": _OCCURRENCE_PARAMETER,
        "minutes": {
            "type": "number",
            "description": (
                f"Remind again this many whole minutes from now, 1 to {MAX_SNOOZE_MINUTES}."
            ),
        },
        "until": {
            "type": "string",
            "description": (
                "Remind again at this future instant: a strict RFC 3339 date-time with an "
                "explicit Z or numeric offset."
            ),
        },
    },
    "required": ["id", "occurrence_at"],
}


def create_description(min_every: int) -> str:
    """The create tool's description quoting the configured ``every_seconds`` floor."""
    return _CREATE_DESCRIPTION.replace("{min_every}", str(min_every))


CREATE_DESCRIPTION: Final = create_description(MIN_EVERY_SECONDS)


def checked_renotify(value: object) -> int | dict[str, JSONValue] | None:
    """A ``renotify_minutes`` argument, ``None`` when absent, or the refusal to answer."""
    if value is None:
        return None
    if type(value) is not int or not MIN_RENOTIFY_MINUTES <= value <= MAX_RENOTIFY_MINUTES:
        return error("invalid_rule", message_key="invalid_renotify")
    return value


def checked_id(value: object) -> str | None:
    """An ``id`` argument, or ``None`` when it is not one (empty, or surrounded by
    whitespace)."""
    if not isinstance(value, str) or not value or value != value.strip():
        return None
    return value


def _offset_form(value: object) -> TypeGuard[str]:
    """Whether ``value`` is an explicit-offset instant string (whatever its range)."""
    if not isinstance(value, str):
        return False
    try:
        at_target(value)
    except ScheduleInputError:
        return False
    return True


def checked_occurrence(value: object) -> str | None:
    """An ``occurrence_at`` argument as the canonical instant it names, or ``None`` when it
    names none."""
    if not _offset_form(value):
        return None
    try:
        return format_instant(at_target(value))
    except ValueError:  # an offset moved it out of years 0001-9999
        return None


def checked_title(value: object) -> str | dict[str, JSONValue] | None:
    """A ``title`` argument trimmed, ``None`` when absent, or the refusal to answer."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return error("invalid_prompt", message_key="invalid_title")
    title = value.strip()
    if len(title) > MAX_TITLE_CHARS:
        return error("invalid_prompt", message_key="title_too_long")
    return title


class ScheduleTools:
    """The tools, shared by every root Agent the plugin installed.

    One set of :class:`~dsh_hookspecs.Tool` objects is built per configuration and registered in
    each installed Agent's own layer; a call acts only for the Agent that makes it, through that
    Agent's owner. A call from an Agent without an installed owner (a child, an Agent published
    before the plugin loaded, a disposed one) is refused with ``internal_error``: it never
    reaches another Agent's Session. :attr:`max_prompt`, :attr:`max_active` and
    :attr:`min_every` are the configured bounds (:meth:`configure`).
    """

    __slots__ = ("_definitions", "max_active", "max_prompt", "min_every", "owners")

    def __init__(self, owners: Mapping[Agent, ScheduleOwner]) -> None:
        self.owners = owners
        self.max_prompt = MAX_PROMPT_CHARS
        self.max_active = MAX_ACTIVE
        self.min_every = MIN_EVERY_SECONDS
        self._definitions: tuple[Tool, ...] = ()
        self.configure()

    def configure(
        self,
        *,
        max_prompt: int = MAX_PROMPT_CHARS,
        max_active: int = MAX_ACTIVE,
        min_every: int = MIN_EVERY_SECONDS,
    ) -> None:
        """Set the bounds and build the tool definitions that quote them."""
        self.max_prompt = max_prompt
        self.max_active = max_active
        self.min_every = min_every
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
                    create_description(min_every),
                    create_parameters(min_every),
                    self.create,
                ),
                ("schedule_list", "List reminders", LIST_DESCRIPTION, LIST_PARAMETERS, self.list),
                (
                    "schedule_update",
                    "Edit reminder",
                    UPDATE_DESCRIPTION,
                    update_parameters(min_every),
                    self.update,
                ),
                (
                    "schedule_delete",
                    "Delete reminder",
                    DELETE_DESCRIPTION,
                    DELETE_PARAMETERS,
                    self.delete,
                ),
                ("schedule_ack", "Mark reminder done", ACK_DESCRIPTION, ACK_PARAMETERS, self.ack),
                (
                    "schedule_snooze",
                    "Snooze reminder",
                    SNOOZE_DESCRIPTION,
                    SNOOZE_PARAMETERS,
                    self.snooze,
                ),
            )
        )

    def register(self, agent: Agent) -> tuple[Callable[[], None], ...]:
        """Register all the tools in ``agent``'s own layer, or none (a later conflict rolls
        back).

        Returns the disposers, in registration order.
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
        if outcome.snooze_id is not None:
            return {
                "code": outcome.code,
                "message": ALREADY_SNOOZED.format(outcome.snooze_id),
                "snoozeId": outcome.snooze_id,
            }
        if outcome.message is not None:
            return {"code": outcome.code, "message": outcome.message}
        return error(outcome.code)

    def selector(self, name: str, value: JSONValue) -> Selector | dict[str, JSONValue]:
        """The checked selector ``name`` with argument ``value``, or the answer refusing it
        before the queue (``at`` is checked only inside it, at the creation sample).

        Only the shape is checked here: a positive safe integer of seconds whose target is not
        representable (``after_seconds`` of 9,007,199,254,740,991) passes, and is answered
        ``time_out_of_range`` in the queue after the preflight flush, as is ``every_seconds``
        and a calendar rule without a representable future occurrence."""
        if name == "after_seconds":
            if type(value) is not int or not 0 < value <= MAX_SAFE_INTEGER:
                return error("invalid_rule")
        elif name == "every_seconds":
            if type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return error("invalid_rule", message_key="invalid_every_rule")
            if value < self.min_every:
                return {
                    "code": "frequency_too_high",
                    "message": FREQUENCY_TOO_HIGH.format(self.min_every),
                }
        elif name in CALENDAR_SELECTORS:
            try:
                return (name, calendar_rule(name, value))
            except ScheduleInputError as exc:
                return {"code": exc.code, "message": exc.message}
        return (name, value)

    # -- the tools --------------------------------------------------------------------------------
    async def create(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        arguments = call.arguments
        chosen = [name for name in SELECTORS if name in arguments]
        if set(arguments) - {"prompt", "title", "renotify_minutes", *SELECTORS} or len(chosen) != 1:
            return error("invalid_selector")
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return error("invalid_prompt")
        prompt = prompt.strip()
        if len(prompt) > self.max_prompt:
            return {"code": "prompt_too_long", "message": PROMPT_TOO_LONG.format(self.max_prompt)}
        title = checked_title(arguments.get("title"))
        if isinstance(title, dict):
            return title
        renotify = checked_renotify(arguments.get("renotify_minutes"))
        if isinstance(renotify, dict):
            return renotify
        selector = self.selector(chosen[0], arguments[chosen[0]])
        if isinstance(selector, dict):
            return selector
        made = await owner.create(
            prompt, selector, max_active=self.max_active, title=title, renotify_minutes=renotify
        )
        return self._refusal("create", made) if isinstance(made, Refused | Uncertain) else made

    async def list(self, call: ToolCall) -> JSONValue:
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        views = await owner.list()
        return self._refusal("list", views) if isinstance(views, Refused | Uncertain) else views

    async def update(self, call: ToolCall) -> JSONValue:
        arguments = call.arguments
        schedule_id = arguments.get("id")
        if (
            not isinstance(schedule_id, str)
            or not schedule_id
            or schedule_id != schedule_id.strip()
        ):
            return error("invalid_rule", message_key="invalid_update_id")
        chosen = [name for name in UPDATE_SELECTORS if name in arguments]
        known = {"id", "prompt", "title", "renotify_minutes", "expected", *UPDATE_SELECTORS}
        if set(arguments) - known or len(chosen) > 1:
            return error("invalid_selector", message_key="invalid_update_selector")
        prompt, title = arguments.get("prompt"), arguments.get("title")
        renotify = arguments.get("renotify_minutes")
        if not chosen and prompt is None and title is None and renotify is None:
            return error("invalid_selector", message_key="update_needs_change")
        if prompt is not None:
            if not isinstance(prompt, str) or not prompt.strip():
                return error("invalid_prompt")
            prompt = prompt.strip()
            if len(prompt) > self.max_prompt:
                return {
                    "code": "prompt_too_long",
                    "message": PROMPT_TOO_LONG.format(self.max_prompt),
                }
        title = checked_title(title)
        if isinstance(title, dict):
            return title
        renotify = checked_renotify(renotify)
        if isinstance(renotify, dict):
            return renotify
        selector = self.selector(chosen[0], arguments[chosen[0]]) if chosen else None
        if isinstance(selector, dict):
            return selector
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        edit = Edit(
            prompt=prompt,
            title=title,
            selector=selector,
            renotify_minutes=renotify,
            expected=arguments.get("expected", NO_EXPECTATION),
        )
        updated = await owner.update(schedule_id, edit)
        if isinstance(updated, NotUpdated):
            return {"id": schedule_id, "updated": False, "code": updated.code}
        if isinstance(updated, Unchanged):
            return updated.answer
        if isinstance(updated, Refused | Uncertain):
            return self._refusal("update", updated)
        return updated

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

    async def ack(self, call: ToolCall) -> JSONValue:
        arguments = call.arguments
        schedule_id = checked_id(arguments.get("id"))
        if schedule_id is None:
            return error("invalid_rule", message_key="invalid_ack_id")
        occurrence_at = checked_occurrence(arguments.get("occurrence_at"))
        if occurrence_at is None:
            return error("invalid_rule", message_key="invalid_occurrence")
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        acked = await owner.ack(schedule_id, occurrence_at)
        if isinstance(acked, Refused | Uncertain):
            return self._refusal("ack", acked)
        return {"done": True, "id": schedule_id, "occurrenceAt": occurrence_at}

    async def snooze(self, call: ToolCall) -> JSONValue:
        arguments = call.arguments
        schedule_id = checked_id(arguments.get("id"))
        if schedule_id is None:
            return error("invalid_rule", message_key="invalid_snooze_id")
        occurrence_at = checked_occurrence(arguments.get("occurrence_at"))
        if occurrence_at is None:
            return error("invalid_rule", message_key="invalid_occurrence")
        chosen = [name for name in ("minutes", "until") if name in arguments]
        if len(chosen) != 1:
            return error("invalid_selector", message_key="invalid_snooze_selector")
        value = arguments[chosen[0]]
        target: SnoozeTarget
        if chosen[0] == "minutes":
            if type(value) is not int or not 1 <= value <= MAX_SNOOZE_MINUTES:
                return error("invalid_rule", message_key="invalid_snooze_minutes")
            target = ("minutes", value)
        else:
            if not _offset_form(value):
                return error("invalid_rule", message_key="invalid_until")
            target = ("until", value)
        owner = self._owner(call)
        if owner is None:
            return error("internal_error")
        made = await owner.snooze(schedule_id, occurrence_at, target, max_active=self.max_active)
        return self._refusal("snooze", made) if isinstance(made, Refused | Uncertain) else made
