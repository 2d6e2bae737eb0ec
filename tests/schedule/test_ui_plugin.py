"""dsh_schedule_ui: the renderer asset it registers through the host."""

from __future__ import annotations

from dsh_hookspecs import RendererAsset
from dsh_schedule_ui import REMINDER_ROW, ScheduleUIPlugin


async def test_ui_schedule_registers_the_reminder_row_module(host):
    host.load_plugin("ui-schedule")
    assets = host.plugins.renderer_assets()
    assert assets == [
        (
            "ui-schedule",
            RendererAsset(
                name="reminder-row", path=str(REMINDER_ROW), event_types=("schedule/change",)
            ),
        )
    ]
    assert REMINDER_ROW.is_file()
    source = REMINDER_ROW.read_text()
    assert "export default function register" in source
    # The prompt reaches the DOM as text: the module never parses strings as HTML.
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
        assert sink not in source
    await host.unload_plugin("ui-schedule")
    assert host.plugins.renderer_assets() == []


def test_the_plugin_has_no_runtime_hooks():
    hooks = {name for name in dir(ScheduleUIPlugin) if name.startswith("dsh_")}
    assert hooks == {"dsh_renderer_assets"}
