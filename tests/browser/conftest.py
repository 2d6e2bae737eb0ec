"""Real-browser fixtures: Debian's Chromium through Playwright (sync API, plain def tests),
and a real ``dsh serve`` process per test on a fresh data folder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from tests.procs import LISTENING, DshProcess

CHROMIUM = Path("/usr/bin/chromium")
OVERLAY = "examples/web-schedule/overlay.toml"


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():  # pragma: no cover - make test installs it with apt first
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/system-deps` (Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            yield launched
        finally:
            launched.close()


CSP_AUDIT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.effectiveDirective} ${event.blockedURI}`);
});
"""


class Page:
    """A page that records every page error and console error for the no-errors assertions."""

    def __init__(self, page) -> None:
        self.page = page
        self.errors: list[str] = []
        # Every Content-Security-Policy refusal, as the page saw it (Chromium also logs one as a
        # console error, so `errors == []` covers them; this keeps the directive for messages).
        page.add_init_script(CSP_AUDIT)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on(
            "console",
            lambda msg: (
                self.errors.append(f"console.{msg.type}: {msg.text}")
                if msg.type in ("error", "warning")
                else None
            ),
        )

    def csp_violations(self) -> list[str]:
        """The policy refusals the current document has seen (directive and blocked URI)."""
        return list(self.page.evaluate("window.__cspViolations"))


@pytest.fixture
def page(browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US")
    try:
        yield Page(context.new_page())
    finally:
        context.close()


class Server:
    def __init__(self, process: DshProcess, url: str, data: Path | str) -> None:
        self.process, self.url, self.data = process, url, data
        self.http = httpx.Client(base_url=url, timeout=10)

    def close(self) -> None:
        self.http.close()
        self.process.close()


def start_server(
    data: Path | str,
    *,
    model: str = "scripted",
    overlay: str | Path = OVERLAY,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> Server:
    """``dsh serve`` on ``data`` (a folder, or a ``postgresql://`` URL) on a free port; ``extra``
    are more ``dsh serve`` arguments (e.g. ``["--evict-idle", "1"]``), ``env`` more environment
    variables for the server (e.g. a ``PYTHONPATH`` publishing a test plugin)."""
    args = ["serve", "--overlay", str(overlay), "--data", str(data), "--port", "0"]
    process = DshProcess([*args, "--model", model, *extra], env=env)
    try:
        url = process.wait_for_line(LISTENING)[1]
    except BaseException:
        process.close()
        raise
    return Server(process, url, data)


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    running = start_server(tmp_path / "data")
    try:
        yield running
    finally:
        running.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)
