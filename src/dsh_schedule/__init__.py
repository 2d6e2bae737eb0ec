"""dsh_schedule: durable, Session-local reminders for dsh hosts.

The plugin (entry point ``schedule``) gives every root Agent published after it loaded the
``schedule_create`` / ``schedule_list`` / ``schedule_delete`` tools and one live owner that turns
due reminders into one follow-up turn plus a durable ``schedule/change`` dispatch. All state is
the Session's own log; the domain layer (:mod:`dsh_schedule._domain`) is pure.
"""

from __future__ import annotations

from typing import TypedDict

from ._domain import *  # noqa: F403 - the domain API is part of the public API
from ._domain import __all__ as _domain_all
from ._plugin import ConfigError, SchedulePlugin
from ._runtime import PLUGIN_NAME, Fifo, FoldCache, ScheduleOwner
from ._tools import MAX_ACTIVE, MAX_PROMPT_CHARS, MESSAGES, ScheduleTools


class ReminderView(TypedDict):
    """The presentation view of a dispatched reminder (what ``dsh_event_present`` returns)."""

    scheduleId: str
    prompt: str
    occurrenceAt: str
    deliveryMode: str


__all__ = [  # noqa: PLE0604 - extended from the domain module's own __all__
    *_domain_all,
    "MAX_ACTIVE",
    "MAX_PROMPT_CHARS",
    "MESSAGES",
    "PLUGIN_NAME",
    "ConfigError",
    "Fifo",
    "FoldCache",
    "ReminderView",
    "ScheduleOwner",
    "SchedulePlugin",
    "ScheduleTools",
]
