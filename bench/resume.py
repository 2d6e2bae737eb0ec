"""Resume cost: the Schedule plugin's share of bringing cold Sessions live.

Data: 1,000 cold Sessions of 1,000 events each (plus 20 more for warm-up), written straight
through ``SQLiteBackend.append`` (one request per Session, many Sessions per group commit).
Every Session looks like a host-written log: plain turns, 20 ``schedule_create`` turns
(``tool/call``, ``schedule/change`` create, ``tool/result``), 15 delivered reminders
(``agent/followup`` + ``schedule/change`` dispatch, then the follow-up's turn) and 5 reminders
still active a day ahead (so resuming dispatches nothing). Every follow-up has its turn, so no
inbox is restored. Then every Session is resumed once with the plugin and flushed, as on a host
that ran the plugin: the store holds its board rows and each Session's name (a log written
straight through ``append`` has neither, and the first resume would write them).

Measurement: the data folder is copied once per pass; each pass opens a fresh LiveHost on its copy
(SQLite WAL, ``synchronous=FULL``, real clock), resumes the 20 warm-up Sessions (not counted),
then times resuming the 1,000 measured Sessions one after the other with ``LiveHost.resume_session``
(cold -> live: load, publish the root Agent, plugins' hooks) until everything the resumes
started has settled (every task done, every resumed Session flushed). After one uncounted
warm-up pass per variant (200 Sessions), the measured passes alternate without / with the
plugin (4 of each, ABBA). The plugin's share is (with - without) / with on each variant's best
(fastest) pass, the least disturbed by other load on a shared machine, beside the same share of
process CPU time (all threads) and the share computed on the means of all passes. GC s is the
time Python's cyclic collector ran during a pass. One more pass with the plugin's two
resume-time hooks timed shows its synchronous share directly.

Target: the plugin's share < 10%.

Run: ``.venv/bin/python bench/resume.py`` (or ``make bench``). Prints a table, writes JSON.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from dsh_hookspecs import Event, JSONValue, SessionHeader, hookimpl
from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import wait_until
from dsh_schedule import (
    AfterRecord,
    Create,
    Dispatch,
    SchedulePlugin,
    encode_change,
    format_instant,
    reminder_framing,
)
from dsh_schedule._record_fields import record_answer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
from _common import latency_summary, publish, ratio, target

from dsh_host.persistence import Write

SESSIONS = 1_000
EVENTS = 1_000
WARMUP = 20
CREATES = 20
DISPATCHED = 15
ROUNDS = 4
WARMUP_PASS = 200
WRITE_CHUNK = 50
TARGET_SHARE = 0.10


class LogWriter:
    """Builds one Session's events the way the host would have written them."""

    def __init__(self, start_ms: int) -> None:
        self.events: list[Event] = []
        self.now = start_ms

    def add(self, kind: str, data: JSONValue) -> None:
        self.now += 2_000  # an event every 2 s
        self.events.append(Event(seq=len(self.events), type=kind, time=self.now, data=data))

    def turn(self, text: str, replies: int = 1, source: JSONValue = None) -> None:
        message = uuid.uuid4().hex
        self.add("turn/start", {"messageId": message})
        user: dict[str, JSONValue] = {"text": text}
        if source is not None:
            user["source"] = source
        self.add("user/message", user)
        for index in range(replies):
            self.add("assistant/message", {"text": f"Answer {index} to: {text} " + "lorem " * 12})
        self.add("turn/end", {"outcome": "ok"})

    def create(self, number: int, due_ms: int) -> AfterRecord:
        after = max(1, (due_ms - self.now) // 1000)
        record = AfterRecord(
            id=f"schedule-{number}",
            kind="after",
            prompt=f"reminder number {number}: check the deploy",
            after_seconds=after,
            scheduled_at=format_instant(self.now + after * 1000),
        )
        call = uuid.uuid4().hex
        self.add("turn/start", {"messageId": uuid.uuid4().hex})
        self.add("user/message", {"text": f"remind me in {after} seconds to {record.prompt}"})
        arguments: JSONValue = {"prompt": record.prompt, "after_seconds": after}
        self.add("tool/call", {"callId": call, "name": "schedule_create", "arguments": arguments})
        self.add("schedule/change", encode_change(Create(record=record)))
        value = record_answer(record, self.now)
        self.add("tool/result", {"callId": call, "name": "schedule_create", "value": value})
        self.add("assistant/message", {"text": f"Done: reminder {record.id} is set."})
        self.add("turn/end", {"outcome": "ok"})
        return record

    def dispatch(self, record: AfterRecord) -> None:
        message = uuid.uuid4().hex
        text = reminder_framing(record)
        source: JSONValue = {"kind": "plugin", "plugin": "schedule"}
        self.add("agent/followup", {"messageId": message, "text": text, "source": source})
        self.add("schedule/change", encode_change(Dispatch(id=record.id)))
        self.add("turn/start", {"messageId": message})
        self.add("user/message", {"text": text, "source": source})
        self.add("assistant/message", {"text": f"Reminder: {record.prompt}"})
        self.add("turn/end", {"outcome": "ok"})


def session_log(start_ms: int, now_ms: int) -> list[Event]:
    """EVENTS events: creates and dispatches spread among plain turns, ending in a plain turn."""
    log = LogWriter(start_ms)
    schedule_every = (EVENTS - 100) // (CREATES + DISPATCHED)
    pending: list[AfterRecord] = []
    created = 0
    step = 0
    while len(log.events) < EVENTS - 40:
        step += 1
        if step % (schedule_every // 4) == 0 and created < CREATES:
            created += 1
            due = log.now + 10_000 if created <= DISPATCHED else now_ms + 86_400_000
            record = log.create(created, due)
            if created <= DISPATCHED:
                pending.append(record)
        elif step % (schedule_every // 4) == 2 and pending:
            log.dispatch(pending.pop(0))
        else:
            log.turn(f"question {step}")
    while pending:
        log.dispatch(pending.pop(0))
    while created < CREATES:
        created += 1
        log.create(created, now_ms + 86_400_000)
    while len(log.events) + 4 <= EVENTS:
        log.turn("and another thing")
    missing = EVENTS - len(log.events)
    if missing:
        # Lengthen the last turn by ``missing`` replies (insert before its turn/end).
        end = log.events.pop()
        for _ in range(missing):
            log.add("assistant/message", {"text": "one more thing " + "lorem " * 8})
        log.add(end.type, end.data)
    assert len(log.events) == EVENTS
    return log.events


async def write_data(folder: Path) -> list[str]:
    """Write WARMUP + SESSIONS Sessions; return their ids (warm-up ones first)."""
    backend = SQLiteBackend(folder)
    await backend.open()
    now = time.time_ns() // 1_000_000
    ids = []
    try:
        for start in range(0, WARMUP + SESSIONS, WRITE_CHUNK):
            batch = []
            for _ in range(start, min(start + WRITE_CHUNK, WARMUP + SESSIONS)):
                sid = uuid.uuid4().hex
                created = now - 86_400_000
                header = SessionHeader(version=1, id=sid, created_at=created)
                batch.append(backend.append(Write(sid, 0, session_log(created, now), header)))
                ids.append(sid)
            await asyncio.gather(*batch)
    finally:
        await backend.close()
    return ids


async def settle(background: set[asyncio.Task[Any]], timeout: float = 120.0) -> None:
    """Wait until every task except ``background`` (e.g. the storage writer) and this one is
    done."""
    ignore = {*background, asyncio.current_task()}
    await wait_until(lambda: all(t.done() for t in asyncio.all_tasks() - ignore), timeout=timeout)


class GCTimer:
    """A ``gc.callbacks`` entry adding up the time the cyclic collector ran."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.full += info["generation"] == 2


class TimedPlugin(SchedulePlugin):
    """The Schedule plugin with its two resume-time hooks timed (the instrumented pass only)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = {"dsh_session_opened": 0.0, "dsh_agent_published": 0.0}

    @hookimpl
    def dsh_session_opened(self, session: Any, reason: Any) -> None:
        started = time.perf_counter()
        try:
            super().dsh_session_opened(session, reason)
        finally:
            self.seconds["dsh_session_opened"] += time.perf_counter() - started

    @hookimpl
    def dsh_agent_published(self, agent: Any) -> Any:
        started = time.perf_counter()
        try:
            return super().dsh_agent_published(agent)
        finally:
            self.seconds["dsh_agent_published"] += time.perf_counter() - started


async def resume_pass(
    folder: Path, ids: list[str], plugin: bool, *, instrumented: bool = False
) -> dict[str, Any]:
    backend = SQLiteBackend(folder)
    async with LiveHost(backend=backend) as host:
        if plugin:
            host.load_plugin("schedule", factory=TimedPlugin if instrumented else None)
        background = asyncio.all_tasks()
        for sid in ids[:WARMUP]:
            await host.resume_session(sid)
        await settle(background)
        measured = ids[WARMUP:]
        per_call: list[float] = []
        commits = backend.commits
        collector = GCTimer()
        gc.callbacks.append(collector)
        started = time.perf_counter()
        cpu = time.process_time()
        for sid in measured:
            begun = time.perf_counter()
            agent = await host.resume_session(sid)
            per_call.append(time.perf_counter() - begun)
            assert agent.phase == "idle"
        calls_done = time.perf_counter() - started
        await settle(background)
        for sid in measured:
            session = host.sessions.get(sid)
            assert session is not None
            assert await host.sessions.flush(session)
        await settle(background)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        gc.callbacks.remove(collector)
        loaded = host.plugins.pm.get_plugin("schedule")
        owners = len(loaded.owners) if plugin else 0
        hook_ms = (
            {
                name: round(seconds / len(measured) * 1000, 4)
                for name, seconds in loaded.seconds.items()
            }
            if instrumented
            else {}
        )
        lengths = {len(host.sessions.get(sid).events) for sid in measured}  # type: ignore[union-attr]
        return {
            "plugin": plugin,
            "sessions": len(measured),
            "seconds": round(elapsed, 3),
            "resume_calls_s": round(calls_done, 3),
            "cpu_s": round(cpu, 3),
            "gc_s": round(collector.seconds, 3),
            "gc_full_collections": collector.full,
            "per_session_ms": round(elapsed / len(measured) * 1000, 3),
            "resume_call": latency_summary(per_call),
            "owners": owners,
            "live_lengths": sorted(lengths),
            "commits": backend.commits - commits,
            "hook_ms_per_session": hook_ms,
        }


async def measure() -> tuple[list[dict[str, Any]], dict[str, Any], float]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-resume-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        ids = await write_data(root / "data")
        # A store the plugin has run on holds its board rows and the Sessions' names (both are
        # written with the batches that changed them): one resume of every Session, with the
        # plugin, stores them before any measured pass copies the folder.
        await resume_pass(root / "data", ids, True)
        written = time.perf_counter() - started
        passes = []
        hooks: dict[str, Any] = {}
        # Uncounted warm-up passes (one per variant, WARMUP_PASS Sessions), then the measured
        # passes in ABBA order.
        order: list[tuple[str, bool]] = [("warm-up", False), ("warm-up", True)]
        order += [
            ("measured", plugin)
            for index in range(ROUNDS)
            for plugin in ((False, True) if index % 2 == 0 else (True, False))
        ]
        order.append(("instrumented", True))
        for index, (kind, plugin) in enumerate(order):
            copy = root / f"pass-{index}"
            shutil.copytree(root / "data", copy)
            chosen = ids[: WARMUP + WARMUP_PASS] if kind == "warm-up" else ids
            result = await resume_pass(copy, chosen, plugin, instrumented=kind == "instrumented")
            shutil.rmtree(copy)
            if kind == "measured":
                passes.append(result)
            elif kind == "instrumented":
                hooks = result
    return passes, hooks, written


def main() -> dict[str, Any]:
    _common.quiet_logs()
    passes, instrumented, written = asyncio.run(measure())
    without = [p for p in passes if not p["plugin"]]
    with_plugin = [p for p in passes if p["plugin"]]

    def mean(items: list[dict[str, Any]], key: str) -> float:
        return statistics.fmean(p[key] for p in items)

    def best(items: list[dict[str, Any]]) -> dict[str, Any]:
        return min(items, key=lambda p: p["seconds"])

    best_without, best_with = best(without), best(with_plugin)
    total_without, total_with = best_without["seconds"], best_with["seconds"]
    cpu_without, cpu_with = best_without["cpu_s"], best_with["cpu_s"]
    share = (total_with - total_without) / total_with
    cpu_share = (cpu_with - cpu_without) / cpu_with
    mean_without, mean_with = mean(without, "seconds"), mean(with_plugin, "seconds")
    mean_share = (mean_with - mean_without) / mean_with
    met = share < TARGET_SHARE
    rows = [
        [
            index + 1,
            "with plugin" if p["plugin"] else "without plugin",
            p["seconds"],
            p["per_session_ms"],
            p["resume_call"]["p50_ms"],
            p["resume_call"]["p99_ms"],
            p["cpu_s"],
            p["gc_s"],
            p["owners"],
        ]
        for index, p in enumerate(passes)
    ]

    def line(label: str, seconds: float, cpu: float, gc_s: float) -> list[Any]:
        return [label, round(seconds, 3), round(seconds / SESSIONS * 1000, 3), round(cpu, 3),
                round(gc_s, 3)]  # fmt: skip

    summary = [
        line("without plugin, best pass", total_without, cpu_without, best_without["gc_s"]),
        line("with plugin, best pass", total_with, cpu_with, best_with["gc_s"]),
        ["plugin's share (best passes)", f"{share:.1%}", "", f"{cpu_share:.1%}", ""],
        line("without plugin, mean of passes", mean_without, mean(without, "cpu_s"),
             mean(without, "gc_s")),
        line("with plugin, mean of passes", mean_with, mean(with_plugin, "cpu_s"),
             mean(with_plugin, "gc_s")),
        ["plugin's share (means)", f"{mean_share:.1%}", "", "", ""],
    ]  # fmt: skip
    hooks = instrumented["hook_ms_per_session"]
    per_session_with = total_with / SESSIONS * 1000
    hook_total = sum(hooks.values())
    hook_rows = [
        ["dsh_session_opened (full fold of the owned stream)", hooks["dsh_session_opened"]],
        ["dsh_agent_published (owner, tools, idle callback)", hooks["dsh_agent_published"]],
        ["both", round(hook_total, 4)],
        ["share of the best with-plugin pass", f"{hook_total / per_session_with:.1%}"],
    ]
    result = {
        "name": "resume",
        "title": (
            f"Resume cost: {SESSIONS} cold Sessions of {EVENTS} events, SQLite WAL + "
            f"synchronous=FULL ({ROUNDS} passes per variant)"
        ),
        "params": {
            "sessions": SESSIONS,
            "events_per_session": EVENTS,
            "creates_per_session": CREATES,
            "dispatched_per_session": DISPATCHED,
            "warmup_sessions": WARMUP,
            "rounds": ROUNDS,
        },
        "data_written_s": round(written, 2),
        "passes": passes,
        "instrumented_pass": instrumented,
        "tables": [
            {
                "title": "resume time (cold -> live, settled and flushed)",
                "header": ["", "total s", "per Session ms", "CPU s", "GC s"],
                "rows": summary,
            },
            {
                "title": (
                    "the plugin's synchronous hooks, ms per Session (an extra instrumented "
                    "pass; the owner's first drive runs later, as a task, and is not in it)"
                ),
                "header": ["hook", "ms / Session"],
                "rows": hook_rows,
            },
            {
                "title": "measured passes (ABBA order, after one warm-up pass per variant)",
                "header": [
                    "pass",
                    "variant",
                    "total s",
                    "per Session ms",
                    "resume call p50 ms",
                    "resume call p99 ms",
                    "CPU s",
                    "GC s",
                    "owners",
                ],
                "rows": rows,
            },
        ],
        "ratios": {
            "plugin_share": round(share, 4),
            "plugin_cpu_share": round(cpu_share, 4),
            "plugin_share_of_means": round(mean_share, 4),
            "plugin_hooks_share": round(hook_total / per_session_with, 4),
            "with_over_without": ratio(total_with, total_without, 3),
        },
        "notes": [
            (
                f"Python's cyclic GC ran {mean(without, 'gc_s'):.2f} s of the "
                f"{mean_without:.2f} s without the plugin and {mean(with_plugin, 'gc_s'):.2f} s "
                f"of the {mean_with:.2f} s with it (means of passes; full collections walk "
                "every resumed event, so they grow with the live heap)"
            ),
            (
                f"{(WARMUP + SESSIONS) * EVENTS} events were written in {written:.1f} s; each "
                f"Session holds {CREATES} creates, {DISPATCHED} dispatches and "
                f"{CREATES - DISPATCHED} active reminders a day ahead"
            ),
        ],
        "targets": [
            target(
                "the plugin's share of resume time < 10%",
                f"{share:.1%} on the best passes (CPU {cpu_share:.1%}; "
                f"{mean_share:.1%} on the means)",
                met,
                f"{(share - TARGET_SHARE) * 100:.1f} points over",
            )
        ],
        "met": met,
    }
    return publish(result)


if __name__ == "__main__":
    main()
