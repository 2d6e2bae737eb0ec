"""dsh_schedule: durable, Session-local reminders for dsh hosts.

The plugin (entry point ``schedule``) gives every root Agent published after it loaded the
``schedule_create`` / ``schedule_list`` / ``schedule_update`` / ``schedule_delete`` /
``schedule_ack`` / ``schedule_snooze`` tools and one live owner that turns due reminders into
one follow-up turn plus a durable ``schedule/change`` dispatch (and, through the host, a notice
sent outside the page). All state is the Session's own log.

The package has two rooms. The reminder core, every module at this level, owns the durable
reminders of docs/design.md section 9 (the codec and its instants, the fold, the rules and
calendars, the transactions, the runtime owner, the tools, the board and the presentation).
:mod:`dsh_schedule.language` owns the keyless scripted assistant's reading of English and
Chinese messages and its replies; it imports the core, the core never imports it, and only the
plugin wires it in.

The public surface is what a host or a UI author needs: the plugin, the version-1 codec and its
limits and instants (after, at, every, daily, weekly and cron records, acks and snoozes), the
fixed-rate arithmetic, the canonical cron spelling, the fold (and its delivered occurrences),
the presentation of a dispatch, the single and batch reminder framings and the tools' fixed
messages. Everything else is internal.
"""

from __future__ import annotations

from ._codec import (
    MAX_AFTER_SECONDS,
    MAX_EVERY_SECONDS,
    MAX_INSTANT_MS,
    MAX_RENOTIFY_MINUTES,
    MAX_TITLE_CHARS,
    MIN_EVERY_SECONDS,
    MIN_EVERY_SECONDS_FLOOR,
    MIN_INSTANT_MS,
    MIN_RENOTIFY_MINUTES,
    Ack,
    AfterRecord,
    AtRecord,
    CalendarRecord,
    Create,
    CronRecord,
    DailyRecord,
    Delete,
    Dispatch,
    EveryRecord,
    Record,
    ScheduleChange,
    ScheduleLogError,
    SnoozedFrom,
    Update,
    WeeklyRecord,
    decode_change,
    encode_change,
    format_instant,
    parse_instant,
)
from ._cron import CronError, canonical_cron
from ._every import Occurrence, resolve_every_occurrence
from ._fold import SCHEDULE_CHANGE, Delivery, FoldResult, IncrementalFold, fold
from ._framing import batch_framing, parse_batch_framing, parse_reminder_framing, reminder_framing
from ._plugin import ConfigError, SchedulePlugin
from ._receipts import ReminderView, present_dispatch
from ._tools import MAX_ACTIVE, MAX_PROMPT_CHARS, MAX_SNOOZE_MINUTES, MESSAGES

__all__ = [
    "MAX_ACTIVE",
    "MAX_AFTER_SECONDS",
    "MAX_EVERY_SECONDS",
    "MAX_INSTANT_MS",
    "MAX_PROMPT_CHARS",
    "MAX_RENOTIFY_MINUTES",
    "MAX_SNOOZE_MINUTES",
    "MAX_TITLE_CHARS",
    "MESSAGES",
    "MIN_EVERY_SECONDS",
    "MIN_EVERY_SECONDS_FLOOR",
    "MIN_INSTANT_MS",
    "MIN_RENOTIFY_MINUTES",
    "SCHEDULE_CHANGE",
    "Ack",
    "AfterRecord",
    "AtRecord",
    "CalendarRecord",
    "ConfigError",
    "Create",
    "CronError",
    "CronRecord",
    "DailyRecord",
    "Delete",
    "Delivery",
    "Dispatch",
    "EveryRecord",
    "FoldResult",
    "IncrementalFold",
    "Occurrence",
    "Record",
    "ReminderView",
    "ScheduleChange",
    "ScheduleLogError",
    "SchedulePlugin",
    "SnoozedFrom",
    "Update",
    "WeeklyRecord",
    "batch_framing",
    "canonical_cron",
    "decode_change",
    "encode_change",
    "fold",
    "format_instant",
    "parse_batch_framing",
    "parse_instant",
    "parse_reminder_framing",
    "present_dispatch",
    "reminder_framing",
    "resolve_every_occurrence",
]
