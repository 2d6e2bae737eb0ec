"""The ``dsh`` command line: ``dsh serve``, ``dsh sessions``, ``dsh reindex``, ``dsh --help``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import structlog

from dsh_hookspecs import DEFAULT_MAX_STEPS, JSONValue, ModelSettings

from . import _json, _logging
from ._host import Host
from ._models import UnknownModelError
from ._overlay import Overlay, OverlayError
from ._plugins import PluginLoadError
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
    is_postgres_url,
    list_sessions_read_only,
    redacted,
)
from .web import WebServer, is_loopback

log = structlog.get_logger(__name__)

DEFAULT_DATA = ".dsh-data"
#: Seconds a live Session may sit idle under `dsh serve` before it is detached (issue 11 item 3).
DEFAULT_EVICT_IDLE = 600
_DATA_HELP = "data folder (SQLite), or a postgresql://USER@HOST:PORT/DB URL"


def _data(value: str) -> Path | str:
    """A ``--data`` value: a PostgreSQL URL stays a string, anything else is a folder."""
    return value if is_postgres_url(value) else Path(value)


#: The model settings' defaults, shown in ``dsh serve --help``.
_MODEL_DEFAULTS = ModelSettings()

#: Seconds a host keeps its PostgreSQL leases without renewing them (issue 11 item 5).
DEFAULT_LEASE_SECONDS = 15


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dsh",
        description="dsh: a pluggy-based LLM agent host with durable Session-local reminders.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = commands.add_parser("serve", help="run the host (HTTP + SSE, browser client)")
    serve.add_argument("--overlay", type=Path, help="overlay config (TOML) naming plugins")
    serve.add_argument("--data", type=_data, default=Path(DEFAULT_DATA), help=_DATA_HELP)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    serve.add_argument(
        "--model",
        default="scripted",
        metavar="NAME",
        help="the model adapter: scripted (the keyless demo, default), none, openai (any "
        "OpenAI-compatible chat-completions server), or one a loaded plugin offers",
    )
    serve.add_argument(
        "--model-name",
        metavar="ID",
        help="the model id the adapter asks for (openai: required, e.g. gpt-4o-mini or "
        "qwen2.5:7b); the API key comes from DSH_MODEL_API_KEY, else OPENAI_API_KEY",
    )
    serve.add_argument(
        "--base-url",
        metavar="URL",
        help="the OpenAI-compatible server's base URL, e.g. http://127.0.0.1:11434/v1 for "
        "Ollama (default: the adapter's, https://api.openai.com/v1 for openai)",
    )
    serve.add_argument(
        "--model-max-steps",
        type=_positive_int,
        default=DEFAULT_MAX_STEPS,
        metavar="N",
        help="model requests one turn may make before it stops with a note "
        f"(default {DEFAULT_MAX_STEPS})",
    )
    serve.add_argument(
        "--model-timeout",
        type=_positive_float,
        default=_MODEL_DEFAULTS.timeout_seconds,
        metavar="SECONDS",
        help="seconds to wait to connect and for each piece of a model's reply "
        f"(default {_MODEL_DEFAULTS.timeout_seconds:g})",
    )
    serve.add_argument(
        "--model-context-chars",
        type=_positive_int,
        default=_MODEL_DEFAULTS.context_chars,
        metavar="N",
        help="the most characters of transcript sent per model request; the oldest whole "
        f"exchanges are left out first (default {_MODEL_DEFAULTS.context_chars})",
    )
    serve.add_argument(
        "--token",
        help="bearer token required on /api (required off loopback); visible in the process "
        "list: prefer --token-file or the DSH_TOKEN environment variable",
    )
    serve.add_argument(
        "--token-file", metavar="PATH", help="read the bearer token from the first line of PATH"
    )
    serve.add_argument(
        "--accept-data-loss",
        action="store_true",
        help="start even though the store holds less than was acknowledged before (a lost "
        "-wal file, an emptied or replaced database); logs a warning and accepts what it holds",
    )
    serve.add_argument(
        "--evict-idle",
        type=_seconds,
        metavar="SECONDS",
        help="detach live Sessions idle this long to cold (default: the overlay's "
        f"[host] evict_idle_seconds, else {DEFAULT_EVICT_IDLE}; 0 turns it off)",
    )
    serve.add_argument(
        "--lease-seconds",
        type=_positive_seconds,
        metavar="SECONDS",
        help="PostgreSQL only: how long another host waits before taking over the Sessions of "
        f"a host that stopped renewing its leases (default {DEFAULT_LEASE_SECONDS})",
    )
    serve.add_argument(
        "--host-id",
        type=_host_id,
        metavar="NAME",
        help="PostgreSQL only: a stable name for this host as a lease holder, so that it takes "
        "its own Sessions back at once after a restart (default: a new random name per start, "
        "which waits for the old leases to run out); never give two running hosts one name",
    )
    serve.add_argument("--log-level", default="info", help=argparse.SUPPRESS)

    sessions = commands.add_parser("sessions", help="list the Sessions stored in a data folder")
    sessions.add_argument("--data", type=_data, default=Path(DEFAULT_DATA), help=_DATA_HELP)
    sessions.add_argument("--json", action="store_true", help="print JSON lines")

    reindex = commands.add_parser(
        "reindex", help="rebuild the durable wake index from the stored logs"
    )
    reindex.add_argument("--data", type=_data, default=Path(DEFAULT_DATA), help=_DATA_HELP)
    reindex.add_argument(
        "--overlay",
        type=Path,
        help="overlay config (TOML) naming the plugins that file wakes; without it no plugin "
        "is loaded and every entry is cleared",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        _logging.configure(level=args.log_level)
        return _run(_serve(args))
    _logging.configure(level="warning")
    if args.command == "reindex":
        return _run(_reindex(args))
    return _run(_sessions(args))


async def _reindex(args: argparse.Namespace) -> int:
    try:
        overlay = Overlay.load(args.overlay) if args.overlay else Overlay()
    except OverlayError as exc:
        print(f"dsh: {exc}", file=sys.stderr)
        return 2
    host = Host(backend=_backend(args.data), model="none", overlay=overlay)
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


async def _sessions(args: argparse.Namespace) -> int:
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


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token from ``--token``, ``--token-file`` or ``DSH_TOKEN`` (at most one)."""
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
            raise ValueError(f"--token-file {args.token_file} holds no token")
        return token
    value: str | None = args.token if args.token is not None else os.environ.get("DSH_TOKEN")
    if value == "":
        raise ValueError(f"{given[0]} must not be empty")
    return value


def _whole(text: str, minimum: int, what: str) -> int:
    """``text`` as a whole number of ``what`` no smaller than ``minimum``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number{what}: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, not {value}")
    return value


def _seconds(text: str) -> int:
    """``--evict-idle``: a whole number of seconds >= 0."""
    return _whole(text, 0, " of seconds")


def _host_id(text: str) -> str:
    """``--host-id``: a non-empty printable name."""
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"must be a non-empty printable name, not {text!r}")
    return text


def _positive_int(text: str) -> int:
    """A whole number >= 1."""
    return _whole(text, 1, "")


def _positive_float(text: str) -> float:
    """A number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


def _positive_seconds(text: str) -> int:
    """``--lease-seconds``: a whole number of seconds >= 1."""
    value = _seconds(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {value}")
    return value


def model_settings(args: argparse.Namespace) -> ModelSettings:
    """What the chosen model adapter is built with; secrets come only from the environment."""
    return ModelSettings(
        model_name=args.model_name,
        base_url=args.base_url,
        max_steps=args.model_max_steps,
        timeout_seconds=args.model_timeout,
        context_chars=args.model_context_chars,
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
            "could drive every Session. Pass --token TOKEN, or use --host 127.0.0.1.",
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
        host = Host(
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
