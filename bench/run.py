"""Run the benchmarks (``make bench``) and write ``docs/performance.md`` from their JSON.

Each benchmark runs as its own subprocess (``python bench/<name>.py``), one after the other, so
none inherits another's heap, threads or event loop; they all get the same run id
(``DSH_BENCH_RUN``), which their JSON carries. The report is generated from
``bench/results/*.json``, the scripts' docstrings and the machine facts; nothing in it is typed
by hand.

Usage::

    .venv/bin/python bench/run.py                   # all benchmarks, then the report
    .venv/bin/python bench/run.py lateness idle     # some of them, then the report
    .venv/bin/python bench/run.py --report-only     # rewrite the report from the JSON only
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _common import RESULTS, machine, markdown_table

BENCHMARKS = (
    "fold",
    "receipt",
    "lateness",
    "recurrence",
    "throughput",
    "idle",
    "resume",
    "cold",
    "herd",
    "notify",
    "memory",
    "rest",
    "transfer",
    "pg",
    "herd_pg",
    "adapter",
)
DOC = ROOT / "docs" / "performance.md"
META = RESULTS / "_run.json"


def run(names: list[str]) -> dict[str, Any]:
    run_id = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    env = {**os.environ, "DSH_BENCH_RUN": run_id, "PYTHONHASHSEED": "0"}
    previous = json.loads(META.read_text()) if META.exists() else {}
    meta: dict[str, Any] = {
        "run": run_id,
        "started_at": _now(),
        "machine": machine(),
        "loadavg_before": _loadavg(),
        "memory_total_mib": _mem_total(),
        "temp_filesystem": _filesystem(tempfile.gettempdir()),
        "code_before": _code(),
        # Benchmarks not run this time keep their earlier entry (with its own run id).
        "benchmarks": {
            name: info
            for name, info in previous.get("benchmarks", {}).items()
            if name in BENCHMARKS and name not in names
        },
    }
    for name in names:
        if not script(name).exists():
            print(f"\n=== bench/{name}.py does not exist: skipped", flush=True)
            continue
        print(f"\n=== bench/{name}.py", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script(name))], cwd=ROOT, env=env)
        meta["benchmarks"][name] = {
            "run": run_id,
            "seconds": round(time.perf_counter() - started, 1),
            "exit_code": code,
            "loadavg_after": _loadavg(),
        }
        if code:
            print(f"bench/{name}.py failed with exit code {code}", file=sys.stderr)
    meta["finished_at"] = _now()
    meta["code_after"] = _code()
    meta["loadavg_after"] = _loadavg()
    RESULTS.mkdir(exist_ok=True)
    META.write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def script(name: str) -> Path:
    return HERE / f"{name}.py"


def _code() -> str:
    """The commit the measured code comes from, "+modified" when src/ or hookspecs/ differ."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src", "hookspecs"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}+modified" if dirty else commit


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _filesystem(path: str) -> str | None:
    """``<type> on <device> (<mount point>)`` for the mount holding ``path``, from /proc/mounts."""
    best: list[str] = []
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            mounted = len(fields) > 3 and path.startswith(fields[1])
            if mounted and (not best or len(fields[1]) > len(best[1])):
                best = fields
    except OSError:
        return None
    if not best:
        return None
    return f"{best[2]} on {best[0]} ({best[1]}, {best[3].split(',')[0]})"


def _mem_total() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


# -- the report --------------------------------------------------------------------------------


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return None
    result: dict[str, Any] = json.loads(path.read_text())
    if "tables" not in result:  # fold.py's own shape
        result = _from_fold(result)
    return result


def _from_fold(result: dict[str, Any]) -> dict[str, Any]:
    rows = [
        [r["events"], r["incremental_us"], r["full_refold_us"], r["full_over_incremental"]]
        for r in result["rows"]
    ]
    growth = result["ratios"]["incremental_100k_over_1k"]
    return {
        **result,
        "tables": [
            {
                "title": result["title"],
                "header": ["events", "incremental µs", "full refold µs", "full / incremental"],
                "rows": rows,
            }
        ],
        "targets": [
            {
                "target": result["target"],
                "measured": f"incremental 100k / 1k = {growth}",
                "met": result["met"],
                "gap": "" if result["met"] else f"{growth} > 1.5",
            }
        ],
    }


def method(name: str) -> str:
    """The benchmark script's docstring, without its trailing "Run:" paragraph."""
    tree = ast.parse(script(name).read_text())
    text = ast.get_docstring(tree) or ""
    paragraphs = [p for p in text.split("\n\n") if not p.startswith("Run:")]
    return "\n\n".join(paragraphs)


def verdict(met: bool) -> str:
    return "met" if met else "**not met**"


def _listed(names: list[str]) -> str:
    quoted = [f"`bench/{name}.py`" for name in names]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)


def render(meta: dict[str, Any] | None) -> str:
    scripts = [name for name in BENCHMARKS if script(name).exists()]
    results = {name: load(name) if name in scripts else None for name in BENCHMARKS}
    facts = (meta or {}).get("machine") or machine()
    run_id = (meta or {}).get("run")
    stale = [
        name
        for name, result in results.items()
        if name in scripts and (result is None or run_id is None or result.get("run") != run_id)
    ]
    lines = [
        "# Performance",
        "",
        "<!-- Generated by bench/run.py (make bench) from bench/results/*.json; do not edit. -->",
        "",
        "dsh-schedule and APScheduler 3 run side by side in the same run, on the same disk with",
        "the same SQLite settings (WAL, `synchronous=FULL`); every comparison is given as a ratio",
        "(ours / theirs, or ours over budget). The machine is described under [Machine](#machine).",
        "",
    ]
    if meta:
        one = "all numbers below come from this one run" if not stale else "see the note below"
        lines += [f"Run `{run_id}`, {meta['started_at']} to {meta['finished_at']}: {one}.", ""]
    if meta and meta.get("code_before") != meta.get("code_after"):
        lines += [
            (
                f"> Note: the code changed during the run ({meta.get('code_before')} -> "
                f"{meta.get('code_after')}); rerun for consistent numbers."
            ),
            "",
        ]
    if stale and run_id is None:
        lines += [
            (
                "> Note: there is no run record (bench/results/_run.json): each section comes "
                "from its own run (see its run id)."
            ),
            "",
        ]
    elif stale:
        lines += [
            (
                f"> Note: {', '.join(stale)} come from an earlier run than `{run_id}` "
                "(see each section's run id)."
            ),
            "",
        ]
    lines += ["## Summary", ""]
    summary = [
        [name, item["target"], item["measured"], verdict(item["met"]), item["gap"]]
        for name, result in results.items()
        for item in (result or {}).get("targets", [])
    ]
    lines += [markdown_table(["benchmark", "target", "measured", "verdict", "gap"], summary), ""]
    ratios = [
        [name, key, value]
        for name, result in results.items()
        if result is not None
        for key, value in result.get("ratios", {}).items()
    ]
    lines += ["Ratios:", "", markdown_table(["benchmark", "ratio", "value"], ratios), ""]
    lines += ["## Machine", ""]
    machine_rows = [[key, value] for key, value in facts.items()]
    if meta:
        machine_rows += [
            ["memory", f"{meta.get('memory_total_mib')} MiB"],
            ["temporary directory filesystem", meta.get("temp_filesystem")],
            ["code measured (git)", meta.get("code_before")],
            ["load average before the run (1/5/15 min)", meta.get("loadavg_before")],
            ["load average after the run", meta.get("loadavg_after")],
        ]
        for name, info in meta["benchmarks"].items():
            machine_rows.append(
                [
                    f"bench/{name}.py",
                    (
                        f"{info['seconds']} s, exit {info['exit_code']}, "
                        f"load average after {info['loadavg_after']}"
                    ),
                ]
            )
    lines += [markdown_table(["fact", "value"], machine_rows), ""]
    lines += [
        "Every database lives in a fresh temporary directory on the filesystem above; a load",
        "average well above 0 before or during the run means other processes shared the CPUs",
        "and the disk while it ran (both sides of each comparison alike: they alternate).",
        "",
        "## How to rerun",
        "",
        "```sh",
        "make bench                                      # every benchmark, then this file",
        ".venv/bin/python bench/run.py lateness idle     # some of them, then this file",
        ".venv/bin/python bench/lateness.py              # one alone: prints its tables and",
        "                                                # writes bench/results/lateness.json",
        ".venv/bin/python bench/run.py --report-only     # rewrite this file from the JSON",
        "```",
        "",
        *textwrap.wrap(
            f"The scripts are {_listed(scripts)}; `make bench` installs the `bench` extra "
            "(APScheduler 3, SQLAlchemy) into `.venv` first. Benchmarks are never run as tests.",
            width=92,
        ),
        "",
    ]
    for name, result in results.items():
        lines += [f"## {name}", ""]
        if not script(name).exists():
            lines += [f"Not available: `bench/{name}.py` does not exist in this checkout.", ""]
            continue
        if result is None:
            lines += ["Not run yet.", ""]
            continue
        lines += [f"**{result['title']}**", ""]
        run = f"Run `{result['run']}`" if result.get("run") else "A standalone run"
        lines += [f"{run}, finished {result.get('finished_at')}.", ""]
        lines += ["Method (from the script's docstring):", ""]
        lines += ["> " + line if line else ">" for line in method(name).splitlines()]
        lines += [""]
        for table in result["tables"]:
            lines += [f"*{table['title']}*", "", markdown_table(table["header"], table["rows"]), ""]
        if result.get("ratios"):
            lines += [
                "Ratios: "
                + ", ".join(f"`{key}` = {value}" for key, value in result["ratios"].items()),
                "",
            ]
        for note in result.get("notes", []):
            lines += [f"- {note}"]
        if result.get("notes"):
            lines += [""]
        for item in result.get("targets", []):
            gap = f" (gap: {item['gap']})" if item["gap"] else ""
            lines += [
                f"- Target *{item['target']}*: {item['measured']} - {verdict(item['met'])}{gap}"
            ]
        lines += [""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"benchmarks to run: {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--report-only", action="store_true", help="only rewrite the report")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; choose from {', '.join(BENCHMARKS)}")
    if args.report_only:
        meta = json.loads(META.read_text()) if META.exists() else None
        failed = False
    else:
        meta = run(list(args.names) or list(BENCHMARKS))
        failed = any(info["exit_code"] for info in meta["benchmarks"].values())
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render(meta))
    print(f"\nwrote {DOC.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
