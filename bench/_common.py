"""Helpers shared by the benchmark scripts: table printing, JSON results, machine facts."""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for index, row in enumerate(cells):
        print("  " + "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("  " + "  ".join("-" * width for width in widths))


def emit(result: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{result['name']}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return path


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
    }
