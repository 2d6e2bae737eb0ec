"""Reminders reach people outside the tab: real ``dsh serve`` processes, real receivers on
loopback (a JSON webhook that drops a repeat by key, an ntfy-compatible server, an SMTP server),
no browser open.

Each case builds Sessions whose one reminder falls due a few seconds ahead (the Schedule tool as a
user action on an in-process host, the herd of the crash tests), then serves them with channels
configured through ``DSH_NOTIFY_URLS`` and checks what each receiver got: exactly one message per
reminder and channel, carrying the deterministic key, across a receiver that is down for a while,
one that refuses, a SIGKILL in the middle of a send, and two hosts sharing PostgreSQL. The
configured secret never shows in the logs, the database, the HTTP answers or the page.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_host.persistence import PostgresBackend, SQLiteBackend
from tests.chaos.herd import Herd, Serve, build_herd, due_instant, wait_until
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster

from .receivers import SmtpReceiver, WebhookReceiver

pytestmark = pytest.mark.slow

SECRET = "s3cr3t-T0KEN-5f1e9"
FAST = (
    "--notify-retry-base",
    "0.3",
    "--notify-timeout",
    "1",
    "--notify-allow-private",
    "127.0.0.1",
)


def env_with(*urls: str) -> dict[str, str]:
    return {"DSH_NOTIFY_URLS": " ".join(urls)}


class Served(Serve):
    """``dsh serve`` with channels from the environment (never on its command line)."""

    def __init__(self, data: Path | str, urls: Sequence[str], extra: Sequence[str] = ()) -> None:
        previous = os.environ.get("DSH_NOTIFY_URLS")
        os.environ["DSH_NOTIFY_URLS"] = " ".join(urls)
        try:
            super().__init__(data, extra)
        finally:
            if previous is None:
                del os.environ["DSH_NOTIFY_URLS"]
            else:
                os.environ["DSH_NOTIFY_URLS"] = previous


async def herd_on_sqlite(folder: Path, n: int, seconds: float = 4.0) -> Herd:
    folder.mkdir(parents=True, exist_ok=True)
    return await build_herd(SQLiteBackend(folder), n, due_instant(seconds))


async def notices(url: str, sid: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        answer = await http.get(f"/api/sessions/{sid}/notices")
        answer.raise_for_status()
        found: list[dict[str, Any]] = answer.json()["notices"]
        return found


def key_of(herd: Herd, sid: str, channel_prefix: str = "") -> str:
    return f"{sid}/schedule/schedule-1@{herd.due_text}/{channel_prefix}"


def stored_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


async def test_a_reminder_reaches_each_receiver_once_with_its_key_and_no_tab_open(
    tmp_path: Path,
) -> None:
    with WebhookReceiver() as hook, WebhookReceiver() as ntfy, SmtpReceiver(SECRET) as smtp:
        herd = await herd_on_sqlite(tmp_path / "data", 3)
        urls = [
            hook.url(path=f"/hook/{SECRET}"),
            f"ntfy://127.0.0.1:{ntfy.port}/reminders?image=no",
            smtp.url(),
        ]
        serve = Served(tmp_path / "data", urls, FAST)
        try:
            url = await serve.listening()
            await wait_until(
                lambda: (
                    len(hook.unique_keys()) == 3
                    and len(ntfy.taken()) == 3
                    and len(smtp.taken()) == 3
                ),
                30,
                "every receiver has all three",
                alive=[serve],
            )
            # Each receiver got exactly one message per reminder, keyed by Session, reminder,
            # occurrence and channel.
            assert len(hook.taken()) == 3
            keys = sorted(hook.unique_keys())
            assert [k.rsplit("/", 1)[0] + "/" for k in keys] == sorted(
                key_of(herd, sid) for sid in herd.prompts
            )
            for request in hook.taken():
                body = request.json()
                sid = request.header("X-Idempotency-Key").split("/")[0]  # type: ignore[union-attr]
                assert herd.prompts[sid] in body["message"]
                assert body["key"] == request.header("X-Idempotency-Key")
            mails = smtp.taken()
            assert {m["Subject"] for m in mails} == {
                "Reminder: " + prompt for prompt in herd.prompts.values()
            }
            assert all("Reminder key: " in m.get_content() for m in mails)
            # The page says where each one went; the secret never shows.
            sid = next(iter(herd.prompts))
            await wait_until_async(
                lambda: notices(url, sid),
                lambda rows: {r["status"] for r in rows} == {"delivered"} and len(rows) == 3,
            )
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                answers = [
                    (await http.get(path)).text
                    for path in (
                        "/",
                        "/api/notify",
                        f"/api/sessions/{sid}/notices",
                        "/api/sessions",
                    )
                ]
            assert not [a for a in answers if SECRET in a]
            assert await serve.stop() == 0
        finally:
            if serve.alive():
                serve.kill()
        assert SECRET not in "".join(serve.proc.stderr_lines)
        assert SECRET.encode() not in stored_bytes(tmp_path / "data")


async def wait_until_async(read: Any, holds: Any, timeout: float = 30.0) -> Any:
    """Read ``read()`` until ``holds(value)`` (bounded); the value."""
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"still {value!r}")
        await asyncio.sleep(0.05)  # the poll interval of a bounded wait


async def test_a_receiver_down_for_a_while_gets_the_message_once_it_is_back(
    tmp_path: Path,
) -> None:
    with WebhookReceiver() as hook:
        herd = await herd_on_sqlite(tmp_path / "data", 1, 3.0)
        [sid] = herd.prompts
        hook.go_down()
        serve = Served(tmp_path / "data", [hook.url()], FAST)
        try:
            url = await serve.listening()
            rows = await wait_until_async(
                lambda: notices(url, sid),
                lambda rows: rows and rows[0]["status"] == "pending" and rows[0]["attempts"] >= 1,
            )
            assert rows[0]["error"] == "could not connect"
            hook.come_up()
            await wait_until(lambda: len(hook.taken()) == 1, 30, "delivered", alive=[serve])
            rows = await wait_until_async(
                lambda: notices(url, sid), lambda rows: rows[0]["status"] == "delivered"
            )
            assert rows[0]["attempts"] >= 2
            assert await serve.stop() == 0
        finally:
            if serve.alive():
                serve.kill()
        assert len(hook.taken()) == 1


async def test_a_refusing_receiver_is_failed_and_shown_and_never_retried(tmp_path: Path) -> None:
    with WebhookReceiver() as bad, WebhookReceiver() as good:
        bad.answer(401)
        herd = await herd_on_sqlite(tmp_path / "data", 1, 3.0)
        [sid] = herd.prompts
        serve = Served(tmp_path / "data", [bad.url(), good.url()], FAST)
        try:
            url = await serve.listening()
            rows = await wait_until_async(
                lambda: notices(url, sid),
                lambda rows: (
                    len(rows) == 2 and {r["status"] for r in rows} == {"failed", "delivered"}
                ),
            )
            [failed] = [r for r in rows if r["status"] == "failed"]
            assert failed["error"] == "401 Unauthorized (check the address)"
            assert failed["attempts"] == 1
            assert await serve.stop() == 0
        finally:
            if serve.alive():
                serve.kill()
        assert (len(bad.taken()), len(good.taken())) == (1, 1)


async def test_a_host_killed_mid_send_sends_once_after_the_restart(tmp_path: Path) -> None:
    """SIGKILL while the webhook's request is in flight (the receiver took it and never
    answered), then restart: the entry's claim runs out, and the new host sends it again with
    the same key, which the receiver drops; one that never left is sent once."""
    with WebhookReceiver() as hook, WebhookReceiver() as later:
        hook.hang()
        later.go_down()
        herd = await herd_on_sqlite(tmp_path / "data", 1, 3.0)
        [sid] = herd.prompts
        urls = [hook.url(), later.url()]
        first = Served(
            tmp_path / "data",
            urls,
            ("--notify-retry-base", "60", "--notify-timeout", "2", "--notify-allow-private", "*"),
        )
        second: Served | None = None
        try:
            await first.listening()
            await wait_until(lambda: len(hook.taken()) == 1, 30, "the send left", alive=[first])
            first.kill()
            hook.answer(200)
            later.come_up()
            second = Served(tmp_path / "data", urls, FAST)
            url = await second.listening()
            await wait_until_async(
                lambda: notices(url, sid),
                lambda rows: len(rows) == 2 and {r["status"] for r in rows} == {"delivered"},
                timeout=90,
            )
            assert await second.stop() == 0
        finally:
            for serve in (first, second):
                if serve is not None and serve.alive():
                    serve.kill()
        # The hung request and its resend: one key, which the receiver keeps once.
        assert len(hook.taken()) == 2
        assert len(hook.unique_keys()) == 1
        # The one that was waiting for its retry when the host died: sent once.
        assert len(later.taken()) == 1


async def test_two_hosts_on_postgresql_send_each_entry_once(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    url = pg_cluster.new_database()
    n = 40
    herd = await build_herd(PostgresBackend(url), n, due_instant(6))
    with WebhookReceiver() as hook:
        hosts = [
            Served(url, [hook.url()], (*FAST, "--host-id", name)) for name in ("reach-a", "reach-b")
        ]
        try:
            await asyncio.gather(*(host.listening() for host in hosts))
            await wait_until(
                lambda: len(hook.unique_keys()) == n, 60, "every reminder sent", alive=hosts
            )
            for host in hosts:
                assert await host.stop() == 0
        finally:
            for host in hosts:
                if host.alive():
                    host.kill()
        assert len(hook.taken()) == n  # one host sent each entry: no repeat at all
        assert {key.split("/")[0] for key in hook.unique_keys()} == set(herd.prompts)
