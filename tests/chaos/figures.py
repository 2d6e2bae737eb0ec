"""Figures of the reliability harness: each test writes what it did and found as JSON.

Nothing is written unless ``DSH_RELIABILITY_RESULTS`` names a folder (``make chaos`` sets it and
then renders ``docs/reliability.md`` from that folder with :mod:`tests.chaos.report`), so the
quick runs inside ``make test`` check everything but leave the committed document alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV = "DSH_RELIABILITY_RESULTS"


def results_dir() -> Path | None:
    folder = os.environ.get(ENV)
    return Path(folder) if folder else None


def full_size() -> bool:
    """True for the long runs of ``make chaos`` (more kills, more examples)."""
    return results_dir() is not None or bool(os.environ.get("DSH_CHAOS_KILLS"))


def record(section: str, name: str, figures: Mapping[str, Any]) -> None:
    """Store ``figures`` as ``<section>--<name>.json`` when a results folder is configured."""
    folder = results_dir()
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    payload = {"section": section, "name": name, "figures": figures}
    path = folder / f"{section}--{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
