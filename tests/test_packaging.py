"""Packaging: the wheel's top-level names, importability from the wheel, and the layering."""

from __future__ import annotations

import ast
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "dsh_hookspecs": ROOT / "hookspecs" / "dsh_hookspecs",
    "dsh_host": ROOT / "src" / "dsh_host",
    "dsh_schedule": ROOT / "src" / "dsh_schedule",
    "dsh_schedule_ui": ROOT / "src" / "dsh_schedule_ui",
}
STDLIB = set(sys.stdlib_module_names)
THIRD_PARTY = {
    "dsh_hookspecs": {"pluggy"},
    "dsh_schedule": {"pluggy", "attrs", "cattrs", "structlog"},
    "dsh_schedule_ui": {"pluggy", "structlog"},
}
FORBIDDEN = {
    "dsh_hookspecs": {"dsh_host", "dsh_schedule", "dsh_schedule_ui"},
    "dsh_schedule": {"dsh_host", "dsh_schedule_ui"},
    "dsh_schedule_ui": {"dsh_host"},
    "dsh_host": {"dsh_schedule", "dsh_schedule_ui"},
}


def imported_roots(package: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(path.name)
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package):
    roots = imported_roots(PACKAGES[package])
    assert not (set(roots) & FORBIDDEN[package]), roots
    if package in THIRD_PARTY:
        allowed = STDLIB | THIRD_PARTY[package] | {"dsh_hookspecs", "dsh_schedule", package}
        assert set(roots) <= allowed, set(roots) - allowed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), "."],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("*.whl")
    return built


def test_wheel_top_level_names_are_pinned(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"dsh_hookspecs", "dsh_host", "dsh_schedule", "dsh_schedule_ui"}
    for package in top:
        assert f"{package}/py.typed" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(entry_points).decode()
    assert "[dsh.plugins]" in text
    assert "schedule = dsh_schedule:SchedulePlugin" in text
    assert "ui-schedule = dsh_schedule_ui:ScheduleUIPlugin" in text
    assert "dsh = dsh_host._cli:main" in text


def test_packages_import_from_the_built_wheel(wheel, tmp_path):
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    deps = sysconfig.get_paths()["purelib"]
    code = (
        "import sys; sys.path[:0] = [sys.argv[1]];"
        "import dsh_hookspecs, dsh_host, dsh_schedule, dsh_schedule_ui;"
        "mods = (dsh_hookspecs, dsh_host, dsh_schedule, dsh_schedule_ui);"
        "assert all(m.__file__.startswith(sys.argv[1]) for m in mods), [m.__file__ for m in mods]"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            f"import sys; sys.path.append({deps!r}); {code}",
            str(unpacked),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
