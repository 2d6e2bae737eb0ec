"""dsh_schedule_ui: the browser face of the Schedule plugin.

Entry point ``ui-schedule``. Through ``dsh_renderer_assets`` it contributes ES modules from
``static/`` whose default exports register with the host's browser registry: the bilingual
(English / Chinese) ``schedule`` strings, the reminder card for durable
``schedule/change`` dispatches that carry a presented view (:class:`dsh_schedule.ReminderView`,
offering the host to fold the follow-up, the echo and repeats into it), one-line summaries of the
four schedule tools (a cancel names its reminder and offers Undo) and of the plugin's
follow-ups, the Reminders panel over the ``schedule.reminders`` Session view (rules in words,
and Edit through ``schedule_update`` with the shown record as ``expected``), and the boards over
the rows the Schedule plugin posts for every Session ("All reminders" with the start page's
"Coming up", and what was delivered while the person was away); and one stylesheet. The modules
those import (the pure cores of an occurrence and of the panel, where a delivery was sent, the
shared Done and Snooze controls, the Edit form and the text-only DOM builders) are contributed
too, so that the host serves them; their default exports register nothing. Session text always
reaches the DOM as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from dsh_hookspecs import RendererAsset, hookimpl
from dsh_schedule import SCHEDULE_CHANGE, ReminderView

STATIC: Final = Path(__file__).resolve().parent / "static"
#: The reminder card module.
REMINDER_ROW: Final = STATIC / "reminder-row.js"
#: The modules, in load order: the strings the others use come first, then the helpers the
#: card, the panel and the boards import (they register nothing themselves; registering them
#: has the host serve them).
MODULES: Final = (
    "schedule-words",
    "schedule-dom",
    "occurrence",
    "sent-notices",
    "occurrence-controls",
    "reminder-row",
    "tool-summaries",
    "panel-state",
    "edit-form",
    "reminders-panel",
    "all-reminders",
)
#: The card's and the panel's stylesheet (the page links it).
STYLESHEET: Final = STATIC / "schedule.css"


class ScheduleUIPlugin:
    """Entry point ``ui-schedule`` in group ``dsh.plugins``: renderer assets only, no runtime."""

    @hookimpl
    def dsh_renderer_assets(self) -> list[RendererAsset]:
        modules = [
            RendererAsset(
                name=name,
                path=str(STATIC / f"{name}.js"),
                event_types=(SCHEDULE_CHANGE,) if name == "reminder-row" else (),
            )
            for name in MODULES
        ]
        return [*modules, RendererAsset(name="schedule", path=str(STYLESHEET))]


__all__ = ["MODULES", "REMINDER_ROW", "STATIC", "STYLESHEET", "ReminderView", "ScheduleUIPlugin"]
