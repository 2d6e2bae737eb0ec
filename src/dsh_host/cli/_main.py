"""The ``dsh`` command line: ``dsh serve``, ``dsh sessions``, ``dsh reindex``, ``dsh token``,
``dsh export``, ``dsh import``, ``dsh migrate``, ``dsh --help``.

Without ``--overlay``, ``dsh serve``, ``dsh reindex`` and ``dsh sessions`` use the built-in
overlay (:meth:`Overlay.default`: the reminders); ``--overlay none`` loads no plugin. Everything
that can refuse a start without storage (flags, token, overlay file, the model's key, the data
path being a file, a port in use) is checked before the data folder is touched, and a start
that fails after that removes the data folder it created (so a failed start leaves nothing).
A stop (Ctrl-C or SIGTERM) ends with one line on stderr saying how many reminders are pending:
the badges of the Session views named ``*.reminders`` (the Schedule plugin's
``schedule.reminders``) of the live Sessions and of the cold ones in the wake index, derived
through the generic ``dsh_session_views`` hook (the host imports no plugin). ``dsh sessions``
prints the newest Sessions first, at most ``--limit`` (50) unless ``--all``, reading one page of
storage's index at a time (a store of a million Sessions lists as fast as a small one).
Boot reads nothing per stored Session: a cleanly closed SQLite store opens without its
whole-file checks (``persistence/sqlite/_seal.py``), the wake service asks the index for the
earliest entry, and the board is rebuilt only after a migration from before the board.
``dsh export``, ``dsh import`` and ``dsh migrate`` move Sessions between stores
(:mod:`._transfer`, docs/data-format.md): an export reads a SQLite folder without its lock (a
snapshot beside a running server); an import and a migration take the target's lock (and the
source's) like ``dsh serve``, so they refuse a store a server holds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import structlog

from dsh_hookspecs import Event, JSONValue, ModelSettings

from .. import _json, _logging
from .._names import session_name
from .._overlay import Overlay, OverlayError
from ..core import LiveHost, PluginLoadError
from ..models import UnknownModelError
from ..notify import ChannelError, Channels, parse_channels, urls_from_env
from ..persistence import (
    Backend,
    DamagedSummary,
    DataDirLock,
    DataDirLockedError,
    ExportBackend,
    ImportBackend,
    MemoryBackend,
    PostgresBackend,
    SessionCursor,
    SessionLiveElsewhereError,
    SessionRow,
    SQLiteBackend,
    StorageBehindError,
    StorageError,
    StorageReadOnlyError,
    StoredSession,
    load_read_only,
    read_only_page,
    redacted,
    session_count,
    session_cursor,
    session_page,
)
from ..web import WebServer, badges, is_loopback, token_problem
from ._args import DEFAULT_EVICT_IDLE, DEFAULT_LEASE_SECONDS, NO_PLUGINS
from ._args import parser as _parser
from ._backup import run_backup
from ._transfer import ExportFileError, Plugins, Totals, export, import_file, migrate

log = structlog.get_logger(__name__)

#: The file a SQLite data folder holds: a folder without it is not a dsh data folder.
STORE_FILE = "dsh.sqlite3"
#: The lock file a SQLite data folder holds while a dsh process uses it.
LOCK_FILE = "dsh.lock"
#: What `dsh serve --overlay none` says once it started (stdout, before "listening on").
NO_PLUGINS_LOADED = (
    "--overlay none: no plugins are loaded; reminders are unavailable "
    "(leave out --overlay for the built-in reminders)"
)
#: The environment variables the ``openai`` adapter reads its key from, in order.
KEY_VARIABLES = ("DSH_MODEL_API_KEY", "OPENAI_API_KEY")
#: A Session view whose name ends so counts pending reminders with its ``badge``.
REMINDERS_VIEW_SUFFIX = ".reminders"
#: The most wake entries the stop line reads to find the cold Sessions with reminders.
MAX_COUNTED_WAKES = 10_000
#: Seconds the stop line may spend counting before it says less.
COUNT_SECONDS = 5.0
#: How every refusal of a token ends: where a good one comes from.
HOW_TO_MAKE_ONE = "make one with: dsh token"
#: The data folder's subfolder of Web Push's key pair and subscriptions.
PUSH_FOLDER = "webpush"
#: Who sends Web Push (VAPID ``sub``) when the public URL is not https.
PUSH_SUBJECT = "mailto:dsh@localhost"


def _backend(
    data: Path | str,
    *,
    accept_data_loss: bool = False,
    lease_seconds: int | None = None,
    host_id: str | None = None,
) -> Backend:
    if isinstance(data, str):
        return PostgresBackend(
            data, lease_seconds=lease_seconds or DEFAULT_LEASE_SECONDS, owner=host_id
        )
    return SQLiteBackend(data, accept_data_loss=accept_data_loss)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "token":
        print(new_token())
        return 0
    if args.command == "serve":
        _logging.configure(level=args.log_level)
        return _run(_serve(args))
    if args.command == "reindex":
        _logging.configure(level="warning")
        return _run(_reindex(args))
    if args.command == "backup":
        _logging.configure(level="critical")
        return run_backup(args)
    if args.command in TRANSFERS:
        # What they have to say is a summary or a `dsh: ...` line; a refused lock is said so.
        _logging.configure(level="error")
        return _run(TRANSFERS[args.command](args))
    # A reader: everything it has to say is a plain `dsh: ...` line (a refusal, the warning of
    # a store behind its record) or a listed row (DAMAGED marks), so the storage layer's
    # structured lines (a lock held by a running `dsh serve`, a damaged row) stay silent.
    _logging.configure(level="critical")
    return _run(_sessions(args))


def overlay_of(choice: Path | str | None) -> Overlay:
    """The overlay an ``--overlay`` value names: not given, the built-in one; ``none``, no
    plugin; else the file. Raises :class:`OverlayError`."""
    if choice is None:
        return Overlay.default()
    if choice == NO_PLUGINS:
        return Overlay(source=f"--overlay {NO_PLUGINS}")
    assert isinstance(choice, Path)
    return Overlay.load(choice)


def _overlay_or_say(choice: Path | str | None) -> Overlay | None:
    """The overlay ``--overlay`` names, or ``None`` once its refusal is said (one ``dsh: ...``
    line on stderr; the caller exits 2)."""
    try:
        return overlay_of(choice)
    except OverlayError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return None


async def _reindex(args: argparse.Namespace) -> int:
    if isinstance(args.data, Path) and (problem := not_a_data_folder(args.data)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    if (overlay := _overlay_or_say(args.overlay)) is None:
        return 2
    host = LiveHost(backend=_backend(args.data), model="none", overlay=overlay)
    try:
        await host.start()
        rebuilt, entries, failed = await host.reindex()
    except (StorageError, PluginLoadError) as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    finally:
        await host.close()
    print(f"reindexed {rebuilt} sessions: {entries} wake entries")
    for session_id in failed:
        print(f"dsh: session {session_id} could not be reindexed", file=sys.stderr)
    return 1 if failed else 0


async def _export(args: argparse.Namespace) -> int:
    """``dsh export``: a SQLite folder is read through a read-only snapshot without its lock
    (beside a running server); a database is opened (no lease is taken)."""
    if isinstance(args.data, Path) and (problem := not_a_data_folder(args.data)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    backend = _backend(args.data)
    assert isinstance(backend, ExportBackend)
    opened = isinstance(backend, PostgresBackend)
    try:
        if opened:
            await backend.open()
        if args.output is None:
            totals = await export(backend, sys.stdout.buffer, args.session)
            sys.stdout.buffer.flush()
        else:
            totals = await _export_to(backend, args.output, args.session)
    except StorageError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        where = "standard output" if args.output is None else str(args.output)
        print(f"dsh: cannot write {where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        if opened:
            await backend.close()
    where = "" if args.output is None else f" to {args.output}"
    print(
        f"exported {_sessions_words(totals.sessions)} ({totals.events:,} events){where}",
        file=sys.stderr,
    )
    return 0


async def _export_to(backend: ExportBackend, output: Path, ids: list[str] | None) -> Totals:
    """Write the export to a new file beside ``output``, then put it in place: ``output`` is
    complete or untouched."""
    partial = output.with_name(f".{output.name}.partial")
    try:
        with partial.open("wb") as file:
            totals = await export(backend, file, ids)
            file.flush()
            os.fsync(file.fileno())
        partial.replace(output)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return totals


def _sessions_words(count: int) -> str:
    return "1 Session" if count == 1 else f"{count:,} Sessions"


def _target_problem(data: Path | str) -> str | None:
    """Why ``data`` cannot be written as a store (a file where a folder belongs), or ``None``."""
    if isinstance(data, Path) and data.exists() and not data.is_dir():
        return f"{data} is not a dsh data folder: it is a file"
    return None


async def _import(args: argparse.Namespace) -> int:
    """``dsh import``: validate the whole file, then store it in one transaction."""
    if not args.file.is_file():
        print(f"dsh: cannot read {args.file}: no such file", file=sys.stderr)
        return 2
    if (problem := _target_problem(args.data)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    if (overlay := _overlay_or_say(args.overlay)) is None:
        return 2
    created = _created_top(args.data)
    status = 1
    try:
        async with Plugins(overlay) as plugins:
            backend = _backend(args.data)
            assert isinstance(backend, ImportBackend)
            await backend.open()
            try:
                counts = await import_file(args.file, backend, plugins)
            finally:
                await backend.close()
        status = 0
    except (ExportFileError, StorageError, PluginLoadError) as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    finally:
        if status != 0 and created is not None:
            assert isinstance(args.data, Path)
            _remove_created(args.data, created)
    print(
        f"imported {_sessions_words(counts.imported)} ({counts.imported_events:,} events), "
        f"{counts.unchanged:,} already present"
    )
    return 0


def _same_store(first: Path | str, second: Path | str) -> bool:
    if isinstance(first, Path) and isinstance(second, Path):
        return first.resolve() == second.resolve()
    return first == second


async def _migrate(args: argparse.Namespace) -> int:
    """``dsh migrate``: refuse a source or target a server holds and a target that holds
    Sessions (without ``--add``), copy in one transaction, then verify."""
    source, target = args.source, args.target
    if _same_store(source, target):
        print("dsh: --from and --to name the same store", file=sys.stderr)
        return 2
    if isinstance(source, Path) and (problem := not_a_data_folder(source)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    if (problem := _target_problem(target)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    if (overlay := _overlay_or_say(args.overlay)) is None:
        return 2
    created = _created_top(target)
    try:
        async with contextlib.AsyncExitStack() as stack:
            plugins = await stack.enter_async_context(Plugins(overlay))
            reader = await stack.enter_async_context(_held_source(source))
            store = _backend(target)
            assert isinstance(store, ImportBackend)
            assert isinstance(store, ExportBackend)
            await store.open()
            stack.push_async_callback(store.close)
            stored = await session_count(store)
            if stored and not args.add:
                print(
                    f"dsh: {redacted(str(target))} already holds {_sessions_words(stored)}; "
                    "pass --add to add these to them",
                    file=sys.stderr,
                )
                return 1
            done = await migrate(reader, store, plugins, store)
    except (StorageError, PluginLoadError) as exc:
        if created is not None:
            assert isinstance(target, Path)
            _remove_created(target, created)
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    counts, verified = done.counts, done.verified
    present = f", {counts.unchanged:,} already present" if counts.unchanged else ""
    print(
        f"migrated {_sessions_words(counts.imported)} ({counts.imported_events:,} events) from "
        f"{redacted(str(source))} to {redacted(str(target))}{present}; verified "
        f"{_sessions_words(verified.sessions)} and {verified.events:,} events: every log's "
        "sha256 is equal"
    )
    return 0


@contextlib.asynccontextmanager
async def _held_source(source: Path | str) -> AsyncIterator[ExportBackend]:
    """The source of a migration, held so no server writes it meanwhile: a folder's lock for
    the whole migration (a running ``dsh serve`` refuses it), or a database no host holds a
    lease on."""
    if isinstance(source, Path):
        lock = DataDirLock(source)
        try:
            lock.acquire()
        except DataDirLockedError as exc:
            raise DataDirLockedError(f"{exc}; stop it before migrating") from None
        try:
            yield SQLiteBackend(source)  # never opened: it exports through a read-only snapshot
        finally:
            lock.release()
        return
    backend = PostgresBackend(source)
    await backend.open()
    try:
        held = await backend.held_elsewhere()
        if held is not None:
            raise SessionLiveElsewhereError(
                f"{held}: stop every dsh serve on {redacted(source)} before migrating"
            )
        yield backend
    finally:
        await backend.close()


#: The commands that move Sessions between stores.
TRANSFERS: Mapping[str, Callable[[argparse.Namespace], Awaitable[int]]] = {
    "export": _export,
    "import": _import,
    "migrate": _migrate,
}


def _run(coro: object) -> int:
    try:
        return asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        return 130


def not_a_data_folder(data: Path) -> str | None:
    """Why ``data`` cannot be listed as a SQLite data folder, or ``None`` when it can. Only
    looks: a reader never creates a folder."""
    if not data.exists():
        return f"no data folder at {data}: nothing is stored there (dsh serve creates it)"
    if not data.is_dir():
        return f"{data} is not a dsh data folder: it is a file"
    if not (data / STORE_FILE).is_file():
        return f"{data} is not a dsh data folder: it holds no {STORE_FILE}"
    return None


async def _sessions(args: argparse.Namespace) -> int:
    if isinstance(args.data, Path) and (problem := not_a_data_folder(args.data)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    if (overlay := _overlay_or_say(args.overlay)) is None:
        return 2
    # The plugins only derive views here: a host of their own, on memory, never this store.
    viewer = LiveHost(backend=MemoryBackend(), model="none", overlay=overlay)
    try:
        await viewer.start()
    except PluginLoadError as exc:
        await viewer.close()
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    try:
        return await _list(args, viewer)
    finally:
        await viewer.close()


#: The most rows one read of ``dsh sessions`` takes from storage (``--all`` reads page by page).
LIST_PAGE = 200

#: One read of the list: its rows and, when the read counted them, how many are stored.
ListRead = tuple[Sequence[SessionRow], int | None]
#: Reads one page of the list after a cursor.
PageReader = Callable[[SessionCursor | None, int], Awaitable[ListRead]]


async def _list(args: argparse.Namespace, viewer: LiveHost) -> int:
    """``dsh sessions``: the newest Sessions first, at most ``--limit`` of them (then how many
    more there are) or ``--all``, read a page at a time through storage's index; each printed
    row's log is read for its name, badges and pending reminders."""
    backend = _backend(args.data)
    try:
        await backend.open()
    except (DataDirLockedError, StorageReadOnlyError, StorageBehindError) as refused:
        # A running `dsh serve` holds the folder, or the store cannot be written, or it lost
        # acknowledged commits (said, then listed): read what is committed through a
        # read-only connection (no lock needed).
        if isinstance(refused, StorageBehindError):
            print(f"dsh: warning: {refused}", file=sys.stderr)
        assert isinstance(args.data, Path)
        folder: Path = args.data

        async def read_only(after: SessionCursor | None, limit: int) -> ListRead:
            # The count comes with the page (one snapshot) when a limit may need it.
            counted = not args.all
            read = partial(read_only_page, folder, after, limit, count=counted)
            return await asyncio.to_thread(read)

        async def load(session_id: str) -> StoredSession | None:
            return await asyncio.to_thread(load_read_only, folder, session_id)

        return await _print_sessions(args, viewer, read_only, load)
    except StorageError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    try:

        async def page(after: SessionCursor | None, limit: int) -> ListRead:
            return await session_page(backend, after=after, limit=limit), None

        return await _print_sessions(
            args, viewer, page, backend.load, count=lambda: session_count(backend)
        )
    finally:
        await backend.close()


async def _print_sessions(
    args: argparse.Namespace,
    viewer: LiveHost,
    page: PageReader,
    load: Callable[[str], Awaitable[StoredSession | None]],
    count: Callable[[], Awaitable[int]] | None = None,
) -> int:
    """Print the rows page by page; past ``--limit``, one line says how many more exist."""
    limit: int | None = None if args.all else args.limit
    shown = 0
    after: SessionCursor | None = None
    try:
        while True:
            want = LIST_PAGE if limit is None else min(LIST_PAGE, limit - shown)
            # One row more than printed says whether more follow.
            found, stored = await page(after, want + 1)
            rows = found[:want]
            summary_of = await _summaries(viewer, rows, load)
            for row in rows:
                print(_session_line(row, summary_of, as_json=args.json))
            shown += len(rows)
            if len(found) <= want or not rows:
                break
            after = session_cursor(rows[-1])
            if limit is not None and shown >= limit:
                total = stored if stored is not None else await count() if count else shown
                # Sessions come and go beside a running server: more exist, whatever the count.
                more = max(total - shown, 1)
                note = f"\u2026 and {more:,} more; use --limit or --all"
                print(note, file=sys.stderr if args.json else sys.stdout)
                break
    except StorageError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    if shown == 0 and not args.json:
        print("no sessions")
    return 0


def _session_line(
    row: SessionRow,
    summary_of: Mapping[str, tuple[str | None, dict[str, JSONValue], int]],
    *,
    as_json: bool,
) -> str:
    """One row as ``dsh sessions`` prints it: text, or one JSON object (``--json``)."""
    if isinstance(row, DamagedSummary):
        created = row.created_at
        if as_json:
            bad: dict[str, JSONValue] = {"id": row.id, "damaged": True, "error": row.error}
            if created is not None:
                bad["createdAt"] = created
            return _json.dumps(bad)
        when = "?" if created is None else _utc(created)
        return f"{row.id}  {when}  DAMAGED: {row.error}"
    header = row.header
    name, row_badges, pending = summary_of.get(header.id, (None, {}, 0))
    if as_json:
        out = {**header.to_json(), "length": row.length}
        if name is not None:
            out["name"] = name
        if row_badges:
            out["badges"] = row_badges
        return _json.dumps({**out, "pendingReminders": pending})
    parent = f"  fork of {header.parent_session}" if header.parent_session else ""
    named = "" if name is None else f'  "{name}"'
    return (
        f"{header.id}  {_utc(header.created_at)}  {row.length} events  "
        f"{_pending_words(pending)}{parent}{named}"
    )


async def _summaries(
    viewer: LiveHost,
    rows: Sequence[SessionRow],
    load: Callable[[str], Awaitable[StoredSession | None]],
) -> dict[str, tuple[str | None, dict[str, JSONValue], int]]:
    """Each listed Session's name, badges and pending reminders, from its stored log and the
    loaded plugins' views (as the Web host's Session list derives them); a Session whose log
    cannot be read is left out (its row then shows none)."""
    out: dict[str, tuple[str | None, dict[str, JSONValue], int]] = {}
    for row in rows:
        if isinstance(row, DamagedSummary):
            continue
        session_id = row.header.id
        try:
            stored = await load(session_id)
        except StorageError:
            continue
        if stored is None:
            continue
        views = viewer.plugins.session_views(stored.events, stored.header.owned_from, None)
        out[session_id] = (session_name(stored.events), badges(views), reminders_in(views))
    return out


def _pending_words(pending: int) -> str:
    if pending == 0:
        return "no reminders pending"
    return "1 reminder pending" if pending == 1 else f"{pending} reminders pending"


def _utc(epoch_ms: int) -> str:
    try:
        return f"{datetime.fromtimestamp(epoch_ms / 1000, tz=UTC):%Y-%m-%dT%H:%M:%SZ}"
    except (OverflowError, OSError, ValueError):
        return f"{epoch_ms} ms"


def new_token() -> str:
    """``dsh token``: a fresh random token, 43 URL-safe characters (256 bits)."""
    # Never with a leading "-": `dsh serve --token $(dsh token)` would read it as an option.
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token from ``--token``, ``--token-file`` or ``DSH_TOKEN`` (at most one), or
    :class:`ValueError` saying why it cannot guard ``--host`` (:func:`token_problem`)."""
    given = [
        name
        for name, value in (
            ("--token", args.token),
            ("--token-file", args.token_file),
            ("DSH_TOKEN", os.environ.get("DSH_TOKEN")),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise ValueError(f"give the token one way only, not {' and '.join(given)}")
    if args.token_file is not None:
        try:
            with Path(args.token_file).open(encoding="utf-8") as file:
                token = file.readline().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read --token-file {args.token_file}: {exc}") from None
        if not token:
            raise ValueError(f"--token-file {args.token_file} holds no token; {HOW_TO_MAKE_ONE}")
        what = f"the token in --token-file {args.token_file}"
    elif args.token is not None:
        token, what = args.token, "--token"
    elif (environ := os.environ.get("DSH_TOKEN")) is not None:
        token, what = environ, "DSH_TOKEN"
    else:
        return None
    if (problem := token_problem(token, args.host, what=what)) is not None:
        raise ValueError(f"{problem}; {HOW_TO_MAKE_ONE}")
    return token


def model_settings(args: argparse.Namespace) -> ModelSettings:
    """What the chosen model adapter is built with; secrets come only from the environment."""
    return ModelSettings(
        model_name=args.model_name,
        base_url=args.base_url,
        max_steps=args.model_max_steps,
        timeout_seconds=args.model_timeout,
        context_chars=args.model_context_chars,
        step_timeout_seconds=args.model_step_timeout,
        max_reply_chars=args.model_max_reply_chars,
        environ=dict(os.environ),
    )


def evict_idle(flag: int | None, overlay: Overlay) -> int:
    """The idle-eviction timeout of ``dsh serve``: the flag, else the overlay's, else 600."""
    if flag is not None:
        return flag
    return DEFAULT_EVICT_IDLE if overlay.evict_idle_seconds is None else overlay.evict_idle_seconds


def key_problem(args: argparse.Namespace) -> str | None:
    """Why ``--model openai`` cannot start, or ``None``: it needs a key in the environment
    unless ``--base-url`` points at this machine (a keyless local server: Ollama, llama.cpp)."""
    if args.model != "openai" or any(os.environ.get(name, "").strip() for name in KEY_VARIABLES):
        return None
    if args.base_url is not None and _on_this_machine(args.base_url):
        return None
    return (
        "--model openai needs an API key: set DSH_MODEL_API_KEY (or OPENAI_API_KEY) in the "
        "environment. A keyless local server (Ollama, llama.cpp) needs none when --base-url "
        "points at this machine, e.g. --base-url http://127.0.0.1:11434/v1"
    )


def _on_this_machine(url: str) -> bool:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host is not None and is_loopback(host)


def port_problem(host: str, port: int) -> str | None:
    """Why ``dsh serve`` could not listen on ``host:port``, found by binding it once (as the
    server would) before any storage is touched; ``None`` when it can (or ``port`` is 0)."""
    if port == 0:
        return None
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    if address.lower() == "localhost":
        address, family = "127.0.0.1", socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, port))
    except OSError as exc:
        return listen_problem(host, port, exc)
    return None


def listen_problem(host: str, port: int, exc: OSError) -> str:
    """The plain words for a failed bind: a port in use names the ways to pick another."""
    if exc.errno == errno.EADDRINUSE:
        other = port + 1 if port < 65535 else port - 1
        return (
            f"port {port} on {host} is already in use (is another dsh serve running?); "
            f"choose another: dsh serve --port {other}, or make run PORT={other}"
        )
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def _created_top(data: Path | str) -> Path | None:
    """The outermost folder of ``data`` that does not exist yet (what a start creates), or
    ``None`` when ``data`` exists or is a PostgreSQL URL."""
    if not isinstance(data, Path) or data.exists():
        return None
    top = data.absolute()
    while not top.parent.exists():
        top = top.parent
    return top


def _remove_created(data: Path, top: Path) -> None:
    """Undo what a failed start created: the store's own files in ``data``, then each folder
    from ``data`` up to ``top`` that is empty now (anything else is left alone)."""
    folder = data.absolute()
    for pattern in (f"{STORE_FILE}*", LOCK_FILE):
        for path in folder.glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()
    while True:
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == top:
            return
        folder = folder.parent


async def _serve(args: argparse.Namespace) -> int:
    try:
        args.token = _token(args)
    except ValueError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    if args.token is None and not is_loopback(args.host):
        print(
            f"dsh: refusing to listen on {args.host} without --token: anyone who can reach it "
            f"could drive every Session. Pass --token TOKEN ({HOW_TO_MAKE_ONE}), or use --host "
            "127.0.0.1.",
            file=sys.stderr,
        )
        return 2
    if not 0 <= args.port <= 65535:
        print(f"dsh: --port must be in [0, 65535], not {args.port}", file=sys.stderr)
        return 2
    if (overlay := _overlay_or_say(args.overlay)) is None:
        return 2
    if (problem := key_problem(args)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 2
    try:
        # Checked (and named only masked) before anything starts: a URL holds its secrets.
        args.channels = parse_channels(
            [*overlay.notify_urls, *urls_from_env(os.environ), *(args.notify or ())]
        )
    except ChannelError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    if isinstance(args.data, Path) and args.data.exists() and not args.data.is_dir():
        print(f"dsh: {not_a_data_folder(args.data)}", file=sys.stderr)
        return 2
    if (problem := port_problem(args.host, args.port)) is not None:
        print(f"dsh: {problem}", file=sys.stderr)
        return 1
    created = _created_top(args.data)
    # Our own handlers (never uvicorn's): a signal only asks for the orderly stop below, and
    # one arriving while the host starts is honoured right after it started.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        status = await _serve_until(args, overlay, stop)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
    if status != 0 and created is not None:
        assert isinstance(args.data, Path)
        _remove_created(args.data, created)
    return status


async def _serve_until(args: argparse.Namespace, overlay: Overlay, stop: asyncio.Event) -> int:
    """Run until ``stop``; 0 after an orderly stop (then one line on stderr says how many
    reminders are pending), else the status of a start that failed."""
    backend = _backend(
        args.data,
        accept_data_loss=args.accept_data_loss,
        lease_seconds=args.lease_seconds,
        host_id=args.host_id,
    )
    try:
        host = LiveHost(
            backend=backend,
            model=args.model,
            model_settings=model_settings(args),
            overlay=overlay,
            evict_idle_seconds=evict_idle(args.evict_idle, overlay),
            channels=channels_of(args),
            public_url=args.public_url,
            notify_timeout=args.notify_timeout,
            notify_retry_base=args.notify_retry_base,
            notify_owner=args.host_id,
        )
    except UnknownModelError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    try:
        await host.start()
    except (StorageError, PluginLoadError, UnknownModelError) as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    try:
        # A store migrated at open has an empty board: rebuilt from the logs before serving.
        await host.rebuild_if_migrated()
    except StorageError as exc:
        await host.close()
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    web = WebServer(host, bind_host=args.host, port=args.port, token=args.token)
    said: str | None = None
    try:
        try:
            url = await web.start()
        except OSError as exc:
            print(f"dsh: {listen_problem(args.host, args.port, exc)}", file=sys.stderr)
            return 1
        log.info("host.ready", data=redacted(str(args.data)), plugins=host.plugins.names, url=url)
        if args.overlay == NO_PLUGINS:
            print(NO_PLUGINS_LOADED, flush=True)
        print(f"listening on {url}", flush=True)
        await stop.wait()
        log.info("host.stopping")
        # Streams end first; then the reminders are counted while the plugins are loaded.
        await web.stop()
        # Without a plugin nothing counts reminders (nor delivers them).
        said = stopped_line(await _count_pending(host)) if host.plugins.names else "stopped"
    finally:
        # Every Agent is disposed and every pending write committed.
        await web.stop()
        await host.close()
    print(said, file=sys.stderr, flush=True)
    return 0


def channels_of(args: argparse.Namespace) -> Channels | None:
    """The host's notification channels: the configured URLs, and Web Push (its keys and
    subscriptions in the data folder) when ``--public-url`` is set on a folder store; ``None``
    when there is neither."""
    push_folder = None
    if args.public_url is not None and isinstance(args.data, Path):
        push_folder = args.data / PUSH_FOLDER
    if not args.channels and push_folder is None:
        return None
    subject = args.public_url if str(args.public_url).startswith("https:") else PUSH_SUBJECT
    channels = Channels(
        args.channels,
        push_folder=push_folder,
        push_subject=subject,
        allow_private=args.notify_allow_private or (),
    )
    channels.open_push()
    return channels


def reminders_in(views: Mapping[str, JSONValue]) -> int:
    """The pending reminders the views of one Session count: the ``badge`` of each view named
    ``*.reminders`` (the Schedule plugin's ``schedule.reminders``)."""
    return sum(
        badge
        for name, badge in badges(views).items()
        if name.endswith(REMINDERS_VIEW_SUFFIX) and isinstance(badge, int)
    )


async def _count_pending(host: LiveHost) -> int | None:
    """The reminders pending in the live Sessions (each flushed first, then its committed log)
    and in the cold Sessions the wake index holds (their stored logs), through the generic
    ``dsh_session_views`` hook; ``None`` when storage does not answer within
    :data:`COUNT_SECONDS`."""

    async def count() -> int:
        total, seen = 0, set()
        for session in host.sessions.live():
            with contextlib.suppress(Exception):
                await host.sessions.flush(session)
            committed: Sequence[Event] = session.events[: host.persistence.durable_length(session)]
            views = host.plugins.session_views(committed, session.header.owned_from, session)
            total += reminders_in(views)
            seen.add(session.id)
        for session_id, _, _ in await host.backend.due_wakes(2**62, MAX_COUNTED_WAKES):
            if session_id in seen:
                continue
            seen.add(session_id)
            stored = await host.inspect(session_id)
            if stored is not None:
                views = host.plugins.session_views(stored.events, stored.header.owned_from, None)
                total += reminders_in(views)
        return total

    try:
        return await asyncio.wait_for(count(), COUNT_SECONDS)
    except (TimeoutError, StorageError) as exc:
        log.warning("host.pending_uncounted", error=str(exc) or type(exc).__name__)
        return None


def stopped_line(pending: int | None) -> str:
    """The one line a stop prints (stderr): how many reminders wait for the next start."""
    if pending is None:
        return "stopped; the pending reminders could not be counted (they fire when dsh runs again)"
    if pending == 0:
        return "stopped; no reminders are pending"
    if pending == 1:
        return "stopped; 1 reminder is pending and fires when dsh runs again"
    return f"stopped; {pending} reminders are pending and fire when dsh runs again"


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    raise SystemExit(main())
