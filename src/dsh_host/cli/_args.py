"""The ``dsh`` argument parser: its commands, its flags (each with help naming its default) and
the value checks behind them. :mod:`._cli` runs what it parses."""

from __future__ import annotations

import argparse
import re
import textwrap
import urllib.parse
from importlib import metadata
from pathlib import Path

from dsh_hookspecs import DEFAULT_MAX_STEPS, ModelSettings

from ..persistence import is_postgres_url
from ..persistence.sqlite import DEFAULT_FILENAME

#: The distribution that ships ``dsh`` (``pyproject.toml``'s name): ``dsh --version`` reads it.
DISTRIBUTION = "dsh-schedule"
DEFAULT_DATA = ".dsh-data"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_MODEL = "scripted"
DEFAULT_LOG_LEVEL = "info"
#: Seconds a live Session may sit idle under `dsh serve` before it is detached (docs/always-on.md,
#: "Idle eviction").
DEFAULT_EVICT_IDLE = 600
#: Seconds a host keeps its PostgreSQL leases without renewing them (docs/always-on.md,
#: "Several hosts on one PostgreSQL").
DEFAULT_LEASE_SECONDS = 15
#: How many Sessions ``dsh sessions`` prints without ``--limit`` or ``--all``.
DEFAULT_SESSIONS_LIMIT = 50
#: ``--overlay none``: load no plugin at all (a file named ``none`` is ``--overlay ./none``).
NO_PLUGINS = "none"
#: What ``dsh --help`` says first: what dsh is and the first command to try.
DESCRIPTION = (
    "dsh is a chat assistant you run on your own computer that keeps reminders for you. "
    f"To start, run 'dsh serve', then open the address it prints (http://{DEFAULT_HOST}:"
    f"{DEFAULT_PORT}) in your browser and write: remind me in 10 minutes to check the oven."
)
EPILOG = "Each command explains its options: dsh COMMAND --help."
_DATA_HELP = (
    f"the data folder (SQLite), or a postgresql://USER@HOST:PORT/DB URL (default: {DEFAULT_DATA})"
)

#: The model settings' defaults, shown in ``dsh serve --help``.
_MODEL_DEFAULTS = ModelSettings()


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, never breaking a line inside ``.dsh-data`` or ``-wal``."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(re.sub(r"\s+", " ", text).strip(), width, break_on_hyphens=False)


def version() -> str:
    """``dsh VERSION``: the installed distribution's version."""
    try:
        return f"dsh {metadata.version(DISTRIBUTION)}"
    except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "dsh (version unknown: the dsh-schedule distribution is not installed)"


def data_location(value: str) -> Path | str:
    """A ``--data`` value: a PostgreSQL URL stays a string, anything else is a folder."""
    return value if is_postgres_url(value) else Path(value)


def overlay_choice(value: str) -> Path | str:
    """An ``--overlay`` value: :data:`NO_PLUGINS` (``none``) stays a string, anything else is
    the path of an overlay file. Not given at all (``None``): the built-in overlay."""
    return NO_PLUGINS if value == NO_PLUGINS else Path(value)


def parser() -> argparse.ArgumentParser:
    """The whole command line. Every flag's help ends with ``(default: X)``."""
    top = argparse.ArgumentParser(
        prog="dsh", description=DESCRIPTION, epilog=EPILOG, formatter_class=_Formatter
    )
    top.add_argument("--version", action="version", version=version())
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _serve(
        commands.add_parser(
            "serve",
            help="start dsh: the reminder app in your browser (prints its address)",
            formatter_class=_Formatter,
        )
    )
    sessions = commands.add_parser(
        "sessions",
        help="list the conversations (Sessions) stored in a data folder, with their names and "
        "pending reminders",
        formatter_class=_Formatter,
    )
    sessions.add_argument(
        "--data", type=data_location, default=Path(DEFAULT_DATA), metavar="DIR|URL", help=_DATA_HELP
    )
    sessions.add_argument(
        "--json", action="store_true", help="print one JSON object per line (default: text)"
    )
    shown = sessions.add_mutually_exclusive_group()
    shown.add_argument(
        "--limit",
        type=positive_int,
        default=DEFAULT_SESSIONS_LIMIT,
        metavar="N",
        help="print at most N Sessions, the newest first, and say how many more there are "
        f"(default: {DEFAULT_SESSIONS_LIMIT})",
    )
    shown.add_argument(
        "--all",
        action="store_true",
        help="print every stored Session, the newest first (default: at most --limit)",
    )
    _overlay(sessions, "whose views count the pending reminders")
    commands.add_parser(
        "token",
        help="print a new random token for dsh serve's --token, --token-file or DSH_TOKEN",
        description="Print a new random token (43 URL-safe characters) on one line.",
        formatter_class=_Formatter,
    )
    reindex = commands.add_parser(
        "reindex",
        help="rebuild the durable wake index from the stored logs",
        formatter_class=_Formatter,
    )
    reindex.add_argument(
        "--data", type=data_location, default=Path(DEFAULT_DATA), metavar="DIR|URL", help=_DATA_HELP
    )
    _overlay(reindex, "that file wakes")
    _transfer_commands(commands)
    add_backup_parser(commands, formatter_class=_Formatter)
    return top


def add_backup_parser(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter,
) -> argparse.ArgumentParser:
    """Add ``dsh backup --data DIR --to FILE [--verify]`` to the ``dsh`` command's subparsers."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "backup",
        help="copy a SQLite data folder's store to one file while dsh serve keeps running",
        description=(
            "Copy the store of a SQLite data folder to one new file, consistent as of one "
            "moment, while dsh serve keeps serving it. To restore, put the copy as "
            f"{DEFAULT_FILENAME} into an empty folder and run dsh serve --data FOLDER. "
            "For PostgreSQL use pg_dump."
        ),
        formatter_class=formatter_class,
    )
    command.add_argument(
        "--data",
        type=data_location,
        default=Path(DEFAULT_DATA),
        metavar="DIR",
        help=f"the data folder to copy (default: {DEFAULT_DATA})",
    )
    command.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="FILE",
        help="the copy to write: a new file, never overwritten (default: none, required)",
    )
    command.add_argument(
        "--verify",
        action="store_true",
        help="check the copy: SQLite's integrity check, and its Sessions and events counted and "
        "digested against the store as of the copy (default: off)",
    )
    return command


def _transfer_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``dsh export``, ``dsh import`` and ``dsh migrate`` (docs/data-format.md)."""
    export = commands.add_parser(
        "export",
        help="write the stored Sessions to a file (JSON Lines) that dsh import reads, also "
        "while dsh serve runs",
        formatter_class=_Formatter,
    )
    export.add_argument(
        "--data", type=data_location, default=Path(DEFAULT_DATA), metavar="DIR|URL", help=_DATA_HELP
    )
    export.add_argument(
        "--session",
        action="append",
        metavar="ID",
        help="export only this Session; repeatable (default: every stored Session)",
    )
    export.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the export to FILE, complete or not at all (default: standard output)",
    )
    imported = commands.add_parser(
        "import",
        help="add the Sessions of a dsh export file to a store, all or nothing",
        formatter_class=_Formatter,
    )
    imported.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="the file dsh export wrote (default: none, it is required)",
    )
    imported.add_argument(
        "--data", type=data_location, default=Path(DEFAULT_DATA), metavar="DIR|URL", help=_DATA_HELP
    )
    _overlay(imported, "that check each imported event and file its Session's reminders")
    migrate = commands.add_parser(
        "migrate",
        help="move every Session from one store to another (a data folder or PostgreSQL) and "
        "verify the copy",
        formatter_class=_Formatter,
    )
    migrate.add_argument(
        "--from",
        dest="source",
        type=data_location,
        required=True,
        metavar="DIR|URL",
        help="the store to copy: a data folder or a postgresql:// URL no dsh serve is using "
        "(default: none, it is required)",
    )
    migrate.add_argument(
        "--to",
        dest="target",
        type=data_location,
        required=True,
        metavar="DIR|URL",
        help="the store to copy into: a data folder (created when absent) or a postgresql:// "
        "URL no dsh serve is using (default: none, it is required)",
    )
    migrate.add_argument(
        "--add",
        action="store_true",
        help="add to a target that already holds Sessions (default: off: such a target is refused)",
    )
    _overlay(migrate, "that file the moved Sessions' reminders")


def _overlay(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument(
        "--overlay",
        type=overlay_choice,
        metavar="PATH|none",
        help=f"overlay config (TOML) naming the plugins {what}, or 'none' for no plugin "
        "(default: the built-in overlay: reminders (schedule, with cold_delivery on) and "
        "their browser view (ui-schedule), as in examples/web-schedule/overlay.toml)",
    )


def _serve(serve: argparse.ArgumentParser) -> None:
    _overlay(serve, "to load")
    serve.add_argument(
        "--data", type=data_location, default=Path(DEFAULT_DATA), metavar="DIR|URL", help=_DATA_HELP
    )
    serve.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDRESS",
        help=f"address to bind; any other than loopback needs a token (default: {DEFAULT_HOST})",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on, 0 picks a free one (default: {DEFAULT_PORT})",
    )
    serve.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        metavar="NAME",
        help="the model adapter: scripted (the keyless demo), none, openai (any "
        "OpenAI-compatible chat-completions server), or one a loaded plugin offers "
        f"(default: {DEFAULT_MODEL})",
    )
    serve.add_argument(
        "--model-name",
        metavar="ID",
        help="the model id the adapter asks for, e.g. gpt-4o-mini or qwen2.5:7b; the API key "
        "comes from DSH_MODEL_API_KEY, else OPENAI_API_KEY (default: none; openai requires it)",
    )
    serve.add_argument(
        "--base-url",
        metavar="URL",
        help="the OpenAI-compatible server's base URL, e.g. http://127.0.0.1:11434/v1 for "
        "Ollama (default: the adapter's, https://api.openai.com/v1 for openai)",
    )
    serve.add_argument(
        "--model-max-steps",
        type=positive_int,
        default=DEFAULT_MAX_STEPS,
        metavar="N",
        help="model requests one turn may make before it stops with a note "
        f"(default: {DEFAULT_MAX_STEPS})",
    )
    serve.add_argument(
        "--model-timeout",
        type=positive_float,
        default=_MODEL_DEFAULTS.timeout_seconds,
        metavar="SECONDS",
        help="seconds to wait to connect and for each piece of a model's reply "
        f"(default: {_MODEL_DEFAULTS.timeout_seconds:g})",
    )
    serve.add_argument(
        "--model-context-chars",
        type=positive_int,
        default=_MODEL_DEFAULTS.context_chars,
        metavar="N",
        help="the most characters of transcript sent per model request; the oldest whole "
        f"exchanges are left out first (default: {_MODEL_DEFAULTS.context_chars})",
    )
    serve.add_argument(
        "--model-step-timeout",
        type=positive_float,
        default=_MODEL_DEFAULTS.step_timeout_seconds,
        metavar="SECONDS",
        help="the longest one model step may take: its request, retries and whole streamed "
        f"reply together (default: {_MODEL_DEFAULTS.step_timeout_seconds:g})",
    )
    serve.add_argument(
        "--model-max-reply-chars",
        type=positive_int,
        default=_MODEL_DEFAULTS.max_reply_chars,
        metavar="N",
        help="the most characters of one model reply kept (the rest is cut, with a note) and "
        "of one tool call's arguments (a longer call is not run) "
        f"(default: {_MODEL_DEFAULTS.max_reply_chars})",
    )
    serve.add_argument(
        "--token",
        help="bearer token required on /api (required off loopback, then at least 16 characters; "
        "never empty or with spaces around it; make one with: dsh token); visible in the "
        "process list: prefer --token-file or the DSH_TOKEN environment variable (default: "
        "none, or DSH_TOKEN)",
    )
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the bearer token from the first line of PATH, without the spaces and line "
        "end around it (default: none)",
    )
    serve.add_argument(
        "--accept-data-loss",
        action="store_true",
        help="start even though the store holds less than was acknowledged before (a lost "
        "-wal file, an emptied or replaced database); logs a warning and accepts what it holds "
        "(default: off: such a store is refused)",
    )
    serve.add_argument(
        "--evict-idle",
        type=seconds,
        metavar="SECONDS",
        help="detach live Sessions idle this long to cold; 0 turns it off (default: the "
        f"overlay's [host] evict_idle_seconds, else {DEFAULT_EVICT_IDLE})",
    )
    serve.add_argument(
        "--lease-seconds",
        type=positive_seconds,
        metavar="SECONDS",
        help="PostgreSQL only: how long another host waits before taking over the Sessions of "
        f"a host that stopped renewing its leases (default: {DEFAULT_LEASE_SECONDS})",
    )
    serve.add_argument(
        "--host-id",
        type=host_id,
        metavar="NAME",
        help="PostgreSQL only: a stable name for this host as a lease holder, so that it takes "
        "its own Sessions back at once after a restart; never give two running hosts one name "
        "(default: a new random name per start, which waits for the old leases to run out)",
    )
    serve.add_argument(
        "--notify",
        action="append",
        metavar="URL",
        help="also send each reminder to this channel, in apprise URL syntax (ntfy://, "
        "mailto://, json://, tgram://, discord://...); repeatable. A URL is a secret: prefer the "
        "DSH_NOTIFY_URLS environment variable (whitespace-separated) or the overlay's [notify] "
        "urls (default: none)",
    )
    serve.add_argument(
        "--public-url",
        type=public_url,
        metavar="URL",
        help="the address people open the page at (https, or http on localhost): notifications "
        "link to their Session, and the page offers Web Push (default: none)",
    )
    serve.add_argument(
        "--notify-timeout",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="the longest one send may take; a host that dies mid-send leaves its entry to "
        "others after three times this (default: 10)",
    )
    serve.add_argument(
        "--notify-retry-base",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="the first retry of a failed send waits about this long, doubling per attempt up "
        "to an hour (default: 30)",
    )
    serve.add_argument(
        "--notify-allow-private",
        action="append",
        default=None,
        metavar="HOST",
        help="let webhooks reach HOST although it is (or resolves to) a loopback, private or "
        "link-local address, refused otherwise; repeat for more hosts, '*' allows every host "
        "(default: none)",
    )
    serve.add_argument(
        "--log-level",
        default=DEFAULT_LOG_LEVEL,
        choices=("debug", "info", "warning", "error"),
        help="the least severe structured log line written to stderr "
        f"(default: {DEFAULT_LOG_LEVEL})",
    )


def _whole(text: str, minimum: int, what: str) -> int:
    """``text`` as a whole number of ``what`` no smaller than ``minimum``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number{what}: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, not {value}")
    return value


def seconds(text: str) -> int:
    """``--evict-idle``: a whole number of seconds >= 0."""
    return _whole(text, 0, " of seconds")


def public_url(text: str) -> str:
    """``--public-url``: an https URL, or http on localhost / a loopback address (Web Push
    needs a secure context)."""
    parsed = urllib.parse.urlsplit(text)
    local = parsed.hostname in {"localhost", "127.0.0.1", "::1"}
    if parsed.scheme not in {"https", "http"} or not parsed.hostname:
        raise argparse.ArgumentTypeError(f"must be an http(s) URL, not {text!r}")
    if parsed.scheme == "http" and not local:
        raise argparse.ArgumentTypeError(
            f"must be https (browsers allow Web Push only there, or on localhost), not {text!r}"
        )
    if parsed.query or parsed.fragment:
        raise argparse.ArgumentTypeError(f"must not carry a query or fragment, not {text!r}")
    return text.rstrip("/")


def host_id(text: str) -> str:
    """``--host-id``: a non-empty printable name."""
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"must be a non-empty printable name, not {text!r}")
    return text


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    return _whole(text, 1, "")


def positive_float(text: str) -> float:
    """A number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


def positive_seconds(text: str) -> int:
    """``--lease-seconds``: a whole number of seconds >= 1."""
    value = seconds(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {value}")
    return value
