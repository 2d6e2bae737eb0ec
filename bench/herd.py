"""The nine o'clock herd: N cold Sessions whose reminders all fall due in the same second, on a
restarted host served over HTTP, beside APScheduler 3 restarted on N jobs due at one instant.

Ours, for each N (``HERD_SIZES``, default 10,000 and 100,000): a SQLiteBackend in a temporary
folder (WAL, ``synchronous=FULL``: the defaults). A build host with the built-in overlay (the
Schedule plugin with ``cold_delivery = true``, and ``ui-schedule``: what ``dsh serve`` loads)
creates N Sessions, 500 at a time concurrently; in each the root Agent runs one
``schedule_create {"prompt", "at": T}`` through the full tool pipeline, every one with the same
due instant T (to the second), and the Session is then closed (flushed, detached). T is placed
from a calibration (500 such Sessions timed on a scratch store first, the estimate 3x that pace)
so that the build and the restart finish before it. The build host is closed; then a child
process (its own memory figures) restarts: a fresh LiveHost on the same folder with the same
overlay, the scripted model and ``dsh serve``'s default idle eviction (600 s), served by the
same web app over real HTTP on 127.0.0.1 (``WebServer`` on a free port). The run is invalid
(it raises) unless no Session is live and the clock is before T when that host is ready.

Measured from T until the last dispatch was acknowledged: lateness of each reminder = the
wall-clock moment the backend acknowledged the write holding its ``dispatch`` event durable minus T
(bench/lateness.py ``StoredAcks``: a live Session's flush and a cold plan's write alike); the
follow-up turn's start (its ``turn/start``, after the dispatch is durable) is reported beside it;
deliveries per second = N / (last acknowledgement - T); never-early = acknowledgements before T
(must be 0); peak live Sessions (open and detach observers; the probe's Session counts as one);
peak RSS of the host process (``VmHWM`` after resetting it through ``/proc/self/clear_refs`` at
T, and ``VmRSS`` sampled every 50 ms by a thread); CPU: the whole machine's busy share and the
host process's CPU seconds over the window. Exactly-once: afterwards a fresh host (no plugin)
on the same folder reads every stored Session: each must hold exactly one ``dispatch``.

Interactive probe (for N <= ``HERD_PROBE_MAX``, default every N): the parent process is an HTTP
client (httpx) of the restarted host. Before T it creates one unrelated Session (``POST
/api/sessions``), subscribes to its event stream (``GET /api/sessions/{id}/events``), sends it
one message and asks for the Session list once (what the server caches for the list stays cached
from then on, as in a browser left open). From T until the child reports the last dispatch
acknowledged, two loops run at once, each starting a request at most every 100 ms: (a) ``POST
/api/sessions/{id}/messages {"text": "hello"}``, timed until that Session's next ``turn/start``
frame arrives on the stream (then it waits for the turn's ``turn/end`` before the next one), and
(b) ``GET /api/sessions`` (the list as the server answers it without a query: its first page),
timed to the end of the response body.

APScheduler, in a child process per N and variant: an ``AsyncIOScheduler`` with a
``SQLAlchemyJobStore`` on a SQLite file in a temporary folder on the same disk (WAL and
``synchronous=FULL`` on every connection), N ``date`` jobs due at one instant T' (to the
second), each running a job that inserts and commits one row. The jobs are added by a scheduler
started paused (one commit per job, as ``add_job`` does), which is then shut down; a fresh
scheduler on the same store is started before T' (as our restart). Lateness of a job = the time
its own COMMIT returned minus T'. Twice: with APScheduler's defaults (``misfire_grace_time`` 1 s:
a job that starts more than 1 s late is skipped, counted as missed with an ``EVENT_JOB_MISSED``
listener) and with ``misfire_grace_time=None`` (every job runs; the ratio uses this variant).
APScheduler's own loggers are set to ERROR (its per-job "missed" warnings would otherwise cost it
time).

Targets: 10,000: p99 <= 1 s, each Session delivered exactly once, none early; 100,000: p99 <=
10 s; interactive p99 <= 100 ms for both probes; our p99 <= 0.5x APScheduler's (no-grace
variant) at each N.

Run: ``.venv/bin/python bench/herd.py`` (``HERD_SIZES=300`` for a smoke run). Prints tables,
writes JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import math
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from dsh_hookspecs import Event
from dsh_host import Appended, LiveHost, Overlay
from dsh_host.cli._main import evict_idle
from dsh_host.notify._sender import Channels
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import wait_until
from dsh_host.web import WebServer
from dsh_schedule import parse_instant

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common
from _common import LiveCount, latency_summary, publish, ratio, target
from lateness import StoredAcks, TurnStarts

HERD_SIZES = [int(n) for n in os.environ.get("HERD_SIZES", "10000,100000").split(",") if n]
PROBE_MAX = int(os.environ.get("HERD_PROBE_MAX", str(max(HERD_SIZES, default=0))))
#: Every measurement is saved here as soon as it is taken (a long run that fails while being
#: reported keeps its figures); ``HERD_FROM=<that file>`` reports from it without measuring.
RAW = Path(os.environ.get("HERD_RAW", Path(tempfile.gettempdir()) / "dsh-bench-herd-raw.json"))
CHUNK = 500  # Sessions (or jobs) created concurrently in one batch
CALIBRATION = 500
# The build estimate is this many times the calibration's (a growing store on a shared machine
# was measured at up to 2.6x the first 500 Sessions' pace).
SLACK = 3.0
MARGIN = 8.0  # seconds between the estimated end of build + restart and T
LIST_WARM_S_PER_SESSION = 0.0003  # estimate of the first (uncached) GET /api/sessions, per Session
PROBE_EVERY = 0.1  # seconds between the starts of two requests of one probe loop
PROBE_WAIT = 30.0  # bound of one probe's wait for its turn/start or turn/end
SETTLE = 120.0  # bound of every wait for a child's line
TARGET_P99_S = {10_000: 1.0, 100_000: 10.0}
TARGET_INTERACTIVE_MS = 100.0
TARGET_RATIO = 0.5
READY, ARMED, DONE, STOP = "ready", "armed", "done", "stop"


class InvalidRunError(RuntimeError):
    """The run broke one of its own preconditions; nothing is reported."""


def deadline_s(n: int) -> float:
    """Seconds after T before giving up on missing deliveries (reported, not raised)."""
    return 60.0 + n * 0.003


def iso(epoch_seconds: int) -> str:
    return dt.datetime.fromtimestamp(epoch_seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_dispatch(event: Event) -> bool:
    data = event.data
    return (
        event.type == "schedule/change"
        and isinstance(data, dict)
        and data.get("operation") == "dispatch"
    )


# -- memory of this process ----------------------------------------------------------------------


def vm_kib(field: str) -> int:
    """One ``Vm*`` line of /proc/self/status in KiB (the max RSS from getrusage without it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak_rss() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux ``clear_refs`` 5); whether it worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class RssSampler:
    """The highest ``VmRSS`` seen by a thread reading it every ``every`` seconds."""

    def __init__(self, every: float = 0.05) -> None:
        self.peak = vm_kib("VmRSS")
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.peak = max(self.peak, vm_kib("VmRSS"))

    def reset(self) -> None:
        self.peak = vm_kib("VmRSS")

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, vm_kib("VmRSS"))


def mib(kib: int) -> int:
    return round(kib / 1024)


# -- ours: build (this process) ------------------------------------------------------------------


async def create_one(host: LiveHost, prompt: str, at: str) -> tuple[str, str, int]:
    """One Session whose root Agent creates one reminder due ``at``, then closed (cold)."""
    agent = await host.create_session()
    value = await agent.execute_tool("schedule_create", {"prompt": prompt, "at": at})
    assert isinstance(value, dict) and "id" in value, value
    sid = agent.session.id
    await host.close_session(sid)
    return sid, str(value["id"]), parse_instant(str(value["scheduledAt"]))


async def calibrate(folder: Path) -> float:
    """Seconds one Session (create + reminder + close) took, CHUNK at a time, on a scratch store."""
    async with LiveHost(backend=SQLiteBackend(folder), overlay=Overlay.default()) as host:
        started = time.perf_counter()
        await asyncio.gather(
            *(create_one(host, "calibration", iso(int(time.time()) + 86_400)) for _ in range(CHUNK))
        )
        return (time.perf_counter() - started) / CALIBRATION


async def build(folder: Path, n: int, due: int) -> list[tuple[str, str, int]]:
    made: list[tuple[str, str, int]] = []
    at = iso(due)
    async with LiveHost(backend=SQLiteBackend(folder), overlay=Overlay.default()) as host:
        for start in range(0, n, CHUNK):
            made.extend(
                await asyncio.gather(
                    *(
                        create_one(host, f"herd {i}", at)
                        for i in range(start, min(n, start + CHUNK))
                    )
                )
            )
        if host.sessions.live():
            raise InvalidRunError(f"{len(host.sessions.live())} Sessions live after the build")
    return made


async def verify(folder: Path, sids: list[str]) -> dict[str, int]:
    """From a fresh host (no plugin) on the same folder: how many dispatches each Session holds."""
    counts: dict[str, int] = {}

    async with LiveHost(backend=SQLiteBackend(folder)) as host:

        async def one(sid: str) -> None:
            stored = await host.inspect(sid)
            if stored is None:
                raise InvalidRunError(f"session {sid} is not stored")
            counts[sid] = sum(1 for event in stored.events if is_dispatch(event))

        for start in range(0, len(sids), CHUNK):
            await asyncio.gather(*(one(sid) for sid in sids[start : start + CHUNK]))
    return counts


# -- ours: the restarted host (a child process) --------------------------------------------------


async def herd_child(
    folder: Path,
    due: int,
    expected_file: Path,
    *,
    channels: Channels | None = None,
    acks_file: Path | None = None,
) -> None:
    """Restart on ``folder``, serve it, wait for the herd due at ``due`` and report on stdout:
    ``ready <url>``; (parent: ``armed``); ``done``; the figures as one JSON line; (``stop``).

    With ``channels`` the host also sends its outbox to them (bench/notify.py); with
    ``acks_file``, each acknowledgement (``[session, reminder id, time.time()]``) is written
    there before the figures line."""
    _common.quiet_logs()
    acks = StoredAcks()
    made = json.loads(await asyncio.to_thread(expected_file.read_text))
    for sid, schedule_id, due_ms in made:
        acks.expected[(sid, schedule_id)] = due_ms
    overlay = Overlay.default()
    started = time.perf_counter()
    host = LiveHost(
        backend=SQLiteBackend(folder),
        model="scripted",
        overlay=overlay,
        evict_idle_seconds=evict_idle(None, overlay),
        channels=channels,
    )
    await host.start()
    await host.rebuild_if_migrated()
    web = WebServer(host, bind_host="127.0.0.1", port=0)
    try:
        url = await web.start()
        restart_s = time.perf_counter() - started
        live = LiveCount(host)
        acks.watch(host.backend)
        starts = TurnStarts(acks)
        host.sessions.subscribe(starts, Appended)
        if live.now or time.time() >= due:
            raise InvalidRunError(
                f"at ready: {live.now} Sessions live, {time.time() - due:.3f} s to T"
            )
        print(READY, url, flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        assert line.strip() == ARMED, line
        live_at_armed = live.now
        if time.time() >= due:
            raise InvalidRunError(f"armed {time.time() - due:.3f} s after T")
        sampler = RssSampler()
        rss_before = vm_kib("VmRSS")
        await asyncio.sleep(max(0.0, due - time.time() - 0.2))
        hwm_reset = reset_peak_rss()
        sampler.reset()
        live.peak = live.now
        ticks, cpu = _common.cpu_jiffies(), time.process_time()
        load_at_t = os.getloadavg()[0]
        rss_at_t = vm_kib("VmRSS")
        with contextlib.suppress(TimeoutError):  # reported: delivered < expected
            await wait_until(acks.done, timeout=due + deadline_s(len(acks.expected)) - time.time())
        ended = time.time()
        busy, cpu = _common.busy_share(ticks), time.process_time() - cpu
        with contextlib.suppress(TimeoutError):  # reported: turns started < delivered
            await wait_until(
                lambda: len(starts.started) >= len(acks.acked),
                timeout=max(1.0, due + deadline_s(len(acks.expected)) - time.time()),
            )
        hwm = vm_kib("VmHWM")
        rss_peak = sampler.stop()
        print(DONE, flush=True)
        late = [
            acks.acked[key] - due_ms / 1000
            for key, due_ms in acks.expected.items()
            if key in acks.acked
        ]
        last = max(acks.acked.values(), default=ended)
        figures = {
            "restart_s": round(restart_s, 3),
            "live_at_armed": live_at_armed,
            "expected": len(acks.expected),
            "delivered": len(late),
            "early": sum(1 for value in late if value < 0),
            "lateness": latency_summary(late),
            "turn_start": latency_summary(
                [at - acks.expected[key] / 1000 for key, at in starts.started.items()]
            ),
            "turns_started": len(starts.started),
            "last_ack_after_t_s": round(last - due, 3),
            "per_second": round(len(late) / (last - due)) if late and last > due else None,
            "peak_live": live.peak,
            "live_at_done": live.now,
            "rss_before_mib": mib(rss_before),
            "rss_at_t_mib": mib(rss_at_t),
            "peak_rss_mib": mib(max(hwm, rss_peak) if hwm_reset else rss_peak),
            "peak_rss_source": "VmHWM reset at T" if hwm_reset else "VmRSS sampled every 50 ms",
            "machine_cpu_busy": busy,
            "load_1min_at_t": round(load_at_t, 2),
            "host_cpu_s": round(cpu, 2),
            "host_cpu_cores": round(cpu / max(1e-9, ended - due), 2),
        }
        if acks_file is not None:
            rows = [[sid, schedule_id, at] for (sid, schedule_id), at in acks.acked.items()]
            await asyncio.to_thread(acks_file.write_text, json.dumps(rows))
        print(json.dumps(figures), flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        assert line.strip() == STOP, line
    finally:
        await web.stop()
        await host.close()


# -- ours: the probe (this process, an HTTP client) ----------------------------------------------


class Probe:
    """An HTTP client of the restarted host: one Session's event stream, its messages, the list."""

    def __init__(self, url: str) -> None:
        import httpx

        self.client = httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30.0))
        self.sid = ""
        self.frames: asyncio.Queue[tuple[str, float]] = asyncio.Queue()
        self.reader: asyncio.Task[None] | None = None
        #: Set once the stream's headers arrived: the server subscribed before answering, and a
        #: stream without Last-Event-ID carries only what is appended from then on.
        self.connected = asyncio.Event()
        self.message_s: list[float] = []
        self.list_s: list[float] = []
        self.errors: dict[str, int] = {"message": 0, "list": 0, "timeouts": 0}
        self.list_rows = 0
        self.warm_list_s = 0.0

    async def _read(self) -> None:
        async with self.client.stream(
            "GET", f"/api/sessions/{self.sid}/events", timeout=None
        ) as response:
            response.raise_for_status()
            self.connected.set()
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:]).get("event", {})
                    kind = event.get("type")
                    if kind in ("turn/start", "turn/end"):
                        self.frames.put_nowait((kind, time.perf_counter()))

    async def _next(self, kind: str) -> float | None:
        """When the next ``kind`` frame arrived; ``None`` after PROBE_WAIT without one."""
        try:
            async with asyncio.timeout(PROBE_WAIT):
                while True:
                    got, at = await self.frames.get()
                    if got == kind:
                        return at
        except TimeoutError:
            self.errors["timeouts"] += 1
            return None

    async def _message(self) -> float | None:
        while not self.frames.empty():
            self.frames.get_nowait()
        sent = time.perf_counter()
        response = await self.client.post(
            f"/api/sessions/{self.sid}/messages", json={"text": "hello"}
        )
        if response.status_code != 202:
            self.errors["message"] += 1
            return None
        started = await self._next("turn/start")
        await self._next("turn/end")
        return None if started is None else started - sent

    async def _list(self) -> float | None:
        sent = time.perf_counter()
        response = await self.client.get("/api/sessions")
        took = time.perf_counter() - sent
        if response.status_code != 200:
            self.errors["list"] += 1
            return None
        self.list_rows = len(response.json()["sessions"])
        return took

    async def setup(self) -> None:
        """Before T: the Session, its stream, one message round trip and one (uncached) list."""
        response = await self.client.post("/api/sessions")
        response.raise_for_status()
        self.sid = response.json()["id"]
        self.reader = asyncio.create_task(self._read())
        await asyncio.wait_for(self.connected.wait(), PROBE_WAIT)
        assert await self._message() is not None, "the probe's first message got no turn"
        sent = time.perf_counter()
        assert await self._list() is not None, "the first list failed"
        self.warm_list_s = time.perf_counter() - sent

    async def run(self, due: int, done: asyncio.Event) -> None:
        """From ``due`` until ``done``: both probe loops at once."""
        await asyncio.sleep(max(0.0, due - time.time()))

        async def loop(step: Any, into: list[float]) -> None:
            while not done.is_set():
                began = time.perf_counter()
                took = await step()
                if took is not None:
                    into.append(took)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        done.wait(), max(0.0, began + PROBE_EVERY - time.perf_counter())
                    )

        await asyncio.gather(loop(self._message, self.message_s), loop(self._list, self.list_s))

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(BaseException):
                await self.reader
        await self.client.aclose()

    def figures(self) -> dict[str, Any]:
        return {
            "message_to_turn_start": latency_summary(self.message_s),
            "list_sessions": latency_summary(self.list_s),
            "errors": dict(self.errors),
            "list_rows": self.list_rows,
            "warm_list_s": round(self.warm_list_s, 3),
        }


# -- ours: one N ---------------------------------------------------------------------------------


async def child_line(proc: asyncio.subprocess.Process, timeout: float) -> str:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    return line.decode().strip()


def tell(proc: asyncio.subprocess.Process, line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(f"{line}\n".encode())


async def ours(n: int) -> dict[str, Any]:
    probing = n <= PROBE_MAX
    with tempfile.TemporaryDirectory(prefix="dsh-bench-herd-") as tmp:
        folder = Path(tmp) / "dsh"
        per_session = await calibrate(Path(tmp) / "calibration")
        restart_estimate = 3.0 + (n * LIST_WARM_S_PER_SESSION if probing else 0.0)
        planned = time.time()
        due = int(planned + n * per_session * SLACK + restart_estimate + MARGIN) + 1
        built_at = time.perf_counter()
        made = await build(folder, n, due)
        build_s = time.perf_counter() - built_at
        if any(due_ms != due * 1000 for _, _, due_ms in made):
            raise InvalidRunError("a reminder's scheduledAt is not T")
        expected_file = Path(tmp) / "expected.json"
        expected_file.write_text(json.dumps(made))
        stderr_file = Path(tmp) / "herd-child.stderr"
        with stderr_file.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--herd",
                str(folder),
                str(due),
                str(expected_file),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        probe: Probe | None = None
        try:
            line = await child_line(proc, max(SETTLE, due - time.time()))
            if not line.startswith(READY + " "):
                raise InvalidRunError(f"the herd host did not start: {line!r}: {tail(stderr_file)}")
            url = line.split()[1]
            if probing:
                probe = Probe(url)
                await probe.setup()
            margin = due - time.time()
            if margin <= 0:
                raise InvalidRunError(f"the probe was ready {-margin:.3f} s after T")
            tell(proc, ARMED)
            done = asyncio.Event()
            probing_task = asyncio.create_task(probe.run(due, done)) if probe else None
            try:
                line = await child_line(proc, due - time.time() + deadline_s(n) + SETTLE)
                if line != DONE:
                    raise InvalidRunError(f"herd child: {line!r}: {tail(stderr_file)}")
            finally:
                done.set()
                if probing_task is not None:
                    await probing_task
            figures = json.loads(await child_line(proc, SETTLE))
            tell(proc, STOP)
            assert proc.stdin is not None
            await proc.stdin.drain()
            await asyncio.wait_for(proc.wait(), SETTLE)
            if proc.returncode != 0:
                raise InvalidRunError(f"herd child exited {proc.returncode}: {tail(stderr_file)}")
        finally:
            if probe is not None:
                await probe.close()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        sids = [sid for sid, _, _ in made]
        counts = await verify(folder, sids)
        host_lines = stderr_file.read_text().splitlines()
    return {
        "n": n,
        "calibration_ms_per_session": round(per_session * 1000, 3),
        "build_s": round(build_s, 2),
        "margin_at_armed_s": round(margin, 2),
        **figures,
        "stored_one_dispatch": sum(1 for sid in sids if counts[sid] == 1),
        "stored_other_dispatch_counts": sorted({counts[sid] for sid in sids} - {1}),
        "host_log_lines": len(host_lines),
        "host_log_sample": host_lines[:3],
        "probe": probe.figures() if probe is not None else None,
    }


def tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text().splitlines()[-lines:])
    except OSError:
        return ""


# -- APScheduler (a child process per N and variant) ---------------------------------------------


async def aps_child(folder: Path, n: int, variant: str) -> None:
    """N date jobs at one instant T', added by a paused scheduler, run by a fresh one started
    before T'; the figures as one JSON line on stdout."""
    from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED  # type: ignore[import-untyped]
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore  # type: ignore[import-untyped]
    from apscheduler.schedulers.asyncio import AsyncIOScheduler  # type: ignore[import-untyped]

    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    engine = _common.aps_engine(folder / "aps.sqlite3")

    def scheduler() -> Any:
        if variant == "none":
            return _common.aps_scheduler(engine)
        return AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(engine=engine)}, timezone=dt.UTC
        )

    builder = scheduler()
    builder.start(paused=True)
    started = time.perf_counter()
    far = _common.utc(time.time() + 86_400)
    for job in range(CALIBRATION):
        builder.add_job(_common.aps_job, "date", run_date=far, args=[-1 - job], id=f"c{job}")
    per_job = (time.perf_counter() - started) / CALIBRATION
    builder.remove_all_jobs()
    due = int(time.time() + n * per_job * SLACK + MARGIN) + 1
    started = time.perf_counter()
    when = _common.utc(due)
    for job in range(n):
        builder.add_job(_common.aps_job, "date", run_date=when, args=[job], id=str(job))
        if job % CHUNK == CHUNK - 1:
            await _common.drain_loop()  # the wakeups add_job queued on the loop
    build_s = time.perf_counter() - started
    builder.shutdown(wait=False)
    await wait_until(lambda: not builder.running, timeout=SETTLE)

    runner = scheduler()
    problems: dict[int, int] = {EVENT_JOB_MISSED: 0, EVENT_JOB_ERROR: 0}

    def listen(event: Any) -> None:
        problems[event.code] += 1

    runner.add_listener(listen, EVENT_JOB_ERROR | EVENT_JOB_MISSED)
    runner.start()
    margin = due - time.time()
    if margin <= 0:
        raise InvalidRunError(f"APScheduler started {-margin:.3f} s after T'")
    sampler = RssSampler()
    await asyncio.sleep(max(0.0, due - time.time() - 0.2))
    hwm_reset = reset_peak_rss()
    sampler.reset()
    ticks, cpu = _common.cpu_jiffies(), time.process_time()
    load_at_t = os.getloadavg()[0]
    done = _common.APS_DONE

    def finished() -> bool:
        return len(done) + problems[EVENT_JOB_MISSED] + problems[EVENT_JOB_ERROR] >= n

    with contextlib.suppress(TimeoutError):
        await wait_until(finished, timeout=due + deadline_s(n) - time.time())
    ended = time.time()
    busy, cpu = _common.busy_share(ticks), time.process_time() - cpu
    hwm, rss_peak = vm_kib("VmHWM"), sampler.stop()
    late = [done[job] - due for job in range(n) if job in done]
    last = max((done[job] for job in range(n) if job in done), default=ended)
    runner.shutdown(wait=False)
    await wait_until(lambda: not runner.running, timeout=SETTLE)
    engine.dispose()
    print(
        json.dumps(
            {
                "n": n,
                "variant": variant,
                "calibration_ms_per_job": round(per_job * 1000, 3),
                "build_s": round(build_s, 2),
                "margin_at_start_s": round(margin, 2),
                "ran": len(late),
                "missed": problems[EVENT_JOB_MISSED],
                "errors": problems[EVENT_JOB_ERROR],
                "early": sum(1 for value in late if value < 0),
                "lateness": latency_summary(late),
                "last_done_after_t_s": round(last - due, 3),
                "per_second": round(len(late) / (last - due)) if late and last > due else None,
                "peak_rss_mib": mib(max(hwm, rss_peak) if hwm_reset else rss_peak),
                "machine_cpu_busy": busy,
                "load_1min_at_t": round(load_at_t, 2),
                "process_cpu_s": round(cpu, 2),
            }
        ),
        flush=True,
    )


async def aps(n: int, variant: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-herd-aps-") as tmp:
        stderr_file = Path(tmp) / "aps-child.stderr"
        with stderr_file.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--aps",
                tmp,
                str(n),
                variant,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 3 * SETTLE + 2 * deadline_s(n))
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode != 0:
            raise InvalidRunError(
                f"APScheduler child exited {proc.returncode}: {tail(stderr_file)}"
            )
        result: dict[str, Any] = json.loads(out)
        return result


# -- the run -------------------------------------------------------------------------------------


def save_raw(mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    RAW.write_text(json.dumps({"ours": mine, "apscheduler": theirs}))


async def measure() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    mine: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for n in HERD_SIZES:
        mine.append(await ours(n))
        save_raw(mine, theirs)
        print(f"  ours n={n}: {json.dumps(mine[-1]['lateness'])}", flush=True)
        for variant in ("defaults", "none"):
            theirs.append(await aps(n, variant))
            save_raw(mine, theirs)
            print(f"  APScheduler n={n} {variant}: {json.dumps(theirs[-1]['lateness'])}")
    return mine, theirs


STATS = ("n", "min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms")


def complete_stats(summary: dict[str, Any]) -> dict[str, Any]:
    """A latency summary with every statistic (NaN for those an empty sample lacks)."""
    return {key: summary.get(key, 0 if key == "n" else math.nan) for key in STATS}


def load_raw(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    raw = json.loads(path.read_text())
    return raw["ours"], raw["apscheduler"]


def seconds(ms: float) -> str:
    return "-" if math.isnan(ms) else f"{ms / 1000:.3f} s"


def main() -> dict[str, Any]:
    _common.quiet_logs()
    run_started = time.perf_counter()
    source = os.environ.get("HERD_FROM")
    mine, theirs = load_raw(Path(source)) if source else asyncio.run(measure())
    for run in [*mine, *theirs]:
        run["lateness"] = complete_stats(run["lateness"])
        probe = run.get("probe")
        if probe is not None:
            for key in ("message_to_turn_start", "list_sessions"):
                probe[key] = complete_stats(probe[key])
    aps_by = {(run["n"], run["variant"]): run for run in theirs}
    targets: list[dict[str, Any]] = []
    ratios: dict[str, float | None] = {}
    for run in mine:
        n, lat = run["n"], run["lateness"]
        complete = run["delivered"] == run["expected"] == n
        once = run["stored_one_dispatch"] == n and not run["stored_other_dispatch_counts"]
        budget = TARGET_P99_S.get(n)
        if budget is not None:
            targets.append(
                target(
                    f"{n}: herd lateness p99 <= {budget:g} s",
                    f"p99 {seconds(lat['p99_ms'])} ({run['delivered']} of {n} delivered)",
                    complete and lat["p99_ms"] <= budget * 1000,
                    f"{lat['p99_ms'] / 1000 - budget:.3f} s over"
                    if complete
                    else f"{n - run['delivered']} not delivered",
                )
            )
        targets.append(
            target(
                f"{n}: every Session delivered exactly once, none early",
                f"{run['stored_one_dispatch']} of {n} hold one dispatch "
                f"(other counts {run['stored_other_dispatch_counts']}); {run['early']} early",
                once and run["early"] == 0,
                f"{n - run['stored_one_dispatch']} not exactly once, {run['early']} early",
            )
        )
        probe = run["probe"]
        if probe is not None:
            for key, label in (
                ("message_to_turn_start", "POST message -> turn/start"),
                ("list_sessions", "GET /api/sessions"),
            ):
                summary = probe[key]
                targets.append(
                    target(
                        f"{n}: during the herd, {label} p99 <= {TARGET_INTERACTIVE_MS:g} ms",
                        f"p99 {summary['p99_ms']} ms over {summary['n']} requests",
                        summary["n"] > 0 and summary["p99_ms"] <= TARGET_INTERACTIVE_MS,
                        f"{summary['p99_ms'] - TARGET_INTERACTIVE_MS:.0f} ms over"
                        if summary["n"]
                        else "no request completed",
                    )
                )
        theirs_none = aps_by[(n, "none")]
        share = ratio(lat["p99_ms"], theirs_none["lateness"]["p99_ms"])
        ratios[f"p99_ours_over_aps_{n}"] = share
        targets.append(
            target(
                f"{n}: our p99 <= {TARGET_RATIO:g}x APScheduler's (misfire_grace_time=None)",
                f"{seconds(lat['p99_ms'])} vs {seconds(theirs_none['lateness']['p99_ms'])}: "
                f"{share}x",
                share is not None and share <= TARGET_RATIO,
                f"{share}x",
            )
        )
    met = all(item["met"] for item in targets)
    lateness_rows = []
    for run in mine:
        lat = run["lateness"]
        lateness_rows.append(
            [
                run["n"],
                "dsh-schedule (restarted host, HTTP served)",
                f"{run['delivered']} / {run['expected']}",
                "-",
                seconds(lat["p50_ms"]),
                seconds(lat["p90_ms"]),
                seconds(lat["p99_ms"]),
                seconds(lat["max_ms"]),
                run["per_second"],
                run["early"],
                run["peak_live"],
                run["peak_rss_mib"],
                run["machine_cpu_busy"],
            ]
        )
        for variant, label in (
            ("defaults", "APScheduler 3 defaults (grace 1 s)"),
            ("none", "APScheduler 3 misfire_grace_time=None"),
        ):
            other = aps_by[(run["n"], variant)]
            olat = other["lateness"]
            lateness_rows.append(
                [
                    run["n"],
                    label,
                    f"{other['ran']} / {run['n']}",
                    other["missed"],
                    seconds(olat["p50_ms"]),
                    seconds(olat["p90_ms"]),
                    seconds(olat["p99_ms"]),
                    seconds(olat["max_ms"]),
                    other["per_second"],
                    other["early"],
                    "-",
                    other["peak_rss_mib"],
                    other["machine_cpu_busy"],
                ]
            )
    probe_rows = []
    for run in mine:
        probe = run["probe"]
        if probe is None:
            continue
        for key, label in (
            ("message_to_turn_start", "POST message -> its turn/start on the stream"),
            ("list_sessions", "GET /api/sessions (whole response)"),
        ):
            summary = probe[key]
            probe_rows.append(
                [
                    run["n"],
                    label,
                    summary["n"],
                    summary.get("p50_ms"),
                    summary.get("p99_ms"),
                    summary.get("max_ms"),
                ]
            )
    setup_rows = [
        [
            run["n"],
            run["calibration_ms_per_session"],
            run["build_s"],
            run["restart_s"],
            run["margin_at_armed_s"],
            run["rss_at_t_mib"],
            run["host_cpu_cores"],
            run["live_at_done"],
        ]
        for run in mine
    ]
    notes = []
    for run in mine:
        probe = run["probe"]
        if probe is not None:
            notes.append(
                f"{run['n']}: probe errors {probe['errors']}; the list had {probe['list_rows']} "
                f"rows; the first (uncached) list before T took {probe['warm_list_s']} s"
            )
        turns = run.get("turn_start") or {}
        notes.append(
            f"{run['n']}: the follow-up turns started (not the dispatches: a turn runs after its "
            f"dispatch is durable) {run.get('turns_started')} of {run['delivered']}, due instant "
            f"-> turn/start p50 {seconds(turns['p50_ms']) if 'p50_ms' in turns else '-'}, p99 "
            f"{seconds(turns['p99_ms']) if 'p99_ms' in turns else '-'}"
        )
        notes.append(
            f"{run['n']}: peak RSS {run['peak_rss_mib']} MiB ({run['peak_rss_source']}), "
            f"{run['rss_at_t_mib']} MiB at T; host process CPU {run['host_cpu_s']} s in the "
            f"window; {run['live_at_done']} Sessions live when the last dispatch was durable "
            f"(idle eviction after {evict_idle(None, Overlay.default())} s); "
            f"{run['host_log_lines']} host log lines (warning and above); 1-min load average "
            f"at T {run.get('load_1min_at_t')}"
        )
    notes.extend(
        f"APScheduler {other['n']} {other['variant']}: {other['ran']} ran, {other['missed']} "
        f"missed, {other['errors']} errors; adding the jobs took {other['build_s']} s; peak RSS "
        f"{other['peak_rss_mib']} MiB; 1-min load average at T' {other.get('load_1min_at_t')}"
        for other in theirs
    )
    result = {
        "name": "herd",
        "title": (
            "The nine o'clock herd: N cold Sessions due in the same second after a restart, "
            "SQLite WAL + synchronous=FULL, served over HTTP, beside APScheduler 3"
        ),
        "params": {
            "sizes": HERD_SIZES,
            "probe_max": PROBE_MAX,
            "chunk": CHUNK,
            "evict_idle_seconds": evict_idle(None, Overlay.default()),
            "probe_every_s": PROBE_EVERY,
        },
        "ours": mine,
        "apscheduler": theirs,
        "tables": [
            {
                "title": "due instant -> dispatch durable (ours) / job committed (APScheduler)",
                "header": [
                    "N",
                    "side",
                    "delivered",
                    "missed",
                    "p50",
                    "p90",
                    "p99",
                    "max",
                    "per s",
                    "early",
                    "peak live",
                    "peak RSS MiB",
                    "CPU busy",
                ],
                "rows": lateness_rows,
            },
            {
                "title": "interactive probe during the herd (T until the last dispatch), ms",
                "header": ["N", "request", "count", "p50 ms", "p99 ms", "max ms"],
                "rows": probe_rows,
            },
            {
                "title": "setup and host",
                "header": [
                    "N",
                    "calibration ms/Session",
                    "build s",
                    "restart s",
                    "margin before T s",
                    "RSS at T MiB",
                    "host CPU cores",
                    "live at end",
                ],
                "rows": setup_rows,
            },
        ],
        "ratios": ratios,
        "notes": notes,
        "targets": targets,
        "met": met,
        "run_seconds": round(time.perf_counter() - run_started, 1),
    }
    return publish(result)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--herd":
        asyncio.run(herd_child(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])))
    elif len(sys.argv) > 1 and sys.argv[1] == "--aps":
        asyncio.run(aps_child(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
    else:
        main()
