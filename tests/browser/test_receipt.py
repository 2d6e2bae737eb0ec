"""The keyless receipt scenario and the main job, in Debian's Chromium against ``dsh serve``."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.api import dispatches, history, new_session, wait_for

pytestmark = pytest.mark.browser

PROMPT = "Check the deployment log"
ROW = "section[role=note][data-schedule-reminder]"


def dispatch_entry(server, sid):
    found = dispatches(history(server, sid))
    return found[0] if found else None


def stored_events(server, sid):
    """Read the stored log straight from the SQLite file (read-only, beside the server)."""
    uri = f"file:{server.data / 'dsh.sqlite3'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = conn.execute(
            "SELECT seq, type, time, data FROM events WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
        (header,) = conn.execute("SELECT header FROM sessions WHERE id = ?", (sid,)).fetchone()
    events = [{"seq": s, "type": t, "time": tm, "data": json.loads(d)} for s, t, tm, d in rows]
    return json.loads(header), events


def create_reminder(server, prompt, after=1):
    sid = new_session(server)
    arguments = json.dumps({"prompt": prompt, "after_seconds": after})
    accepted = server.http.post(
        f"/api/sessions/{sid}/messages", json={"text": f"/tool schedule_create {arguments}"}
    )
    assert accepted.status_code == 202
    return sid


def test_keyless_receipt_scenario(server, page):
    sid = create_reminder(server, PROMPT)
    entry = wait_for(lambda: dispatch_entry(server, sid))
    flushed = server.http.post(f"/api/sessions/{sid}/flush").json()
    assert flushed["durable"] is True
    # The stored prefix is identity-matched with the live log, so history carries the view.
    header, stored = stored_events(server, sid)
    live = [e["event"] for e in history(server, sid)]
    assert header["id"] == sid
    assert stored == live[: len(stored)]
    entry = dispatch_entry(server, sid)
    assert entry["view"] == {
        "for": "event",
        "view": {
            "scheduleId": "schedule-1",
            "prompt": PROMPT,
            "occurrenceAt": entry["view"]["view"]["occurrenceAt"],
            "deliveryMode": "session-local",
        },
    }
    # A reminder turn started after the dispatch.
    types = [e["type"] for e in live]
    assert types.index("schedule/change", types.index("tool/result") + 1) < len(types)
    assert any(e["type"] == "turn/start" and e["seq"] > entry["event"]["seq"] for e in live)

    p = page.page
    p.goto(f"{server.url}/?session={sid}")
    row = p.locator(ROW)
    expect(row).to_have_count(1)
    expect(row).to_contain_text(PROMPT)
    expect(row.locator(".schedule-card-label")).to_have_text("Reminder")
    expect(row.locator(".schedule-reminder-prompt")).to_have_text(PROMPT)
    expect(row).to_contain_text("Delivered in this session only")
    expect(row).to_have_attribute("data-schedule-id", "schedule-1")
    due = row.locator("time").first
    expect(due).to_have_attribute("datetime", entry["view"]["view"]["occurrenceAt"])
    expect(due).to_have_text(re.compile(r"^Due today \d\d:\d\d$"))
    expect(due).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    # The reminder's text is the largest thing on the card.
    sizes = row.evaluate(
        "card => [...card.querySelectorAll('p, time')].map(e => "
        "[e.className, parseFloat(getComputedStyle(e).fontSize)])"
    )
    prompt_size = dict(sizes)["schedule-reminder-prompt"]
    assert all(size < prompt_size for name, size in sizes if name != "schedule-reminder-prompt")
    p.locator("[data-locale=zh]").click()
    expect(row.locator(".schedule-card-label")).to_have_text("提醒")
    expect(row).to_contain_text("仅在当前会话中交付")
    expect(due).to_have_text(re.compile(r"^到期 今天 \d\d:\d\d$"))
    expect(row).to_contain_text(PROMPT)
    p.reload()
    expect(p.locator(ROW)).to_contain_text("仅在当前会话中交付")  # the switch is persisted
    assert page.errors == []
    assert page.csp_violations() == []


HOSTILE = (
    '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    '<b>bold</b> & "quotes" </section>'
)


def test_a_prompt_full_of_html_and_script_renders_as_inert_text(server, page):
    sid = create_reminder(server, HOSTILE)
    wait_for(lambda: dispatch_entry(server, sid))
    assert server.http.post(f"/api/sessions/{sid}/flush").json()["durable"] is True
    p = page.page
    p.goto(f"{server.url}/?session={sid}")
    row = p.locator(ROW)
    expect(row).to_have_count(1)
    expect(row.locator(".schedule-reminder-prompt")).to_have_text(HOSTILE)
    expect(row).to_have_attribute("data-notify", HOSTILE)
    assert row.locator("img, script, b").count() == 0
    assert p.locator("[data-testid=transcript] img, [data-testid=transcript] b").count() == 0
    assert p.evaluate("window.__xss") is None
    assert page.errors == []
    assert page.csp_violations() == []


def test_the_policy_refuses_inline_script_and_style_but_not_the_page_itself(server, page):
    """The page runs under its Content-Security-Policy without a single refusal, and markup that
    slipped past every other defence would still not run: inline script, an inline handler,
    inline style and a foreign script are refused."""
    sid = create_reminder(server, PROMPT)
    wait_for(lambda: dispatch_entry(server, sid))
    p = page.page
    p.goto(f"{server.url}/?session={sid}")
    expect(p.locator(ROW)).to_have_count(1)
    assert page.csp_violations() == []
    p.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.__inline = 1";
          document.body.append(script);
          const img = document.createElement("img");
          img.setAttribute("onerror", "window.__handler = 1");
          img.src = "/static/missing.png";
          document.body.append(img);
          const styled = document.createElement("div");
          styled.id = "styled";
          styled.setAttribute("style", "color: rgb(1, 2, 3)");
          document.body.append(styled);
          const foreign = document.createElement("script");
          foreign.src = "https://example.invalid/x.js";
          document.body.append(foreign);
        }"""
    )
    wait_for(lambda: len(page.csp_violations()) >= 4)
    directives = {v.split(" ", 1)[0] for v in page.csp_violations()}
    assert {"script-src-elem", "script-src-attr", "style-src-attr"} <= directives, (
        page.csp_violations()
    )
    assert p.evaluate("window.__inline") is None
    assert p.evaluate("window.__handler") is None
    assert p.evaluate("getComputedStyle(document.getElementById('styled')).color") != (
        "rgb(1, 2, 3)"
    )
    page.errors.clear()  # the refusals above are logged as console errors, on purpose


def test_main_job_plain_words_show_the_tool_result_then_the_reminder_and_its_card(server, page):
    p = page.page
    p.goto(server.url)
    p.locator("[data-testid=new-session]").click()
    expect(p.locator("[data-testid=composer]")).to_be_enabled()
    p.locator("[data-testid=composer]").fill("remind me in 1 seconds to stretch")
    p.locator("[data-testid=send]").click()
    transcript = p.locator("[data-testid=transcript]")
    expect(transcript.locator("[data-kind=tool-result]")).to_have_count(1, timeout=15_000)
    expect(transcript).to_contain_text("schedule-1")
    expect(transcript.locator(ROW)).to_contain_text("stretch", timeout=15_000)
    expect(transcript).to_contain_text("Reminder: stretch", timeout=15_000)
    assert "session=" in p.url
    assert page.errors == []


def test_after_a_restart_opening_the_session_delivers_the_overdue_reminder_and_its_card(
    tmp_path, page
):
    from tests.browser.conftest import start_server

    data = tmp_path / "data"
    # Without cold delivery: with it, the restarted host delivers the overdue reminder on its own
    # within a fraction of a second, racing the page that is to show the Session cold.
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(
        "[plugins.schedule]\ncold_delivery = false\n\n[plugins.ui-schedule]\n", encoding="utf-8"
    )
    first = start_server(data, overlay=overlay)
    try:
        sid = create_reminder(first, "Stretch your legs", after=1)
        wait_for(
            lambda: any(
                e["event"]["type"] == "tool/result" and "id" in e["event"]["data"]["value"]
                for e in history(first, sid)
            )
        )
    finally:
        first.process.kill()
        first.close()
    second = start_server(data, overlay=overlay)
    try:
        p = page.page
        # Opening the Session just opens it (issue 25 item 4): the page resumes it, with no
        # cold banner and no Resume button, and the overdue reminder's card arrives.
        p.goto(f"{second.url}/?session={sid}")
        expect(p.locator(ROW)).to_contain_text("Stretch your legs", timeout=15_000)
        assert p.locator("[data-testid=session-note], [data-testid=resume]").count() == 0
        assert second.http.get("/api/sessions").json()["sessions"][0]["live"] is True
        assert page.errors == []
    finally:
        second.close()
