"""The example plugin of docs/plugins.md (``examples/plugin-tally``), loaded as a user loads it.

A user installs the example (``pip install -e examples/plugin-tally``) and starts ``dsh serve
--overlay examples/plugin-tally/overlay.toml``. Here the installation is a distribution on
``sys.path`` whose entry points are read from the example's own ``pyproject.toml``, so the
host resolves ``[plugins.tally]`` through the ``dsh.plugins`` group exactly as it would for an
installed package. The host then runs on SQLite (the default store) behind a real Web server
on 127.0.0.1 with the scripted model, and the test uses only what a client can: the plugin's
tool as a user action, a message its scripted phrase answers, and its Session view.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_hookspecs import ENTRY_POINT_GROUP, EventRejectedError
from dsh_host import LiveHost, Overlay, PluginLoadError
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import wait_until
from tests.web.support import serve

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin-tally"
VIEW = "tally.counts"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The example, as ``pip install -e`` leaves it: its package importable and a dist-info
    publishing the entry points its ``pyproject.toml`` declares."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    entry_points: dict[str, str] = project["entry-points"][ENTRY_POINT_GROUP]
    site = tmp_path / "site"
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.syspath_prepend(str(site))
    yield entry_points
    for module in [name for name in sys.modules if name.split(".")[0] == "dsh_tally"]:
        del sys.modules[module]


@pytest.fixture
async def host(installed: dict[str, str], tmp_path: Path) -> AsyncIterator[LiveHost]:
    """``dsh serve --overlay examples/plugin-tally/overlay.toml --model scripted``'s host."""
    assert installed == {"tally": "dsh_tally:TallyPlugin"}
    overlay = Overlay.load(EXAMPLE / "overlay.toml")
    backend = SQLiteBackend(tmp_path / "data")
    async with LiveHost(backend=backend, overlay=overlay, model="scripted") as running:
        assert running.plugins.names == ["tally"]
        yield running


@pytest.fixture
async def client(host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(host) as (_, http):
        yield http


async def _view(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    answer = await client.get(f"/api/sessions/{sid}/views")
    assert answer.status_code == 200, answer.text
    return answer.json()["views"][VIEW]


async def _said(client: httpx.AsyncClient, sid: str, count: int) -> list[str]:
    """The assistant's messages once there are ``count`` of them (a bounded wait)."""
    said: list[str] = []

    async def enough() -> bool:
        page = (await client.get(f"/api/sessions/{sid}/history")).json()["entries"]
        said[:] = [
            entry["event"]["data"]["text"]
            for entry in page
            if entry["event"]["type"] == "assistant/message"
        ]
        return len(said) >= count

    await wait_until(enough)
    return said


async def test_the_tool_the_view_and_the_phrase_of_the_example_plugin(client: httpx.AsyncClient):
    sid = (await client.post("/api/sessions", json={})).json()["id"]
    assert await _view(client, sid) == {"counts": {}, "badge": 0}

    # The tool, run as the user's action through the Session's Agent.
    answer = await client.post(
        f"/api/sessions/{sid}/tools/tally_add", json={"arguments": {"label": " coffee "}}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["value"] == {"label": "coffee", "count": 1}
    assert answer.json()["durable"] is True
    assert await _view(client, sid) == {"counts": {"coffee": 1}, "badge": 1}

    # The scripted phrase: the model calls the tool and words its answer.
    sent = await client.post(f"/api/sessions/{sid}/messages", json={"text": "count coffee"})
    assert sent.status_code == 202
    assert await _said(client, sid, 1) == ["coffee: 2 so far."]

    async def counted_twice() -> bool:
        return (await _view(client, sid))["counts"] == {"coffee": 2}

    await wait_until(counted_twice)  # the view follows once the turn's flush is acknowledged
    rows = (await client.get("/api/sessions")).json()["sessions"]
    assert next(row for row in rows if row["id"] == sid)["badges"] == {VIEW: 2}

    # A domain error is an answer, and records nothing; the help text quotes the example.
    await client.post(f"/api/sessions/{sid}/messages", json={"text": f"count {'x' * 41}"})
    await client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
    said = await _said(client, sid, 3)
    assert said[1] == ("I could not count that: label must be 1 to 40 characters after trimming.")
    assert '"count coffee"' in said[2]
    assert (await _view(client, sid))["counts"] == {"coffee": 2}


async def test_the_plugin_owns_its_event_type(host: LiveHost):
    agent = await host.create_session()
    with pytest.raises(EventRejectedError) as refused:
        agent.session.append("tally/add", {"label": ""})
    assert refused.value.plugin == "tally"
    assert [event.type for event in agent.session.events] == []


async def test_the_overlay_config_is_checked(installed: dict[str, str], tmp_path: Path):
    overlay = Overlay.from_document({"plugins": {"tally": {"max_label_chars": 0}}})
    host = LiveHost(backend=SQLiteBackend(tmp_path / "data"), overlay=overlay)
    with pytest.raises(PluginLoadError, match="max_label_chars must be a positive integer"):
        await host.start()
    assert host.plugins.names == []


def test_the_walkthrough_quotes_the_example_as_it_is():
    """Every line of docs/plugins.md's Python blocks is a line of the example, in order."""
    source = (EXAMPLE / "src" / "dsh_tally" / "__init__.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    doc = (EXAMPLE.parents[1] / "docs" / "plugins.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    assert len(blocks) >= 5
    for block in blocks:
        position = 0
        for line in block.splitlines():
            if not line.strip():
                continue
            assert line in lines[position:], (
                f"docs/plugins.md quotes a line the example lacks: {line!r}"
            )
            position = lines.index(line, position) + 1
