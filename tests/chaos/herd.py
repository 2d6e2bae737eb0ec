"""The nine o'clock herd under a SIGKILL: what :mod:`tests.chaos.test_herd_crash` builds, runs,
reads and checks.

A *herd* is many Sessions, each with one ``at`` reminder due at the same instant, built through
the real Schedule plugin (``cold_delivery``) on an in-process :class:`~dsh_host.LiveHost` that is
closed before any ``dsh serve`` opens the store: at the due instant every Session is cold and
only the durable wake index makes it fire. A :class:`Serve` is one real ``dsh serve`` process on
that store; :class:`Store` reads the store from outside (SQLite read-only, or PostgreSQL) without
touching the servers; :func:`audit` checks every stored log against the herd; :class:`Tabs` are
browser tabs (an event stream per Session, reconnected with ``Last-Event-ID`` and resynced from
the history after a restart, like ``static/sse.js``) whose frames feed the crash harness's
:class:`~tests.chaos.harness.BrowserView`; :func:`read_board` and :func:`read_history` are what
the browser's board and a page reload read.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from dsh_hookspecs import Event, SessionHeader
from dsh_host import LiveHost, _json, _records
from dsh_host.persistence import Backend
from dsh_schedule import format_instant, parse_reminder_framing
from tests.procs import LISTENING, DshProcess, serve_command

from .harness import SCHEDULE_SOURCE, STOPPED_LINE, BrowserView, analyse, read_rows

#: The id every herd reminder gets (the first reminder of its Session).
SCHEDULE_ID = "schedule-1"
#: How many Sessions are created at once while the herd is built.
BUILD_WAVE = 250
#: Per-request timeout of the clients (a loaded 2-CPU machine answers slowly, never this slowly).
REQUEST_S = 60.0
#: The most rows one board page holds.
BOARD_PAGE = 200
#: What each finding is filed under.
CATEGORIES = ("lost", "duplicated", "early", "corrupted", "other")

RawLog = tuple[str, int, list[tuple[str, int, str]]]
RawStore = dict[str, RawLog]


@dataclass(frozen=True)
class Herd:
    """Session id -> the prompt of its one reminder, all due at ``due_ms``."""

    due_ms: int
    prompts: dict[str, str]

    @property
    def due_text(self) -> str:
        return format_instant(self.due_ms)

    def __len__(self) -> int:
        return len(self.prompts)


def due_instant(seconds_from_now: float) -> int:
    """A whole second at least ``seconds_from_now`` ahead, in epoch ms."""
    return (int(time.time() + seconds_from_now) + 1) * 1000


def herd_prompt(index: int) -> str:
    # Quotes, a backslash and CJK: the prompt travels through framing, log, board and views.
    return f'herd #{index}: stand up "now" \\ 站起来'


async def build_herd(backend: Backend, n: int, due_ms: int) -> Herd:
    """``n`` new Sessions on ``backend``, each with one ``at`` reminder due at ``due_ms``, made by
    the Schedule tool as a user action on an in-process host that is closed on return."""
    at = format_instant(due_ms)
    prompts: dict[str, str] = {}
    async with LiveHost(backend=backend) as host:
        host.load_plugin("schedule", {"cold_delivery": True})

        async def one(index: int) -> None:
            agent = await host.create_session()
            prompt = herd_prompt(index)
            value = await agent.execute_tool("schedule_create", {"prompt": prompt, "at": at})
            assert isinstance(value, dict), value
            assert value.get("id") == SCHEDULE_ID, value
            assert value.get("state") == "scheduled", value
            assert value.get("scheduledAt") == at, value
            prompts[agent.session.id] = prompt

        for start in range(0, n, BUILD_WAVE):
            await asyncio.gather(*(one(i) for i in range(start, min(n, start + BUILD_WAVE))))
    return Herd(due_ms, prompts)


# -- the store, read from outside -----------------------------------------------------------------


class Store:
    """Read-only looks at the store beside the running servers (SQLite: a read-only connection in
    one snapshot; PostgreSQL: one repeatable-read transaction)."""

    def __init__(self, data: Path | str) -> None:
        self.data = data
        self.postgres = isinstance(data, str) and data.startswith(("postgresql://", "postgres://"))

    def _query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        if self.postgres:
            with psycopg.connect(str(self.data), autocommit=True) as pg:
                return list(pg.execute(sql.replace("?", "%s"), params).fetchall())
        path = (Path(self.data) / "dsh.sqlite3").absolute()
        lite = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            lite.execute("PRAGMA busy_timeout = 5000")
            return lite.execute(sql, params).fetchall()
        finally:
            lite.close()

    def followups(self) -> int:
        """How many follow-ups are durable (the herd's only follow-ups are its reminders, each
        appended with its dispatch in one step): the cheap progress figure of the kill's wait."""
        ((count,),) = self._query("SELECT count(*) FROM events WHERE type = 'agent/followup'")
        return int(count)

    def wakes(self) -> dict[str, int]:
        """Session id -> the Schedule plugin's durable wake entry."""
        rows = self._query("SELECT session_id, at_ms FROM wakes WHERE plugin = 'schedule'")
        return {str(sid): int(at_ms) for sid, at_ms in rows}

    def leased_by(self, owner: str) -> int:
        """PostgreSQL: how many Sessions name ``owner`` as their lease holder."""
        ((count,),) = self._query("SELECT count(*) FROM sessions WHERE owner = ?", owner)
        return int(count)

    def owners(self) -> dict[str, str]:
        """PostgreSQL: Session id -> its lease holder (Sessions nobody holds are left out)."""
        rows = self._query("SELECT id, owner FROM sessions WHERE owner IS NOT NULL")
        return {str(sid): str(owner) for sid, owner in rows}

    def logs(self) -> RawStore:
        """``{session id: (header text, recorded length, [(type, time, data text)])}``."""
        if not self.postgres:
            return read_rows(Path(self.data))
        out: RawStore = {}
        with psycopg.connect(str(self.data)) as conn:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            for sid, header, length in conn.execute("SELECT id, header, length FROM sessions"):
                out[str(sid)] = (str(header), int(length), [])
            rows = conn.execute(
                "SELECT session_id, seq, type, time, data FROM events ORDER BY session_id, seq"
            )
            for sid, seq, etype, etime, text in rows:
                events = out[str(sid)][2]
                assert seq == len(events), (sid, seq)
                events.append((str(etype), int(etime), str(text)))
        return out


def decode(raw: RawStore) -> tuple[dict[str, tuple[SessionHeader, list[Event]]], list[str]]:
    """Every stored log decoded; the Sessions that do not decode, with why."""
    out: dict[str, tuple[SessionHeader, list[Event]]] = {}
    bad: list[str] = []
    for sid, (header_text, length, rows) in raw.items():
        try:
            header = _records.header_from_json(_json.loads(header_text))
            events = [
                _records.event_from_json(
                    {"seq": seq, "type": etype, "time": etime, "data": _json.loads(text)}
                )
                for seq, (etype, etime, text) in enumerate(rows)
            ]
        except ValueError as exc:
            bad.append(f"{sid}: {exc}")
            continue
        if length != len(events):
            bad.append(f"{sid}: length {length} but {len(events)} events")
            continue
        out[sid] = (header, events)
    return out, bad


@dataclass(frozen=True)
class State:
    """Where one herd reminder stands in a stored log (read cheaply from the raw rows)."""

    dispatched: bool
    followup: str | None
    started: bool
    ended: bool


def state_of(rows: Sequence[tuple[str, int, str]]) -> State:
    dispatched = started = ended = False
    followup: str | None = None
    for etype, _, text in rows:
        if etype == "agent/followup":
            followup = str(json.loads(text).get("messageId"))
        elif etype == "schedule/change" and '"dispatch"' in text:
            dispatched = json.loads(text).get("operation") == "dispatch" or dispatched
        elif etype == "turn/start" and followup is not None:
            started = started or json.loads(text).get("messageId") == followup
        elif etype == "turn/end" and started:
            ended = True
    return State(dispatched, followup, started, ended)


def states(herd: Herd, raw: RawStore) -> dict[str, State]:
    empty = State(dispatched=False, followup=None, started=False, ended=False)
    return {sid: state_of(raw[sid][2]) if sid in raw else empty for sid in herd.prompts}


def stage(state: State) -> str:
    """The name of a reminder's stage (the figures and the history sample use it)."""
    if not state.dispatched:
        return "not dispatched"
    if not state.started:
        return "dispatched, turn not started"
    if not state.ended:
        return "turn started, not ended"
    return "turn ended"


def settled(herd: Herd, raw: RawStore, may_be_cut_off: set[str]) -> list[str]:
    """What the herd still owes: a dispatch, a started reminder turn, and its end (not owed by
    the Sessions of ``may_be_cut_off``: their turn started before the kill, which may have cut
    it off; such a turn is never run again)."""
    owed: list[str] = []
    for sid, state in states(herd, raw).items():
        if not state.dispatched:
            owed.append(f"{sid}: not dispatched")
        elif not state.started:
            owed.append(f"{sid}: dispatched, its turn not started")
        elif not state.ended and sid not in may_be_cut_off:
            owed.append(f"{sid}: its turn has not ended")
    return owed


# -- the end-state audit --------------------------------------------------------------------------


@dataclass
class Audit:
    problems: list[tuple[str, str]] = field(default_factory=list)
    figures: Counter[str] = field(default_factory=Counter)
    #: Session id -> (seq, time) of its dispatch event
    dispatches: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Session id -> messageIds of its reminder turns the kill cut off (no reply owed)
    cut_off: dict[str, set[str]] = field(default_factory=dict)

    def add(self, category: str, message: str) -> None:
        assert category in CATEGORIES
        self.problems.append((category, message))

    def summary(self, limit: int = 5) -> dict[str, list[str]]:
        """Per category: the count and the first ``limit`` findings (for an assertion)."""
        out: dict[str, list[str]] = {}
        for category in CATEGORIES:
            found = [message for c, message in self.problems if c == category]
            if found:
                out[category] = [f"{len(found)} found", *found[:limit]]
        return out


def audit(
    herd: Herd,
    raw: RawStore,
    at_kill: RawStore,
    wakes: dict[str, int],
    *,
    is_cut_off: Callable[[str, str], bool],
) -> Audit:
    """Every stored log against the herd: one create, exactly one dispatch (not before the due
    instant) right after its one follow-up (the reminder's framing), exactly one reminder turn
    that reached the model with the framing and was answered, and nothing the kill left on disk
    taken back. ``is_cut_off(session id, messageId)``: whether a reminder turn started before
    the kill (the kill may have cut it off: it is closed ``interrupted`` and never re-run)."""
    out = Audit()
    logs, bad = decode(raw)
    for problem in bad:
        out.add("corrupted", problem)
    for sid in raw.keys() - herd.prompts.keys():
        out.add("other", f"{sid}: a Session the herd did not make")
    for sid, (header_text, _, rows) in sorted(at_kill.items()):
        now = raw.get(sid)
        if now is None or now[0] != header_text or now[2][: len(rows)] != rows:
            out.add("lost", f"{sid}: what was on disk at the kill changed or went")
    for sid, prompt in sorted(herd.prompts.items()):
        if sid not in logs:
            if sid not in raw:
                out.add("lost", f"{sid}: not stored")
            continue
        header, events = logs[sid]
        _audit_one(out, herd, sid, prompt, events, header.owned_from, is_cut_off)
        if sid in wakes:
            out.add("other", f"{sid}: a wake entry is left at {wakes[sid]}")
    return out


def _audit_one(  # noqa: PLR0917 - one Session's part of audit()
    out: Audit,
    herd: Herd,
    sid: str,
    prompt: str,
    events: list[Event],
    owned_from: int,
    is_cut_off: Callable[[str, str], bool],
) -> None:
    analysis = analyse(events, owned_from)
    for category, problem in analysis.problems:
        out.add(category, f"{sid}: {problem}")
    created = analysis.creates.get(SCHEDULE_ID)
    if list(analysis.creates) != [SCHEDULE_ID] or created is None:
        out.add("corrupted", f"{sid}: creates {sorted(analysis.creates)}")
        return
    if created[1].get("prompt") != prompt or created[1].get("scheduledAt") != herd.due_text:
        out.add("corrupted", f"{sid}: the create on disk is not the one made: {created[1]}")
    ends = analysis.terminals.get(SCHEDULE_ID, [])
    dispatches = [seq for seq, operation in ends if operation == "dispatch"]
    if not dispatches:
        out.add("lost", f"{sid}: never dispatched (ends {ends})")
        return
    if len(dispatches) > 1 or len(ends) > 1:
        return  # analyse() filed it as duplicated
    seq = dispatches[0]
    dispatch = events[seq]
    out.dispatches[sid] = (seq, dispatch.time)
    out.figures["dispatches"] += 1
    if dispatch.time < herd.due_ms:
        out.add("early", f"{sid}: dispatched at {dispatch.time}, due {herd.due_ms}")
    out.figures["lateness ms (max)"] = max(
        out.figures["lateness ms (max)"], dispatch.time - herd.due_ms
    )
    message_ids = analysis.followups_by_id.get(SCHEDULE_ID, [])
    if len(message_ids) != 1:
        out.add("lost" if not message_ids else "duplicated", f"{sid}: follow-ups {message_ids}")
        return
    (message_id,) = message_ids
    followup_seq = analysis.followups[message_id][0]
    followup = events[followup_seq]
    assert isinstance(followup.data, dict)
    framing = parse_reminder_framing(str(followup.data.get("text")))
    if framing != (SCHEDULE_ID, herd.due_text, prompt):
        out.add("corrupted", f"{sid}: the follow-up frames {framing}")
    if followup.time < herd.due_ms:
        out.add("early", f"{sid}: follow-up at {followup.time}, due {herd.due_ms}")
    starts = analysis.turn_starts.get(message_id, [])
    if not starts:
        out.add("lost", f"{sid}: the reminder never reached the model (no turn started)")
        out.figures["reminder turns never started"] += 1
        return
    if len(starts) > 1:
        return  # analyse() filed it as duplicated
    answered = _answered(events, starts[0], followup.data.get("text"), prompt)
    out.figures["reminder turns"] += 1
    if answered is True:
        out.figures["reminder turns answered"] += 1
    elif is_cut_off(sid, message_id):
        out.figures[f"reminder turns cut off by the kill ({answered})"] += 1
        out.cut_off.setdefault(sid, set()).add(message_id)
    else:
        out.add("lost", f"{sid}: the reminder turn was not answered: {answered}")


def _answered(events: list[Event], start: int, framing: object, prompt: str) -> bool | str:
    """``True`` when the turn starting at ``start`` gave the model the reminder's framing and
    stored its reply and an ``ok`` end; else what it lacks."""
    asked = replied = False
    for event in events[start + 1 :]:
        data = event.data if isinstance(event.data, dict) else {}
        if event.type == "user/message":
            asked = data.get("text") == framing and data.get("source") == SCHEDULE_SOURCE
        elif event.type == "assistant/message":
            replied = replied or prompt in str(data.get("text"))
        elif event.type == "turn/start":
            return "another turn started before it ended"
        elif event.type == "turn/end":
            if data.get("outcome") != "ok":
                return f"ended {data}"
            if not asked:
                return "the model was not given the reminder"
            return True if replied else "no reply naming the reminder"
    return "no turn/end"


# -- the processes --------------------------------------------------------------------------------


class Serve:
    """One real ``dsh serve`` (the built-in overlay, the scripted model) on ``data``."""

    def __init__(
        self, data: Path | str, extra: Sequence[str] = (), *, log_level: str = "warning"
    ) -> None:
        """``log_level="info"`` keeps the lines :meth:`logged` counts."""
        self.proc = DshProcess(serve_command(data, extra=extra, log_level=log_level))
        self.url = ""

    async def listening(self, timeout: float = REQUEST_S) -> str:
        match = await asyncio.to_thread(self.proc.wait_for_line, LISTENING, timeout)
        self.url = match[1]
        return self.url

    def alive(self) -> bool:
        return self.proc.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, and wait until it is gone."""
        assert self.proc.kill() == -9

    async def stop(self, timeout: float = REQUEST_S) -> int:
        """SIGTERM, and its exit status."""
        return await asyncio.to_thread(self.proc.terminate, timeout)

    def logged(self, event: str) -> int:
        """How many log lines of ``event`` the ended process wrote (``host.wake_planned``: the
        due wakes it delivered by a stored plan, without resuming their Session)."""
        assert not self.alive()
        self.proc._pumps_done(10.0)
        return self.logged_so_far(event)

    def logged_so_far(self, event: str) -> int:
        """:meth:`logged` while the process runs: the lines of ``event`` read from it so far."""
        count = 0
        for line in list(self.proc.stderr_lines):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            count += isinstance(entry, dict) and entry.get("event") == event
        return count

    def findings(self) -> list[str]:
        """What the ended process logged that is a finding: an error, an unexpected line."""
        assert not self.alive()
        self.proc._pumps_done(10.0)
        out = []
        for line in self.proc.stderr_lines:
            try:
                entry = json.loads(line)
            except ValueError:
                if line.strip() and not STOPPED_LINE.fullmatch(line.strip()):
                    out.append(line.strip()[:300])
                continue
            if isinstance(entry, dict) and entry.get("level") in ("error", "critical", "exception"):
                out.append(line.strip()[:300])
        return out


async def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    *,
    alive: Sequence[Serve] = (),
    interval: float = 0.005,
) -> float:
    """Poll ``predicate`` every ``interval`` s (bounded by ``timeout``) until it holds; the
    seconds it took. A server of ``alive`` that died meanwhile fails at once."""
    started = time.monotonic()
    while not predicate():
        for serve in alive:
            assert serve.alive(), f"{what}: the server exited with {serve.proc.proc.returncode}"
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{what}: not within {timeout} s")
        await asyncio.sleep(interval)  # the poll interval of a bounded wait
    return time.monotonic() - started


# -- what the browser shows -----------------------------------------------------------------------


def client(url: str) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
    return httpx.AsyncClient(base_url=url, timeout=REQUEST_S, limits=limits)


async def read_board(http: httpx.AsyncClient, kind: str) -> list[dict[str, Any]]:
    """Every row of the Schedule plugin's board of ``kind``, page by page, as the board shows."""
    rows: list[dict[str, Any]] = []
    params: dict[str, str | int] = {"plugin": "schedule", "kind": kind, "limit": BOARD_PAGE}
    while True:
        answer = await http.get("/api/board", params=params)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        rows.extend(page["rows"])
        if page["next"] is None:
            return rows
        params["after"] = page["next"]


async def read_history(http: httpx.AsyncClient, sid: str) -> list[dict[str, Any]]:
    """Every history entry of ``sid``, page by page (what a page reload shows)."""
    entries: list[dict[str, Any]] = []
    params: dict[str, int] = {"maxMessages": 500}
    while True:
        answer = await http.get(f"/api/sessions/{sid}/history", params=params)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        entries[:0] = page["entries"]
        if not page["hasMore"] or not page["entries"]:
            return entries
        params = {"maxMessages": 500, "beforeSeq": page["entries"][0]["event"]["seq"]}


def board_problems(herd: Herd, rows: list[dict[str, Any]], found: Audit) -> list[str]:
    """The delivered board against the stored dispatches: exactly one row per delivered
    reminder, naming its dispatch, at its time, with its text."""
    out: list[str] = []
    shown = Counter(str(row["sessionId"]) for row in rows)
    for sid, count in sorted(shown.items()):
        if count != 1:
            out.append(f"{sid}: {count} delivered rows")
        if sid not in found.dispatches:
            out.append(f"{sid}: a delivered row without a stored dispatch")
    for sid in sorted(found.dispatches.keys() - shown.keys()):
        out.append(f"{sid}: delivered, no row on the board")
    for row in rows:
        sid = str(row["sessionId"])
        if sid not in found.dispatches:
            continue
        seq, at_ms = found.dispatches[sid]
        data = {"text": herd.prompts[sid], "id": SCHEDULE_ID, "occurrenceAt": herd.due_text}
        expected = (f"{SCHEDULE_ID}@{seq}", at_ms, data)
        if (row["key"], row["atMs"], row["data"]) != expected:
            out.append(f"{sid}: row {row} is not {expected}")
    return out


def card_problems(herd: Herd, sid: str, entries: list[dict[str, Any]]) -> list[str]:
    """The dispatch cards of one history read: each names the herd reminder as it was made."""
    out = []
    for entry in entries:
        view = entry.get("view")
        if not isinstance(view, dict) or view.get("for") != "event":
            continue
        card = view.get("view")
        expected = {
            "scheduleId": SCHEDULE_ID,
            "prompt": herd.prompts[sid],
            "occurrenceAt": herd.due_text,
            "deliveryMode": "session-local",
        }
        if not isinstance(card, dict) or {k: card.get(k) for k in expected} != expected:
            out.append(f"{sid}: card {card}")
    return out


class Tabs:
    """One browser tab per Session of ``sids``, kept across restarts: each holds an event
    stream (``Last-Event-ID`` from the largest id it saw) and re-reads the history when it
    (re)connects; every frame goes to :attr:`view`."""

    def __init__(self, sids: Sequence[str]) -> None:
        self.sids = list(sids)
        self.view = BrowserView()
        self.tasks: list[asyncio.Task[None]] = []
        self.failures: list[str] = []

    async def open(self, http: httpx.AsyncClient, timeout: float = REQUEST_S) -> None:
        readies = []
        for sid in self.sids:
            ready = asyncio.Event()
            readies.append(ready)
            self.tasks.append(asyncio.create_task(self._tab(http, sid, ready)))
        async with asyncio.timeout(timeout):
            for ready in readies:
                await ready.wait()

    async def closed(self, timeout: float = REQUEST_S) -> None:
        """Wait (bounded) for the streams a dead server dropped; cancel the rest."""
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=timeout)
        for task in self.tasks:
            task.cancel()
        for outcome in await asyncio.gather(*self.tasks, return_exceptions=True):
            if isinstance(outcome, Exception):
                self.failures.append(repr(outcome))
        self.tasks = []

    async def _tab(self, http: httpx.AsyncClient, sid: str, ready: asyncio.Event) -> None:
        headers = {}
        if sid in self.view.last_ids:
            headers["Last-Event-ID"] = str(self.view.last_ids[sid])
        try:
            async with http.stream(
                "GET",
                f"/api/sessions/{sid}/events",
                headers=headers,
                timeout=httpx.Timeout(REQUEST_S, read=None),
            ) as response:
                if response.status_code != 200:
                    self.failures.append(f"stream of {sid}: HTTP {response.status_code}")
                    return
                self.view.history(sid, await read_history(http, sid))
                ready.set()
                data: str | None = None
                frame_id: str | None = None
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        data = line[6:]
                    elif line.startswith("id: "):
                        frame_id = line[4:]
                    elif line == "" and data is not None:
                        self.view.frame(sid, frame_id, json.loads(data))
                        data = frame_id = None
        except httpx.HTTPError:
            pass  # the server died under the stream: the tab reconnects to the next one
        finally:
            ready.set()

    async def resync(self, http: httpx.AsyncClient) -> None:
        """A reload of every tab: the history as it is now."""
        for sid in self.sids:
            self.view.history(sid, await read_history(http, sid))


def shown_problems(view: BrowserView, sids: Sequence[str], found: Audit) -> list[tuple[str, str]]:
    """What ``view`` showed of ``sids`` against the store: exactly one reminder turn, card and
    reply per stored dispatch (no reply owed for a turn the kill cut off)."""
    dispatched = {
        (sid, SCHEDULE_ID): found.cut_off.get(sid, set()) for sid in sids if sid in found.dispatches
    }
    return view.problems(dispatched)


def sample_by_stage(at_kill: dict[str, State], per_stage: int, seed: int) -> list[str]:
    """Up to ``per_stage`` Sessions of each stage their reminder was in at the kill."""
    by_stage: dict[str, list[str]] = {}
    for sid, state in sorted(at_kill.items()):
        by_stage.setdefault(stage(state), []).append(sid)
    rng = random.Random(seed)
    return [
        sid for sids in by_stage.values() for sid in rng.sample(sids, min(per_stage, len(sids)))
    ]


async def screen_problems(
    http: httpx.AsyncClient, herd: Herd, found: Audit, sample: Sequence[str]
) -> dict[str, list[str]]:
    """What the browser shows, against the stored audit: the delivered board (exactly one row
    per delivered reminder; no pending row left) and a page reload of each Session of
    ``sample`` (exactly one card, reminder turn and reply per dispatch)."""
    out: dict[str, list[str]] = {}
    delivered = await read_board(http, "delivered")
    out["board"] = board_problems(herd, delivered, found)
    pending = await read_board(http, "pending")
    out["board"] += [f"{row['sessionId']}: still pending on the board" for row in pending]
    out["history"] = []
    for sid in sample:
        entries = await read_history(http, sid)
        out["history"] += card_problems(herd, sid, entries)
        view = BrowserView()
        view.history(sid, entries)
        out["history"] += [f"{c}: {m}" for c, m in shown_problems(view, [sid], found)]
    found.figures["board rows delivered"] = len(delivered)
    found.figures["histories read"] = len(sample)
    return {
        name: problems[:5] + ([f"({len(problems)} in all)"] if len(problems) > 5 else [])
        for name, problems in out.items()
        if problems
    }
