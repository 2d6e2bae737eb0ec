"""The outbox measured: the nine o'clock herd delivered with and without notification channels,
and how long a durable dispatch takes to reach a webhook on loopback.

The herd is bench/herd.py's (its functions, imported): on SQLite in a temporary folder (WAL,
``synchronous=FULL``), a build host with the built-in overlay creates N cold Sessions (N =
``NOTIFY_HERD``, default 10,000); in each the root Agent runs one ``schedule_create`` due at the
same whole-second instant T, placed from a calibration so that the build and the restart finish
before it. A child process then restarts on the folder (herd.py's restarted host: a fresh
LiveHost with the same overlay, the scripted model, ``dsh serve``'s idle eviction, served over
HTTP; no interactive probe here). Twice, each in its own folder with its own build: (a) the
outbox off, no channel; (b) the outbox on, with one ``json://`` webhook channel (as ``dsh serve
--notify json://127.0.0.1:PORT/hook``) whose sender runs in the restarted host. Lateness of a
reminder = the wall-clock moment a ``session/flushed`` observation first covers its dispatch
minus T (herd.py's measure); ratio = p99 (on) / p99 (off). Afterwards a fresh host (no plugin)
checks that every stored Session holds exactly one dispatch, and in (b) the outbox table is read
(entries per status, attempts).

The receiver is a separate process: an asyncio HTTP/1.1 server on 127.0.0.1 that, per request,
reads the headers and the body, records (``time.time()``, ``time.monotonic()``, the
``X-Idempotency-Key`` header) and answers 200 with a 2-byte body; it keeps a connection open for
as long as the client does (apprise opens one per message). Before the herds its capacity is
measured from this process: an asyncio client with 16 concurrent workers sends 3,000 POSTs of a
webhook-sized body, each on a new connection (a lower bound: the client is Python too); its own
CPU time is also taken from T to the last arrival of (b). In (b) it reports the requests, the
distinct keys (duplicates = requests - distinct keys; missing = reminders whose key never
arrived), the send rate from the first to the last arrival and N / (last arrival - T).

Durable -> 2xx: per reminder, its arrival at the receiver (wall clock, both processes on one
machine) minus the moment its dispatch's flush was acknowledged (the lateness moment above):
in the herd (b), and in a trickle: 200 cold Sessions on a fresh folder, their reminders due
one every 50 ms from T, delivered by a restarted host with the channel (an idle host: what a
single person feels).

Send lateness of a reminder in (b) = its first arrival at the receiver minus T (what the person
waiting for the webhook sees).

Targets: p99 lateness with the outbox on <= 1.2x p99 with it off; in (b) send lateness p99 <= 5 s
and every reminder reaches the receiver exactly once (distinct keys = requests = N); every
Session holds exactly one dispatch and none is early, in both runs.

Run: ``.venv/bin/python bench/notify.py`` (``NOTIFY_HERD=300`` for a smoke run). Prints tables,
writes JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dsh_host import LiveHost, Overlay
from dsh_host.notify import parse_channels
from dsh_host.notify._sender import Channels
from dsh_host.persistence import SQLiteBackend
from dsh_schedule import format_instant

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common
import herd
from _common import latency_summary, publish, ratio, target
from herd import (
    ARMED,
    DONE,
    READY,
    SETTLE,
    STOP,
    InvalidRunError,
    child_line,
    complete_stats,
    deadline_s,
    seconds,
    tail,
    tell,
)

N = int(os.environ.get("NOTIFY_HERD", "10000"))
#: A herd's webhooks all arrive within this many seconds of their due instant (p99).
SEND_TARGET_S = 5.0
#: Every measurement is saved here as soon as it is taken; ``NOTIFY_FROM=<that file>`` reports
#: from it without measuring.
RAW = Path(os.environ.get("NOTIFY_RAW", Path(tempfile.gettempdir()) / "dsh-bench-notify-raw.json"))
HOST = "127.0.0.1"
TRICKLE = 200  # reminders in the trickle
TRICKLE_EVERY_MS = 50  # between two of its due instants
TRICKLE_LEAD = 8.0  # seconds from the trickle's build to its first due instant
RESTART_ESTIMATE = 3.0  # seconds for the child to start and restart the host (herd.py's)
CAPACITY_REQUESTS = 3000
CAPACITY_WORKERS = 16
TARGET_RATIO = 1.2
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
RESPONSE_CLOSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    b"Connection: close\r\n\r\n{}"
)


# -- the receiver (a child process) --------------------------------------------------------------


class Receiver:
    """A lean webhook receiver: records (wall, monotonic, key) per request and answers 200."""

    def __init__(self) -> None:
        self.records: list[tuple[float, float, str | None]] = []
        self.malformed = 0
        self.changed = asyncio.Event()
        self.mark_cpu = time.process_time()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length, key, close = 0, None, False
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"x-idempotency-key":
                        key = value.strip().decode()
                    elif name == b"connection":
                        close = value.strip().lower() == b"close"
                if length:
                    await reader.readexactly(length)
                self.records.append((time.time(), time.monotonic(), key))
                self.changed.set()
                writer.write(RESPONSE_CLOSE if close else RESPONSE)
                if close:
                    await writer.drain()
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed the connection (after its response, or mid-request)
        except (asyncio.LimitOverrunError, ValueError):
            self.malformed += 1
        finally:
            writer.close()

    async def wait_for(self, count: int, timeout: float) -> int:
        """Return once ``count`` requests arrived, or after ``timeout`` seconds: how many did."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, timeout)):
                while len(self.records) < count:
                    self.changed.clear()
                    await self.changed.wait()
        return len(self.records)


async def receiver_child() -> None:
    """Serve on a free port; print ``ready <port>``, then answer one line per command on stdin:
    ``wait <count> <timeout>`` -> the count; ``mark`` (CPU time from now on) -> ok;
    ``dump <path>`` -> the records written there, ok; ``reset`` -> ok; ``stop`` ends."""
    receiver = Receiver()
    server = await asyncio.start_server(receiver.handle, HOST, 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(READY, port, flush=True)
    async with server:
        while True:
            words = (await asyncio.to_thread(sys.stdin.readline)).split()
            if not words or words[0] == STOP:
                break
            if words[0] == "wait":
                got = await receiver.wait_for(int(words[1]), float(words[2]))
                print(got, flush=True)
                continue
            if words[0] == "mark":
                receiver.mark_cpu = time.process_time()
            elif words[0] == "dump":
                dump = {
                    "records": receiver.records,
                    "malformed": receiver.malformed,
                    "cpu_s_since_mark": round(time.process_time() - receiver.mark_cpu, 3),
                }
                await asyncio.to_thread(Path(words[1]).write_text, json.dumps(dump))
            elif words[0] == "reset":
                receiver.records = []
                receiver.malformed = 0
            print("ok", flush=True)


class ReceiverProcess:
    """This process's handle on the receiver child."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc = proc
        self.port = port

    @classmethod
    async def start(cls) -> ReceiverProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--receiver",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        line = await child_line(proc, SETTLE)
        if not line.startswith(READY + " "):
            proc.kill()
            await proc.wait()
            raise InvalidRunError(f"the receiver did not start: {line!r}")
        return cls(proc, int(line.split()[1]))

    def url(self) -> str:
        return f"json://{HOST}:{self.port}/hook"

    async def ask(self, command: str, timeout: float = SETTLE) -> str:
        tell(self.proc, command)
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()
        return await child_line(self.proc, timeout)

    async def wait_for(self, count: int, timeout: float) -> int:
        return int(await self.ask(f"wait {count} {timeout:.3f}", timeout + SETTLE))

    async def dump(self, folder: Path) -> dict[str, Any]:
        path = folder / "received.json"
        assert await self.ask(f"dump {path}") == "ok"
        received: dict[str, Any] = json.loads(path.read_text())
        return received

    async def stop(self) -> None:
        with contextlib.suppress(OSError):
            tell(self.proc, STOP)
            assert self.proc.stdin is not None
            await self.proc.stdin.drain()
        try:
            await asyncio.wait_for(self.proc.wait(), SETTLE)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()


async def capacity(port: int) -> dict[str, Any]:
    """Requests per second the receiver took from CAPACITY_WORKERS concurrent clients of this
    process, each request a POST of a webhook-sized body on a new connection."""
    body = json.dumps({"version": "1.0", "title": "capacity", "message": "x" * 80}).encode()
    failures = 0
    sent = 0

    async def worker() -> None:
        nonlocal failures, sent
        while sent < CAPACITY_REQUESTS:
            number = sent
            sent += 1
            reader, writer = await asyncio.open_connection(HOST, port)
            head = (
                f"POST /hook HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
                "Content-Type: application/json\r\n"
                f"X-Idempotency-Key: capacity/{number}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            answer = await reader.read()
            if not answer.startswith(b"HTTP/1.1 200"):
                failures += 1
            writer.close()
            await writer.wait_closed()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CAPACITY_WORKERS)))
    took = time.perf_counter() - started
    return {
        "requests": CAPACITY_REQUESTS,
        "workers": CAPACITY_WORKERS,
        "seconds": round(took, 3),
        "per_second": round(CAPACITY_REQUESTS / took),
        "failures": failures,
    }


# -- the restarted host (a child process: herd.py's, with the channel) ---------------------------


def host_child(folder: Path, due: int, expected: Path, acks: Path, urls: list[str]) -> None:
    channels = Channels(parse_channels(urls), allow_private=["127.0.0.1"]) if urls else None
    asyncio.run(herd.herd_child(folder, due, expected, channels=channels, acks_file=acks))


# -- one delivery (a herd or the trickle) --------------------------------------------------------


def outbox_figures(folder: Path) -> dict[str, Any]:
    """The outbox's entries per status and their attempts, read from the closed store."""
    uri = f"file:{folder / 'dsh.sqlite3'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        statuses = dict(db.execute("SELECT status, count(*) FROM outbox GROUP BY status"))
        attempts = db.execute("SELECT coalesce(sum(attempts), 0) FROM outbox").fetchone()[0]
    return {"entries_by_status": statuses, "attempts": attempts}


def receipt_of(key: str | None) -> tuple[str, str] | None:
    """(session, reminder id) of an idempotency key ``<session>/<plugin>/<id>@<at>/<channel>``."""
    parts = (key or "").split("/")
    if len(parts) != 4 or "@" not in parts[2]:
        return None
    return parts[0], parts[2].rsplit("@", 1)[0]


def arrivals(
    received: dict[str, Any],
    due: int,
    made: list[tuple[str, str, int]],
    acked: dict[tuple[str, str], float],
) -> dict[str, Any]:
    """What the receiver saw of one delivery, and durable -> 2xx per reminder."""
    records = received["records"]
    expected = {(sid, rid) for sid, rid, _ in made}
    first_arrival: dict[tuple[str, str], float] = {}
    keys = [key for _, _, key in records]
    unexpected = 0
    for wall, _, key in records:
        pair = receipt_of(key)
        if pair not in expected:
            unexpected += 1
            continue
        assert pair is not None
        first_arrival.setdefault(pair, wall)
    durable_to_2xx = [first_arrival[pair] - acked[pair] for pair in first_arrival if pair in acked]
    walls = sorted(wall for wall, _, _ in records)
    monos = sorted(mono for _, mono, _ in records)
    span = monos[-1] - monos[0] if len(monos) > 1 else 0.0
    last_after_t = walls[-1] - due if walls else None
    return {
        "requests": len(records),
        "distinct_keys": len(set(keys)),
        "duplicates": len(keys) - len(set(keys)),
        "missing": len(expected - set(first_arrival)),
        "unexpected": unexpected,
        "malformed": received["malformed"],
        "first_arrival_after_t_s": round(walls[0] - due, 3) if walls else None,
        "last_arrival_after_t_s": round(last_after_t, 3) if last_after_t is not None else None,
        "rate_first_to_last": round((len(records) - 1) / span) if span > 0 else None,
        "rate_from_t": round(len(records) / last_after_t) if last_after_t else None,
        "receiver_cpu_s": received["cpu_s_since_mark"],
        "durable_to_2xx": latency_summary(durable_to_2xx),
        "durable_to_2xx_negative": sum(1 for value in durable_to_2xx if value < 0),
        "send_lateness": latency_summary([wall - due for wall in first_arrival.values()]),
    }


async def deliver(  # noqa: PLR0917 - one delivery's whole setting
    case: str,
    tmp: Path,
    folder: Path,
    due: int,
    made: list[tuple[str, str, int]],
    receiver: ReceiverProcess | None,
) -> dict[str, Any]:
    """Restart a host on ``folder`` (with the receiver's channel when given), let it deliver
    ``made`` from ``due`` on, wait for the receiver to have them all, and measure."""
    expected_file, acks_file = tmp / "expected.json", tmp / "acks.json"
    expected_file.write_text(json.dumps(made))
    stderr_file = tmp / "host-child.stderr"
    urls = [receiver.url()] if receiver is not None else []
    if receiver is not None:
        assert await receiver.ask("reset") == "ok"
    with stderr_file.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--host",
            str(folder),
            str(due),
            str(expected_file),
            str(acks_file),
            *urls,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    received_count = None
    try:
        line = await child_line(proc, max(SETTLE, due - time.time()))
        if not line.startswith(READY + " "):
            raise InvalidRunError(f"{case}: the host did not start: {line!r}: {tail(stderr_file)}")
        margin = due - time.time()
        if margin <= 0:
            raise InvalidRunError(f"{case}: the host was ready {-margin:.3f} s after T")
        tell(proc, ARMED)
        if receiver is not None:
            await asyncio.sleep(max(0.0, due - time.time()))  # the receiver's CPU from T on
            assert await receiver.ask("mark") == "ok"
        line = await child_line(proc, due - time.time() + deadline_s(len(made)) + SETTLE)
        if line != DONE:
            raise InvalidRunError(f"{case}: host child: {line!r}: {tail(stderr_file)}")
        figures = json.loads(await child_line(proc, SETTLE))
        if receiver is not None:  # the sender goes on after the last dispatch was durable
            bound = max(SETTLE, due + deadline_s(len(made)) - time.time())
            received_count = await receiver.wait_for(len(made), bound)
        tell(proc, STOP)
        assert proc.stdin is not None
        await proc.stdin.drain()
        await asyncio.wait_for(proc.wait(), SETTLE)
        if proc.returncode != 0:
            raise InvalidRunError(f"{case}: host exited {proc.returncode}: {tail(stderr_file)}")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    acked = {(sid, rid): at for sid, rid, at in json.loads(acks_file.read_text())}
    sids = [sid for sid, _, _ in made]
    counts = await herd.verify(folder, sids)
    host_lines = stderr_file.read_text().splitlines()
    result: dict[str, Any] = {
        "case": case,
        "n": len(made),
        "outbox": receiver is not None,
        "margin_at_armed_s": round(margin, 2),
        **figures,
        "stored_one_dispatch": sum(1 for sid in sids if counts[sid] == 1),
        "stored_other_dispatch_counts": sorted({counts[sid] for sid in sids} - {1}),
        "host_log_lines": len(host_lines),
        "host_log_sample": host_lines[:3],
    }
    if receiver is not None:
        # (received_count is the receiver's answer when the wait ended)
        result["received_when_stopped"] = received_count
        result["outbox_table"] = outbox_figures(folder)
        result["receiver"] = arrivals(await receiver.dump(tmp), due, made, acked)
    return result


async def herd_run(n: int, receiver: ReceiverProcess | None) -> dict[str, Any]:
    """herd.py's herd of ``n`` (its calibration, build and restarted host), outbox on or off."""
    case = "herd, outbox on" if receiver is not None else "herd, outbox off"
    with tempfile.TemporaryDirectory(prefix="dsh-bench-notify-") as name:
        tmp = Path(name)
        per_session = await herd.calibrate(tmp / "calibration")
        due = int(time.time() + n * per_session * herd.SLACK + RESTART_ESTIMATE + herd.MARGIN) + 1
        started = time.perf_counter()
        made = await herd.build(tmp / "dsh", n, due)
        build_s = time.perf_counter() - started
        if any(due_ms != due * 1000 for _, _, due_ms in made):
            raise InvalidRunError("a reminder's scheduledAt is not T")
        result = await deliver(case, tmp, tmp / "dsh", due, made, receiver)
    return {
        **result,
        "calibration_ms_per_session": round(per_session * 1000, 3),
        "build_s": round(build_s, 2),
    }


async def trickle_run(receiver: ReceiverProcess) -> dict[str, Any]:
    """TRICKLE cold Sessions, their reminders due one every TRICKLE_EVERY_MS from T."""
    with tempfile.TemporaryDirectory(prefix="dsh-bench-notify-trickle-") as name:
        tmp, folder = Path(name), Path(name) / "dsh"
        due = int(time.time() + TRICKLE_LEAD) + 1
        async with LiveHost(backend=SQLiteBackend(folder), overlay=Overlay.default()) as host:
            made = list(
                await asyncio.gather(
                    *(
                        herd.create_one(
                            host, f"trickle {i}", format_instant(due * 1000 + i * TRICKLE_EVERY_MS)
                        )
                        for i in range(TRICKLE)
                    )
                )
            )
            if host.sessions.live():
                raise InvalidRunError("Sessions live after the trickle's build")
        return await deliver("trickle", tmp, folder, due, made, receiver)


# -- the run -------------------------------------------------------------------------------------


def save_raw(raw: dict[str, Any]) -> None:
    RAW.write_text(json.dumps(raw))


async def measure() -> dict[str, Any]:
    raw: dict[str, Any] = {"n": N}
    receiver = await ReceiverProcess.start()
    try:
        raw["capacity"] = await capacity(receiver.port)
        print(f"  receiver capacity: {json.dumps(raw['capacity'])}", flush=True)
        for key, with_receiver in (("off", None), ("on", receiver)):
            raw[key] = await herd_run(N, with_receiver)
            save_raw(raw)
            print(f"  herd outbox {key}: {json.dumps(raw[key]['lateness'])}", flush=True)
        raw["trickle"] = await trickle_run(receiver)
        save_raw(raw)
        trickle = raw["trickle"]["receiver"]["durable_to_2xx"]
        print(f"  trickle durable -> 2xx: {json.dumps(trickle)}", flush=True)
    finally:
        await receiver.stop()
    return raw


def ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f} ms"  # NaN: an empty sample


def main() -> dict[str, Any]:
    _common.quiet_logs()
    run_started = time.perf_counter()
    source = os.environ.get("NOTIFY_FROM")
    raw = json.loads(Path(source).read_text()) if source else asyncio.run(measure())
    n, off, on, trickle = raw["n"], raw["off"], raw["on"], raw["trickle"]
    for run in (off, on, trickle):
        run["lateness"] = complete_stats(run["lateness"])
        if "receiver" in run:
            run["receiver"]["durable_to_2xx"] = complete_stats(run["receiver"]["durable_to_2xx"])
            if "send_lateness" in run["receiver"]:
                run["receiver"]["send_lateness"] = complete_stats(run["receiver"]["send_lateness"])
    got = on["receiver"]
    share = ratio(on["lateness"]["p99_ms"], off["lateness"]["p99_ms"])
    ratios = {f"p99_on_over_off_{n}": share}
    targets = [
        target(
            f"{n}: herd lateness p99 with the outbox on <= {TARGET_RATIO:g}x off",
            f"{seconds(on['lateness']['p99_ms'])} vs {seconds(off['lateness']['p99_ms'])}: "
            f"{share}x",
            share is not None and share <= TARGET_RATIO,
            f"{share}x",
        ),
        target(
            f"{n}: webhook send lateness p99 <= {SEND_TARGET_S:g} s from the due instant",
            f"p99 {seconds(got['send_lateness']['p99_ms'])} (p50 "
            f"{seconds(got['send_lateness']['p50_ms'])}, max "
            f"{seconds(got['send_lateness']['max_ms'])})",
            got["send_lateness"]["n"] == n
            and got["send_lateness"]["p99_ms"] <= SEND_TARGET_S * 1000,
            f"p99 {seconds(got['send_lateness']['p99_ms'])}",
        ),
        target(
            f"{n}: every reminder reaches the webhook exactly once",
            f"{got['requests']} requests, {got['distinct_keys']} distinct keys, "
            f"{got['duplicates']} duplicates, {got['missing']} missing",
            got["requests"] == got["distinct_keys"] == n and got["missing"] == 0,
            f"{got['duplicates']} duplicates, {got['missing']} missing",
        ),
    ]
    for run in (off, on, trickle):
        size = run["n"]
        once = run["stored_one_dispatch"] == size and not run["stored_other_dispatch_counts"]
        targets.append(
            target(
                f"{run['case']} ({size}): every Session holds exactly one dispatch, none early",
                f"{run['stored_one_dispatch']} of {size} hold one (other counts "
                f"{run['stored_other_dispatch_counts']}); {run['early']} early",
                once and run["early"] == 0,
                f"{size - run['stored_one_dispatch']} not exactly once, {run['early']} early",
            )
        )
    lateness_rows = [
        [
            run["n"],
            "on (1 json:// webhook)" if run["outbox"] else "off (no channel)",
            f"{run['delivered']} / {run['expected']}",
            seconds(run["lateness"]["p50_ms"]),
            seconds(run["lateness"]["p90_ms"]),
            seconds(run["lateness"]["p99_ms"]),
            seconds(run["lateness"]["max_ms"]),
            run["per_second"],
            run["early"],
            run["stored_one_dispatch"],
            run["host_cpu_cores"],
            run["machine_cpu_busy"],
            run["load_1min_at_t"],
        ]
        for run in (off, on)
    ]
    table = on["outbox_table"]
    receiver_rows = [
        [
            run["case"],
            run["n"],
            got_["requests"],
            got_["distinct_keys"],
            got_["duplicates"],
            got_["missing"],
            got_["first_arrival_after_t_s"],
            got_["last_arrival_after_t_s"],
            got_["rate_first_to_last"],
            got_["rate_from_t"],
            run["outbox_table"]["entries_by_status"],
            run["outbox_table"]["attempts"],
        ]
        for run in (on, trickle)
        for got_ in (run["receiver"],)
    ]
    latency_rows = [
        [
            label,
            run["receiver"]["durable_to_2xx"]["n"],
            ms(run["receiver"]["durable_to_2xx"]["min_ms"]),
            ms(run["receiver"]["durable_to_2xx"]["p50_ms"]),
            ms(run["receiver"]["durable_to_2xx"]["p90_ms"]),
            ms(run["receiver"]["durable_to_2xx"]["p99_ms"]),
            ms(run["receiver"]["durable_to_2xx"]["max_ms"]),
        ]
        for label, run in (
            (f"herd of {n} (outbox on)", on),
            (f"trickle: {TRICKLE} due one every {TRICKLE_EVERY_MS} ms", trickle),
        )
    ]
    cap = raw["capacity"]
    window = got["last_arrival_after_t_s"] or 0.0
    notes = [
        (
            f"receiver (own process, asyncio): took {cap['requests']} POSTs on new connections "
            f"from {cap['workers']} concurrent clients in {cap['seconds']} s = "
            f"{cap['per_second']}/s ({cap['failures']} failures; a lower bound: the client is "
            f"Python too); in the herd it used {got['receiver_cpu_s']} s of CPU over the "
            f"{window} s from T to its last arrival "
            f"({round(got['receiver_cpu_s'] / window, 2) if window else '-'} of one core)"
        ),
        (
            f"outbox on: entries by status {table['entries_by_status']}, {table['attempts']} "
            f"attempts; {got['unexpected']} requests with an unknown key, {got['malformed']} "
            f"malformed; {got['durable_to_2xx_negative']} arrivals before their flush's "
            f"acknowledgement was observed"
        ),
        (
            f"trickle: dispatch lateness p50 {ms(trickle['lateness']['p50_ms'])}, p99 "
            f"{ms(trickle['lateness']['p99_ms'])}, max {ms(trickle['lateness']['max_ms'])}; "
            f"{trickle['receiver']['duplicates']} duplicates, {trickle['receiver']['missing']} "
            f"missing at the receiver"
        ),
    ]
    notes.extend(
        f"{run['case']}: calibration {run['calibration_ms_per_session']} ms/Session, build "
        f"{run['build_s']} s, restart {run['restart_s']} s, {run['margin_at_armed_s']} s before "
        f"T when armed; host CPU {run['host_cpu_s']} s until the last dispatch was durable "
        f"(machine busy {run['machine_cpu_busy']}, 1-min load at T {run['load_1min_at_t']}); "
        f"peak RSS {run['peak_rss_mib']} MiB; {run['host_log_lines']} host log lines "
        f"(warning and above)"
        for run in (off, on)
    )
    result = {
        "name": "notify",
        "title": (
            "The outbox measured: the herd of N cold Sessions with and without a webhook "
            "channel (SQLite WAL + synchronous=FULL), and dispatch durable -> webhook 2xx"
        ),
        "params": {
            "n": n,
            "trickle": TRICKLE,
            "trickle_every_ms": TRICKLE_EVERY_MS,
            "capacity_requests": CAPACITY_REQUESTS,
            "capacity_workers": CAPACITY_WORKERS,
        },
        "capacity": cap,
        "off": off,
        "on": on,
        "trickle": trickle,
        "tables": [
            {
                "title": "due instant T -> dispatch durable, the same herd, outbox off / on",
                "header": [
                    "N",
                    "outbox",
                    "delivered",
                    "p50",
                    "p90",
                    "p99",
                    "max",
                    "per s",
                    "early",
                    "stored once",
                    "host CPU cores",
                    "CPU busy",
                    "load at T",
                ],
                "rows": lateness_rows,
            },
            {
                "title": "at the webhook receiver (loopback)",
                "header": [
                    "case",
                    "N",
                    "requests",
                    "distinct keys",
                    "duplicates",
                    "missing",
                    "first after T s",
                    "last after T s",
                    "msg/s first -> last",
                    "N / (last - T)",
                    "outbox entries",
                    "attempts",
                ],
                "rows": receiver_rows,
            },
            {
                "title": "dispatch durable -> the receiver's 2xx (loopback)",
                "header": ["case", "count", "min", "p50", "p90", "p99", "max"],
                "rows": latency_rows,
            },
        ],
        "ratios": ratios,
        "notes": notes,
        "targets": targets,
        "met": all(item["met"] for item in targets),
        "run_seconds": round(time.perf_counter() - run_started, 1),
    }
    return publish(result)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--receiver":
        asyncio.run(receiver_child())
    elif len(sys.argv) > 1 and sys.argv[1] == "--host":
        host_child(
            Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]), sys.argv[6:]
        )
    else:
        main()
