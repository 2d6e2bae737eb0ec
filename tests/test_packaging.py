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


# -- floors: every import inside a package points down -------------------------------------------

#: The floors of each package, bottom first. A module may import from its own floor or a lower
#: one, never from a higher one; typing-only imports (under ``if TYPE_CHECKING:``) may cross.
#: Entries are module names relative to the package (``""`` is the package's ``__init__``); an
#: entry ending in ``*`` covers every module whose name starts with it (a subpackage, a family).
#: Every module must be on exactly one floor: put a new module where it belongs.
FLOORS: dict[str, list[tuple[str, list[str]]]] = {
    "dsh_hookspecs": [
        ("values", ["_types", "_tasks", "_zones"]),
        ("protocols", ["_protocols"]),
        ("the model-adapter contract", ["_models"]),
        ("hook specifications", ["_specs"]),
        ("package", [""]),
    ],
    "dsh_host": [
        ("values and JSON", ["_json", "_clock", "_logging", "_overlay", "_disposables"]),
        ("records", ["_records", "_names"]),
        (
            "storage backends",
            [
                "persistence._backend",
                "persistence._lock",
                "persistence._memory",
                "persistence._sqlite*",
                "persistence._postgres*",
                "persistence.sqlite*",
            ],
        ),
        ("storage coordinator", ["persistence._coordinator", "persistence"]),
        ("Sessions", ["_session"]),
        ("tools", ["_tools"]),
        ("Agents", ["_inbox", "_durability", "_turn", "_agent"]),
        ("the Agent registry", ["_registry"]),
        ("plugins", ["_plugins"]),
        ("models", ["_openai*", "_models"]),
        ("cold delivery", ["_wakeups", "_eviction"]),
        ("the host object", ["_host", "testing", "conformance*"]),
        ("web", ["web*"]),
        ("CLI", ["_cli*", "__main__"]),
        ("package", [""]),
    ],
    "dsh_schedule": [
        ("instants", ["_instants"]),
        ("codec and values", ["_codec", "_fifo", "_every", "_at"]),
        ("fold", ["_fold"]),
        ("views", ["_views", "_receipts", "_due", "_panel"]),
        ("transactions", ["_transactions"]),
        ("runtime", ["_runtime"]),
        ("tools and the scripted model's phrases", ["_tools", "_phrases"]),
        ("plugin", ["_plugin"]),
        ("package", [""]),
    ],
}


def module_names(package_dir: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of ``package`` (``pkg.sub`` for ``sub/__init__``)."""
    out: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _typing_only(tree: ast.Module) -> set[ast.AST]:
    guarded: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
            if name == "TYPE_CHECKING":
                for statement in node.body:
                    guarded.update(ast.walk(statement))
    return guarded


def imports_of(name: str, path: Path, modules: set[str]) -> list[tuple[int, str, str | None, bool]]:
    """``(line, target module, imported name or None, typing only)`` for each import in ``path``.

    ``from X import y`` names module ``X.y`` when that is a module (``from . import _json``), else
    name ``y`` of module ``X``. Relative imports are resolved against ``name``'s package.
    """
    tree = ast.parse(path.read_text(), str(path))
    guarded = _typing_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str, str | None, bool]] = []
    for node in ast.walk(tree):
        typing_only = node in guarded
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None, typing_only) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in modules:
                    found.append((node.lineno, submodule, None, typing_only))
                else:
                    found.append((node.lineno, module, alias.name, typing_only))
    return found


def floors_of(package: str, module: str) -> list[int]:
    """The floors whose entries cover ``module`` (exactly one when the table is right)."""
    relative = module[len(package) + 1 :] if module != package else ""
    return [
        index
        for index, (_, entries) in enumerate(FLOORS[package])
        for entry in entries
        if relative == entry or (entry.endswith("*") and relative.startswith(entry[:-1]))
    ]


def _reaches_into_private(importer_package: str, target: str) -> str | None:
    """The private module of another package that ``target`` reaches into, if any."""
    parts = target.split(".")
    for index in range(1, len(parts)):
        owner = ".".join(parts[:index])
        if parts[index].startswith("_") and not (
            importer_package == owner or importer_package.startswith(owner + ".")
        ):
            return ".".join(parts[: index + 1])
    return None


def floor_violations(package: str, package_dir: Path) -> list[str]:
    """Every import of ``package`` that points up a floor or into another module's private name."""
    all_modules = set()
    for other, directory in PACKAGES.items():
        all_modules |= set(module_names(directory, other))
    problems: list[str] = []
    modules = module_names(package_dir, package)
    for name in modules:
        if len(floors_of(package, name)) != 1:
            problems.append(f"{name} is on floors {floors_of(package, name)}: put it on one")
    if problems:
        return problems
    for name, path in modules.items():
        (own_floor,) = floors_of(package, name)
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        where = f"{path.relative_to(package_dir.parent)}"
        for line, target, imported, typing_only in imports_of(name, path, all_modules):
            if imported is not None and imported.startswith("_") and imported != "__all__":
                problems.append(f"{where}:{line} imports private name {imported} of {target}")
            private = _reaches_into_private(own_package, target)
            if private is not None:
                problems.append(f"{where}:{line} reaches into private module {private}")
            top = target.split(".")[0]
            if top != package or typing_only or target == name:
                continue
            (floor,) = floors_of(package, target) or [own_floor]  # not a module: a name
            if floor > own_floor:
                problems.append(
                    f"{where}:{line} imports {target} ({FLOORS[package][floor][0]}) from "
                    f"floor {FLOORS[package][own_floor][0]!r}: an upward import"
                )
    return list(dict.fromkeys(problems))  # one line per import statement and problem


@pytest.mark.parametrize("package", sorted(FLOORS))
def test_every_import_points_down_the_floors(package):
    assert floor_violations(package, PACKAGES[package]) == []


def test_the_floor_check_catches_upward_sideways_and_typing_only_imports(tmp_path, monkeypatch):
    root = tmp_path / "dsh_host"
    (root / "persistence").mkdir(parents=True)
    files = {
        "__init__.py": "from ._host import Host\n",
        "_json.py": "",
        "_records.py": "from . import _json\nfrom ._session import LiveSession\n",
        "_session.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ._agent import LiveAgent\nfrom .persistence import Backend\n",
        "_agent.py": "from ._session import _private\n",
        "_host.py": "from .persistence._backend import Backend\nimport dsh_host._agent\n",
        "persistence/__init__.py": "from ._backend import Backend\n",
        "persistence/_backend.py": "from .. import _json, _records\nfrom .._session import x\n",
    }
    for relative, text in files.items():
        (root / relative).write_text(text)
    monkeypatch.setitem(PACKAGES, "dsh_host", root)
    problems = [problem.split(" ", 1) for problem in floor_violations("dsh_host", root)]
    up = "(Sessions) from floor"
    assert problems == [
        ["dsh_host/_agent.py:1", "imports private name _private of dsh_host._session"],
        ["dsh_host/_host.py:1", "reaches into private module dsh_host.persistence._backend"],
        ["dsh_host/_records.py:2", f"imports dsh_host._session {up} 'records': an upward import"],
        [
            "dsh_host/persistence/_backend.py:2",
            f"imports dsh_host._session {up} 'storage backends': an upward import",
        ],
    ]


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
