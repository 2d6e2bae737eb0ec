"""Real ``dsh`` processes for CLI, restart and crash tests."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DSH = [sys.executable, "-m", "dsh_host"]
LISTENING = re.compile(r"listening on (http://[\d.]+:\d+)")


class DshProcess:
    """One ``dsh`` subprocess whose stdout lines are read on a thread (no blocking reads)."""

    def __init__(
        self,
        args: list[str],
        *,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        """``command``: what runs ``dsh`` (default :data:`DSH`, this checkout's); ``cwd``: its
        working directory (default the repository root)."""
        self.proc = subprocess.Popen(
            [*(DSH if command is None else command), *args],
            cwd=ROOT if cwd is None else cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr_lines: list[str] = []
        self._stderr_grew = threading.Condition()
        self._pumps = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    def _pump(self, stream, is_stdout: bool) -> None:
        for line in stream:
            if is_stdout:
                self.lines.put(line.rstrip("\n"))
            else:
                with self._stderr_grew:
                    self.stderr_lines.append(line)
                    self._stderr_grew.notify_all()
        stream.close()

    def wait_for_line(self, pattern: str | re.Pattern[str], timeout: float = 20.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no line matching {compiled.pattern!r}; stderr:\n{self.stderr}")
            try:
                line = self.lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"dsh exited with {self.proc.returncode}; stderr:\n{self.stderr}"
                    ) from None
                continue
            match = compiled.search(line)
            if match:
                return match

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def wait_logged(
        self, event: str, timeout: float = 20.0, **fields: object
    ) -> list[dict[str, object]]:
        """:meth:`logged` once it holds at least one record (stderr is read on its own thread,
        so a record written before a stdout line may still be on its way); ``TimeoutError``
        after ``timeout`` seconds."""
        with self._stderr_grew:
            if not self._stderr_grew.wait_for(lambda: self.logged(event, **fields), timeout):
                raise TimeoutError(f"no {event!r} record; stderr:\n{self.stderr}")
        return self.logged(event, **fields)

    def logged(self, event: str, **fields: object) -> list[dict[str, object]]:
        """The structured log records (JSON lines on stderr) named ``event`` so far whose
        ``fields`` match; lines that are not JSON objects are ignored."""
        found = []
        for line in list(self.stderr_lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(record, dict)
                and record.get("event") == event
                and all(record.get(key) == value for key, value in fields.items())
            ):
                found.append(record)
        return found

    def terminate(self, timeout: float = 5.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def interrupt(self, timeout: float = 10.0) -> int:
        """Ctrl-C: SIGINT, then the exit status (bounded); stderr is read to its end."""
        self.proc.send_signal(signal.SIGINT)
        status = self.proc.wait(timeout=timeout)
        self._pumps_done(timeout)
        return status

    def _pumps_done(self, timeout: float) -> None:
        for pump in self._pumps:
            pump.join(timeout)

    def plain_stderr(self) -> list[str]:
        """stderr without the JSON log lines: what a person reads."""
        return [line.rstrip("\n") for line in self.stderr_lines if not line.startswith("{")]

    def kill(self) -> int:
        self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(timeout=10)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()


def serve_command(
    data: Path | str,
    *,
    overlay: Path | str | None = None,
    model: str = "scripted",
    log_level: str = "warning",
    extra: Sequence[str] = (),
) -> list[str]:
    """The arguments of ``dsh serve`` on ``data`` (a folder or a ``postgresql://`` URL) on a free
    port: ``overlay`` (default: none given, so the built-in overlay), the ``model`` adapter, the
    ``log_level`` of its JSON lines on stderr and ``extra`` arguments (``--evict-idle 1``...)."""
    args = ["serve", "--data", str(data), "--port", "0", "--model", model]
    if overlay is not None:
        args += ["--overlay", str(overlay)]
    return [*args, "--log-level", log_level, *extra]


def run_dsh(args: list[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DSH, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
