"""The nine o'clock herd, killed mid-delivery: see :mod:`tests.chaos.herd`.

Many cold Sessions, each with one ``at`` reminder due at the same instant, are delivered by real
``dsh serve`` processes through the durable wake index, by stored plans without resuming the
Sessions (on PostgreSQL each under its Session's lease): the killed host must have stored some. A
server is SIGKILLed while it is in the middle of the herd (some, not all, dispatches durable:
asserted from the store after the kill), and the herd is then finished by its restart (SQLite) or
by the other host and the restart (PostgreSQL, two hosts). Then, from the store: every Session
holds exactly one dispatch, none before the due instant, right after its one follow-up; every
follow-up reached the model in exactly one turn, answered (a turn the kill cut off is closed, never
re-run); nothing on disk at the kill is lost. And on screen: the delivered board shows each
delivered reminder exactly once and nothing pending; a page reload of Sessions of every stage at
the kill shows one card, one reminder turn and its reply; on SQLite, browser tabs held open across
the kill and restart (event streams resumed with ``Last-Event-ID``) show the same, never twice.

``DSH_HERD_KILL_N`` (default 2000) and ``DSH_HERD_KILL_PG_N`` (default 1000) size the herds;
``DSH_HERD_KILL_BOUND`` (default 90 s) bounds the wait for the herd to finish after the kill;
``DSH_CHAOS_SEED`` fixes the sampled Sessions.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dsh_host.persistence import PostgresBackend, SQLiteBackend
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster

from .figures import record
from .herd import (
    Audit,
    Herd,
    Serve,
    State,
    Store,
    Tabs,
    audit,
    build_herd,
    client,
    due_instant,
    sample_by_stage,
    screen_problems,
    settled,
    shown_problems,
    stage,
    states,
    wait_until,
)

pytestmark = [pytest.mark.chaos, pytest.mark.slow]

#: Every server evicts idle Sessions after 2 s, so the herd goes cold again as it is delivered.
EVICT = ("--evict-idle", "2")
#: Browser tabs held open across the kill (SQLite), and reloaded Sessions per stage at the kill.
TABS = 20
PER_STAGE = 5
LEASE = ("--lease-seconds", "2")


def _settings() -> tuple[float, int]:
    bound = float(os.environ.get("DSH_HERD_KILL_BOUND", "90"))
    seed = int(os.environ.get("DSH_CHAOS_SEED", str(random.randrange(2**32))))
    return bound, seed


def _mid_herd(n: int) -> int:
    """How many durable dispatches the kill waits for: a tenth of the herd (so it lands while
    most are still owed, even on a much faster engine)."""
    return max(1, n // 10)


def _mid_plans(store: Store, host: Serve, n: int) -> bool:
    """Whether the kill of ``host`` lands on the cold plan path, mid-herd: :func:`_mid_herd`
    dispatches are durable and ``host`` itself has stored plans (with two hosts the first
    durable dispatches can all be the other host's, while this one's first plans are still
    being written)."""
    return store.followups() >= _mid_herd(n) and host.logged_so_far("host.wake_planned") > 0


def _cut_off_by_kill(kill_states: dict[str, State], sids: set[str]) -> dict[str, str]:
    """Session id -> messageId of the reminder turns of ``sids`` that had started, and not
    ended, at the kill: the kill may have cut them off."""
    return {
        sid: str(state.followup)
        for sid, state in kill_states.items()
        if sid in sids and state.started and not state.ended
    }


async def _finish(
    serving: list[Serve], store: Store, herd: Herd, cut: dict[str, str], bound: float
) -> float | None:
    """Wait (bounded) until the herd settled; the seconds it took, or None when it did not."""
    followups = len(herd)

    def done() -> bool:
        return store.followups() >= followups and not settled(herd, store.logs(), set(cut))

    try:
        return await wait_until(
            done, bound, "the herd after the kill", alive=serving, interval=0.25
        )
    except TimeoutError:
        return None


def _verdict(
    herd: Herd,
    found: Audit,
    screen: dict[str, list[str]],
    findings: list[str],
    still_owed: list[str],
) -> dict[str, Any]:
    out: dict[str, Any] = dict(found.summary())
    out.update({f"on screen: {name}": problems for name, problems in screen.items()})
    if findings:
        out["server logs"] = findings[:5]
    if still_owed:
        out["still owed at the bound"] = [f"{len(still_owed)} Sessions", *still_owed[:5]]
    if found.figures["dispatches"] != len(herd):
        out["delivered"] = [f"{found.figures['dispatches']} of {len(herd)}"]
    return out


async def test_a_herd_killed_mid_delivery_is_delivered_once_after_the_restart(
    tmp_path: Path,
) -> None:
    n = int(os.environ.get("DSH_HERD_KILL_N", "2000"))
    bound, seed = _settings()
    where = f"seed {seed}, {n} Sessions"
    began = time.monotonic()
    data = tmp_path / "data"
    herd = await build_herd(SQLiteBackend(data), n, due_instant(5 + n / 500))
    built_s = time.monotonic() - began
    store = Store(data)
    assert store.wakes() == dict.fromkeys(herd.prompts, herd.due_ms), where
    tabs = Tabs(random.Random(seed).sample(sorted(herd.prompts), min(TABS, n)))

    first = Serve(data, EVICT, log_level="info")
    try:
        async with client(await first.listening()) as http:
            listening_before_due = time.time() * 1000 < herd.due_ms
            await tabs.open(http)
            wait_s = herd.due_ms / 1000 - time.time() + bound
            await wait_until(
                lambda: _mid_plans(store, first, n), wait_s, "mid-herd, plans stored", alive=[first]
            )
            first.kill()
            killed_at = time.time()
        await tabs.closed()
    finally:
        if first.alive():
            first.kill()
    at_kill = store.logs()
    kill_states = states(herd, at_kill)
    at_kill_stages = Counter(stage(state) for state in kill_states.values())
    delivered_at_kill = sum(state.dispatched for state in kill_states.values())
    assert 0 < delivered_at_kill < n, f"{where}: not mid-herd at the kill: {at_kill_stages}"
    cut = _cut_off_by_kill(kill_states, set(herd.prompts))
    sample = sample_by_stage(kill_states, PER_STAGE, seed)

    restarted = time.monotonic()
    second = Serve(data, EVICT, log_level="info")
    try:
        async with client(await second.listening()) as http:
            await tabs.open(http)
            settle_s = await _finish([second], store, herd, cut, bound)
            still_owed = settled(herd, store.logs(), set(cut))
            await tabs.resync(http)
            await tabs.closed(timeout=0)
            end = store.logs()
            found = audit(
                herd, end, at_kill, store.wakes(), is_cut_off=lambda s, m: cut.get(s) == m
            )
            screen = await screen_problems(http, herd, found, sample)
        assert await second.stop() == 0, where
    finally:
        if second.alive():
            second.kill()
    tab_problems = [f"{c}: {m}" for c, m in shown_problems(tabs.view, tabs.sids, found)]
    if tab_problems or tabs.failures:
        screen["tabs"] = (tab_problems + tabs.failures)[:8]
    findings = first.findings() + second.findings()
    planned = (first.logged("host.wake_planned"), second.logged("host.wake_planned"))
    figures = {
        "seed": seed,
        "sessions": n,
        "plans stored by the killed host, by the restart": list(planned),
        "build seconds": round(built_s, 1),
        "listening before the due instant": listening_before_due,
        "killed seconds after the due instant": round(killed_at - herd.due_ms / 1000, 2),
        "at the kill": dict(at_kill_stages),
        "restart to settled seconds": None if settle_s is None else round(settle_s, 1),
        "seconds after the restart": round(time.monotonic() - restarted, 1),
        "seconds": round(time.monotonic() - began, 1),
        "frames shown in tabs": tabs.view.figures["frames shown"],
        **found.figures,
    }
    record("herd", "sqlite", figures)
    verdict = _verdict(herd, found, screen, findings, still_owed)
    assert verdict == {}, f"{where}: {verdict}\n{figures}"


async def test_a_herd_on_two_hosts_with_one_killed_mid_delivery_is_delivered_once(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    n = int(os.environ.get("DSH_HERD_KILL_PG_N", "1000"))
    bound, seed = _settings()
    where = f"seed {seed}, {n} Sessions on two hosts"
    began = time.monotonic()
    url = pg_cluster.new_database()
    herd = await build_herd(PostgresBackend(url), n, due_instant(5 + n / 250))
    built_s = time.monotonic() - began
    store = Store(url)
    assert store.wakes() == dict.fromkeys(herd.prompts, herd.due_ms), where

    killed = Serve(url, (*EVICT, *LEASE, "--host-id", "herd-a"), log_level="info")
    other = Serve(url, (*EVICT, *LEASE, "--host-id", "herd-b"), log_level="info")
    serving = [killed, other]
    restart: Serve | None = None
    try:
        await asyncio.gather(killed.listening(), other.listening())
        listening_before_due = time.time() * 1000 < herd.due_ms
        wait_s = herd.due_ms / 1000 - time.time() + bound
        await wait_until(
            lambda: _mid_plans(store, killed, n),
            wait_s,
            "mid-herd, the host to kill storing plans",
            alive=serving,
        )
        killed.kill()
        killed_at = time.time()
        # Read at once, before the dead host's leases run out (then the other takes them).
        owners = store.owners()
        delivered_at_kill = store.followups()
        at_kill = store.logs()
        assert 0 < delivered_at_kill < n, f"{where}: not mid-herd: {delivered_at_kill} delivered"
        held = {sid for sid, owner in owners.items() if owner == "herd-a"}
        assert held, f"{where}: the killed host held no Session of the herd"
        kill_states = states(herd, at_kill)
        at_kill_stages = Counter(stage(state) for state in kill_states.values())
        cut = _cut_off_by_kill(kill_states, held)
        sample = sample_by_stage(
            {sid: kill_states[sid] for sid in held}, PER_STAGE, seed
        ) + sample_by_stage(kill_states, 2, seed)

        restarted = time.monotonic()
        restart = Serve(url, (*EVICT, *LEASE, "--host-id", "herd-a2"), log_level="info")
        await restart.listening()
        serving = [other, restart]
        settle_s = await _finish(serving, store, herd, cut, bound)
        still_owed = settled(herd, store.logs(), set(cut))
        end = store.logs()
        found = audit(herd, end, at_kill, store.wakes(), is_cut_off=lambda s, m: cut.get(s) == m)
        async with client(other.url) as http:
            screen = await screen_problems(http, herd, found, sample)
        for serve in serving:
            assert await serve.stop() == 0, where
    finally:
        for serve in (killed, other, *([restart] if restart is not None else [])):
            if serve.alive():
                serve.kill()
    assert restart is not None
    findings = killed.findings() + other.findings() + restart.findings()
    planned = [serve.logged("host.wake_planned") for serve in (killed, other, restart)]
    figures = {
        "plans stored by the killed host, the other, the restart": planned,
        "seed": seed,
        "sessions": n,
        "build seconds": round(built_s, 1),
        "listening before the due instant": listening_before_due,
        "killed seconds after the due instant": round(killed_at - herd.due_ms / 1000, 2),
        "follow-ups durable at the kill": delivered_at_kill,
        "Sessions the killed host held": len(held),
        "stages just after the kill": dict(at_kill_stages),
        "restart to settled seconds": None if settle_s is None else round(settle_s, 1),
        "seconds after the restart": round(time.monotonic() - restarted, 1),
        "seconds": round(time.monotonic() - began, 1),
        **found.figures,
    }
    record("herd", "two-hosts", figures)
    verdict = _verdict(herd, found, screen, findings, still_owed)
    assert verdict == {}, f"{where}: {verdict}\n{figures}"
