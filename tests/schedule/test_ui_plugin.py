"""dsh_schedule_ui: the renderer assets it registers through the host."""

from __future__ import annotations

from dsh_hookspecs import RendererAsset
from dsh_schedule_ui import MODULES, REMINDER_ROW, STATIC, STYLESHEET, ScheduleUIPlugin


async def test_ui_schedule_registers_its_modules_then_its_stylesheet(host):
    host.load_plugin("ui-schedule")
    assets = host.plugins.renderer_assets()
    assert assets == [
        (
            "ui-schedule",
            RendererAsset(name="schedule-words", path=str(STATIC / "schedule-words.js")),
        ),
        ("ui-schedule", RendererAsset(name="schedule-dom", path=str(STATIC / "schedule-dom.js"))),
        ("ui-schedule", RendererAsset(name="occurrence", path=str(STATIC / "occurrence.js"))),
        ("ui-schedule", RendererAsset(name="sent-notices", path=str(STATIC / "sent-notices.js"))),
        (
            "ui-schedule",
            RendererAsset(name="occurrence-controls", path=str(STATIC / "occurrence-controls.js")),
        ),
        (
            "ui-schedule",
            RendererAsset(
                name="reminder-row", path=str(REMINDER_ROW), event_types=("schedule/change",)
            ),
        ),
        (
            "ui-schedule",
            RendererAsset(name="tool-summaries", path=str(STATIC / "tool-summaries.js")),
        ),
        ("ui-schedule", RendererAsset(name="panel-state", path=str(STATIC / "panel-state.js"))),
        ("ui-schedule", RendererAsset(name="edit-form", path=str(STATIC / "edit-form.js"))),
        (
            "ui-schedule",
            RendererAsset(name="reminders-panel", path=str(STATIC / "reminders-panel.js")),
        ),
        (
            "ui-schedule",
            RendererAsset(name="all-reminders", path=str(STATIC / "all-reminders.js")),
        ),
        ("ui-schedule", RendererAsset(name="schedule", path=str(STYLESHEET))),
    ]
    for name in MODULES:
        source = (STATIC / f"{name}.js").read_text()
        assert "export default function register" in source
        # Session text reaches the DOM as text: no module ever parses strings as HTML.
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
            assert sink not in source
    assert STYLESHEET.is_file()
    await host.unload_plugin("ui-schedule")
    assert host.plugins.renderer_assets() == []


def test_every_module_file_is_registered():
    # The host serves a plugin's asset only when it is registered: a module the others import
    # but that is not registered would not load in the page.
    assert sorted(MODULES) == sorted(path.stem for path in STATIC.glob("*.js"))
    assert len(set(MODULES)) == len(MODULES)


def test_the_plugin_has_no_runtime_hooks():
    hooks = {name for name in dir(ScheduleUIPlugin) if name.startswith("dsh_")}
    assert hooks == {"dsh_renderer_assets"}
