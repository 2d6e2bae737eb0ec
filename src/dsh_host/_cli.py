"""The ``dsh`` command line: ``dsh serve``, ``dsh sessions``, ``dsh reindex``, ``dsh token``,
``dsh --help``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import structlog

from dsh_hookspecs import JSONValue, ModelSettings

from . import _json, _logging
from ._cli_args import DEFAULT_EVICT_IDLE, DEFAULT_LEASE_SECONDS, EXAMPLE_OVERLAY
from ._cli_args import parser as _parser
from ._host import LiveHost
from ._overlay import Overlay, OverlayError
from ._plugins import PluginLoadError
from .models import UnknownModelError
from .persistence import (
    Backend,
    DataDirLockedError,
    PostgresBackend,
    SQLiteBackend,
    StorageBehindError,
    StorageError,
    StorageReadOnlyError,
    StoredSummary,
    damaged_sessions,
    list_sessions_read_only,
    redacted,
)
from .web import WebServer, is_loopback, token_problem

log = structlog.get_logger(__name__)

#: The file a SQLite data folder holds: a folder without it is not a dsh data folder.
STORE_FILE = "dsh.sqlite3"
#: What `dsh serve` without ``--overlay`` says once it started (stdout, before "listening on").
NO_OVERLAY = (
    "no overlay: no plugins are loaded; reminders are unavailable "
    f"(try --overlay {EXAMPLE_OVERLAY})"
)
#: How every refusal of a token ends: where a good one comes from.
HOW_TO_MAKE_ONE = "make one with: dsh token"


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
    # A reader: everything it has to say is a plain `dsh: ...` line (a refusal, the warning of
    # a store behind its record) or a listed row (DAMAGED marks), so the storage layer's
    # structured lines (a lock held by a running `dsh serve`, a damaged row) stay silent.
    _logging.configure(level="critical")
    return _run(_sessions(args))


async def _reindex(args: argparse.Namespace) -> int:
    try:
        overlay = Overlay.load(args.overlay) if args.overlay else Overlay()
    except OverlayError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
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
    backend = _backend(args.data)
    summaries: Sequence[StoredSummary]
    try:
        await backend.open()
    except (DataDirLockedError, StorageReadOnlyError, StorageBehindError) as refused:
        # A running `dsh serve` holds the folder, or the store cannot be written, or it lost
        # acknowledged commits (said, then listed): read what is committed through a
        # read-only connection (no lock needed).
        if isinstance(refused, StorageBehindError):
            print(f"dsh: warning: {refused}", file=sys.stderr)
        try:
            summaries = await asyncio.to_thread(list_sessions_read_only, args.data)
        except StorageError as exc:
            print(f"dsh: {exc}", file=sys.stderr)
            return 1
    except StorageError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    else:
        try:
            summaries = await backend.list_sessions()
        finally:
            await backend.close()
    # Decodable and damaged rows in one order (oldest first), each on its own line.
    lines: list[tuple[int, str, str]] = []
    for summary in summaries:
        header = summary.header
        if args.json:
            line = _json.dumps({**header.to_json(), "length": summary.length})
        else:
            parent = f" fork of {header.parent_session}" if header.parent_session else ""
            line = f"{header.id}  {_utc(header.created_at)}  {summary.length} events{parent}"
        lines.append((header.created_at, header.id, line))
    for damaged in damaged_sessions(summaries):
        created = damaged.created_at
        if args.json:
            row: dict[str, JSONValue] = {"id": damaged.id, "damaged": True, "error": damaged.error}
            if created is not None:
                row["createdAt"] = created
            line = _json.dumps(row)
        else:
            when = "?" if created is None else _utc(created)
            line = f"{damaged.id}  {when}  DAMAGED: {damaged.error}"
        lines.append((0 if created is None else created, damaged.id, line))
    for _, _, line in sorted(lines):
        print(line)
    if not lines and not args.json:
        print("no sessions")
    return 0


def _utc(epoch_ms: int) -> str:
    try:
        return f"{datetime.fromtimestamp(epoch_ms / 1000, tz=UTC):%Y-%m-%dT%H:%M:%SZ}"
    except (OverflowError, OSError, ValueError):
        return f"{epoch_ms} ms"


def new_token() -> str:
    """``dsh token``: a fresh random token, 43 URL-safe characters (256 bits)."""
    return secrets.token_urlsafe(32)


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
    try:
        overlay = Overlay.load(args.overlay) if args.overlay else Overlay()
    except OverlayError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    # Our own handlers (never uvicorn's): a signal only asks for the orderly stop below, and
    # one arriving while the host starts is honoured right after it started.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        return await _serve_until(args, overlay, stop)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)


async def _serve_until(args: argparse.Namespace, overlay: Overlay, stop: asyncio.Event) -> int:
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
        )
    except UnknownModelError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    try:
        await host.start()
    except (StorageError, PluginLoadError, UnknownModelError) as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 1
    web = WebServer(host, bind_host=args.host, port=args.port, token=args.token)
    try:
        try:
            url = await web.start()
        except OSError as exc:
            print(f"dsh: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
            return 1
        log.info("host.ready", data=redacted(str(args.data)), plugins=host.plugins.names, url=url)
        if args.overlay is None:
            print(NO_OVERLAY, flush=True)
        print(f"listening on {url}", flush=True)
        await stop.wait()
        log.info("host.stopping")
    finally:
        # Streams end first, then every Agent is disposed and every pending write committed.
        await web.stop()
        await host.close()
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    raise SystemExit(main())
