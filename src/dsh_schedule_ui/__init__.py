"""dsh_schedule_ui: the browser renderer for Schedule reminder receipts.

Entry point ``ui-schedule``. Through ``dsh_renderer_assets`` it contributes one ES module,
``static/reminder-row.js``, whose default export registers the bilingual (English / Chinese)
reminder row for durable ``schedule/change`` events that carry a presented view
(:class:`dsh_schedule.ReminderView`). The prompt always reaches the DOM as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from dsh_hookspecs import RendererAsset, hookimpl
from dsh_schedule import SCHEDULE_CHANGE, ReminderView

#: The reminder row module shipped with this package.
REMINDER_ROW: Final = Path(__file__).resolve().parent / "static" / "reminder-row.js"


class ScheduleUIPlugin:
    """Entry point ``ui-schedule`` in group ``dsh.plugins``: renderer assets only, no runtime."""

    @hookimpl
    def dsh_renderer_assets(self) -> list[RendererAsset]:
        return [
            RendererAsset(
                name="reminder-row", path=str(REMINDER_ROW), event_types=(SCHEDULE_CHANGE,)
            )
        ]


__all__ = ["REMINDER_ROW", "ReminderView", "ScheduleUIPlugin"]
