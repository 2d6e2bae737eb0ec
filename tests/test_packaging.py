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
    "dsh_schedule": {"pluggy", "attrs", "cattrs", "structlog", "dateparser", "cronsim"},
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


def test_no_name_means_two_things_in_the_contract_and_the_host():
    import dsh_hookspecs
    import dsh_host

    shared = set(dsh_hookspecs.__all__) & set(dsh_host.__all__)
    assert [
        name
        for name in sorted(shared)
        if getattr(dsh_hookspecs, name) is not getattr(dsh_host, name)
    ] == []
    # The host's implementations say what they are; the contract's names stay the contract's.
    for name in ("Host", "SessionStore", "AgentRegistry", "Turn", "ModelAdapter"):
        assert not hasattr(dsh_host, name), name
        assert name in dsh_hookspecs.__all__
    for name in ("LiveHost", "LiveSessionStore", "LiveAgentRegistry", "LiveTurn"):
        assert name in dsh_host.__all__


# -- floors: every import inside a package points down -------------------------------------------

#: The floors of each package, bottom first. A module may import from its own floor or a lower
#: one, never from a higher one; typing-only imports (under ``if TYPE_CHECKING:``) may cross.
#: Entries are paths relative to the package folder: a module file without ``.py``
#: (``persistence/_backend``; ``__init__`` is the package's own), or a folder ending in ``/``
#: (``persistence/sqlite/``), which covers every module in it. Every entry must match a module
#: that exists, and every module must be on exactly one floor: put a new module where it belongs.
FLOORS: dict[str, list[tuple[str, list[str]]]] = {
    "dsh_hookspecs": [
        ("values", ["_types", "_tasks", "_waits", "_zones", "_turns"]),
        ("protocols", ["_protocols"]),
        ("the model-adapter contract", ["_models"]),
        ("hook specifications", ["_specs"]),
        ("package", ["__init__"]),
    ],
    "dsh_host": [
        ("values and JSON", ["_json", "_logging", "_overlay", "core/_clock", "core/_disposables"]),
        # One message on one channel (apprise, Web Push); it imports nothing else of dsh_host.
        (
            "notification channels",
            [
                "notify/_channels",
                "notify/_guard",
                "notify/_markup",
                "notify/_quiet",
                "notify/_send",
                "notify/_webhook",
                "notify/_webpush",
            ],
        ),
        ("records", ["_records", "_names"]),
        ("what a Session store tells its subscribers", ["_observations"]),
        (
            "the storage contract",
            [
                "persistence/_outbox",
                "persistence/_write",
                "persistence/_backend",
                "persistence/_writes",
                "persistence/_loads",
                "persistence/_transfer",
            ],
        ),
        (
            "storage backends",
            ["persistence/_memory", "persistence/sqlite/", "persistence/postgres/"],
        ),
        ("storage coordinator", ["persistence/_coordinator", "persistence/__init__"]),
        ("what an Agent's inbox holds, and what a resumed log owes it", ["core/_inbox"]),
        ("Sessions", ["core/_session"]),
        ("tools", ["core/_tools"]),
        ("the durability gate", ["core/_durability"]),
        ("models", ["models/"]),
        ("the turn an adapter acts through", ["core/_turn"]),
        ("Agents", ["core/_agent"]),
        ("the Agent registry", ["core/_registry"]),
        ("plugins", ["core/_plugins"]),
        ("cold delivery", ["core/_cold", "core/_wakeups", "core/_settle", "core/_eviction"]),
        ("the outbox's sender", ["notify/_sender", "notify/__init__"]),
        ("the host object", ["core/_host", "core/__init__", "testing", "conformance/"]),
        ("export, import and migrate", ["cli/_transfer"]),
        ("web", ["web/"]),
        ("CLI", ["cli/_main", "cli/_args", "cli/_backup", "cli/__init__", "__main__"]),
        ("package", ["__init__"]),
    ],
    "dsh_schedule": [
        ("instants and the calendar", ["_instants", "_cron", "_calendar"]),
        ("codec and values", ["_codec", "_fifo", "_every", "_at", "_rules"]),
        ("fold", ["_fold"]),
        (
            "framings, the tools' answers, receipts and the Session view",
            ["_framing", "_record_fields", "_receipts", "_due", "_panel"],
        ),
        ("transactions", ["_transactions"]),
        ("runtime", ["_runtime"]),
        ("tools", ["_tools"]),
        ("the board filer", ["_board"]),
        ("the cold plan", ["_cold"]),
        # The scripted assistant's language stands on the core; no core module imports it
        # (test_the_schedule_core_never_imports_the_language), only the plugin wires it in.
        ("the scripted assistant's language", ["language/"]),
        ("plugin", ["_plugin"]),
        ("package", ["__init__"]),
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


def floor_path(package_dir: Path, path: Path) -> str:
    """The path a floor entry names for the module file ``path`` (``persistence/_backend``)."""
    return path.relative_to(package_dir).with_suffix("").as_posix()


def covers(entry: str, relative: str) -> bool:
    """Whether the floor entry ``entry`` covers the module at ``relative`` (see :data:`FLOORS`)."""
    return relative.startswith(entry) if entry.endswith("/") else relative == entry


def floors_of(package: str, relative: str) -> list[int]:
    """The floors whose entries cover the module at ``relative`` (exactly one when right)."""
    return [
        index
        for index, (_, entries) in enumerate(FLOORS[package])
        for entry in entries
        if covers(entry, relative)
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
    paths = {name: floor_path(package_dir, path) for name, path in modules.items()}
    for floor, entries in FLOORS[package]:
        for entry in entries:
            if not any(covers(entry, relative) for relative in paths.values()):
                problems.append(f"floor {floor!r} lists {entry}, which matches no module")
    for name, relative in paths.items():
        if len(floors_of(package, relative)) != 1:
            problems.append(f"{name} is on floors {floors_of(package, relative)}: put it on one")
    if problems:
        return problems
    for name, path in modules.items():
        (own_floor,) = floors_of(package, paths[name])
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
            # A target that is not a module of this package is a name of the module imported.
            (floor,) = floors_of(package, paths[target]) if target in paths else [own_floor]
            if floor > own_floor:
                problems.append(
                    f"{where}:{line} imports {target} ({FLOORS[package][floor][0]}) from "
                    f"floor {FLOORS[package][own_floor][0]!r}: an upward import"
                )
    return list(dict.fromkeys(problems))  # one line per import statement and problem


@pytest.mark.parametrize("package", sorted(FLOORS))
def test_every_import_points_down_the_floors(package):
    assert floor_violations(package, PACKAGES[package]) == []


#: The core modules of ``dsh_schedule`` that may import its language: the plugin wires it in.
LANGUAGE_WIRING = {"dsh_schedule._plugin"}


def language_imports(package_dir: Path) -> list[str]:
    """Every import of ``dsh_schedule.language`` by a core module of ``dsh_schedule`` (one not in
    the language folder), typing-only ones included, except :data:`LANGUAGE_WIRING`'s."""
    all_modules = set(module_names(package_dir, "dsh_schedule"))
    found: list[str] = []
    for name, path in module_names(package_dir, "dsh_schedule").items():
        if name == "dsh_schedule.language" or name.startswith("dsh_schedule.language."):
            continue
        for line, target, imported, _typing_only in imports_of(name, path, all_modules):
            named = target if imported is None else f"{target}.{imported}"
            if f"{named}.".startswith("dsh_schedule.language.") and name not in LANGUAGE_WIRING:
                found.append(f"{path.relative_to(package_dir.parent)}:{line} imports {named}")
    return found


def test_the_schedule_core_never_imports_the_language():
    assert language_imports(PACKAGES["dsh_schedule"]) == []
    # The one module allowed to wire the language in exists (the allowance names no ghost).
    assert set(module_names(PACKAGES["dsh_schedule"], "dsh_schedule")) >= LANGUAGE_WIRING


def test_the_language_check_sees_typing_only_and_module_imports(tmp_path):
    package = tmp_path / "dsh_schedule"
    (package / "language").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "_plugin.py": "from .language import PHRASES\n",
        "_codec.py": "",
        "_fold.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from .language._words import Language\n"
        ),
        "_tools.py": "from . import language\n",
        "_runtime.py": "import dsh_schedule.language._grammar\n",
        "_due.py": "from ._codec import x\n",
        "language/__init__.py": "PHRASES = ()\n",
        "language/_words.py": "from .._codec import x\n",
        "language/_grammar.py": "",
    }
    for relative, text in files.items():
        (package / relative).write_text(text)
    assert language_imports(package) == [
        "dsh_schedule/_fold.py:3 imports dsh_schedule.language._words.Language",
        "dsh_schedule/_runtime.py:1 imports dsh_schedule.language._grammar",
        "dsh_schedule/_tools.py:1 imports dsh_schedule.language",
    ]


#: The floors of the small ``dsh_host`` the floor check's own tests write.
TOY_FLOORS = [
    ("values and JSON", ["_json"]),
    ("records", ["_records"]),
    ("storage backends", ["persistence/_backend"]),
    ("storage coordinator", ["persistence/__init__"]),
    ("Sessions", ["_session"]),
    ("Agents", ["_agent"]),
    ("the host object", ["_host"]),
    ("package", ["__init__"]),
]


def toy_host(tmp_path, monkeypatch, floors, extra=None) -> Path:
    """Write a small ``dsh_host`` with known faults; check it against ``floors``."""
    root = tmp_path / "dsh_host"
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
        **(extra or {}),
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    monkeypatch.setitem(PACKAGES, "dsh_host", root)
    monkeypatch.setitem(FLOORS, "dsh_host", floors)
    return root


def test_the_floor_check_catches_upward_sideways_and_typing_only_imports(tmp_path, monkeypatch):
    root = toy_host(tmp_path, monkeypatch, TOY_FLOORS)
    problems = [problem.split(" ", 1) for problem in floor_violations("dsh_host", root)]
    up = "(Sessions) from floor"
    assert problems == [
        ["dsh_host/_agent.py:1", "imports private name _private of dsh_host._session"],
        ["dsh_host/_host.py:1", "reaches into private module dsh_host.persistence._backend"],
        [
            "dsh_host/_records.py:2",
            f"imports dsh_host._session {up} 'records': an upward import",
        ],
        [
            "dsh_host/persistence/_backend.py:2",
            f"imports dsh_host._session {up} 'storage backends': an upward import",
        ],
    ]


def test_a_floor_can_be_a_folder_and_an_upward_import_from_it_is_caught(tmp_path, monkeypatch):
    floors = [(floor, list(entries)) for floor, entries in TOY_FLOORS]
    floors[2][1].append("persistence/sqlite/")
    extra = {
        "persistence/sqlite/__init__.py": "from ._store import Store\n",
        "persistence/sqlite/_store.py": "from .._backend import Backend\nfrom ... import _agent\n",
    }
    root = toy_host(tmp_path, monkeypatch, floors, extra)
    problems = floor_violations("dsh_host", root)
    upward = (
        "dsh_host/persistence/sqlite/_store.py:2 imports dsh_host._agent (Agents) from floor "
        "'storage backends': an upward import"
    )
    assert [problem for problem in problems if "/sqlite/" in problem] == [upward]


def test_the_floor_table_lists_only_modules_that_exist_and_every_module_once(tmp_path, monkeypatch):
    floors = [(floor, [e for e in entries if e != "_agent"]) for floor, entries in TOY_FLOORS]
    floors[2][1].extend(["persistence/_sqlite_gone", "persistence/postgres/"])
    floors[4][1].append("_records")
    root = toy_host(tmp_path, monkeypatch, floors)
    assert floor_violations("dsh_host", root) == [
        "floor 'storage backends' lists persistence/_sqlite_gone, which matches no module",
        "floor 'storage backends' lists persistence/postgres/, which matches no module",
        "dsh_host._agent is on floors []: put it on one",
        "dsh_host._records is on floors [1, 4]: put it on one",
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
    assert "dsh = dsh_host.cli:main" in text


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


# -- circles: no two modules import each other, not even for typing ------------------------------


def import_graph(package: str, package_dir: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports by name (typing-only imports included).

    A package's ``__init__`` that a module reaches only as the parent of what it imports is not
    an edge: ``from .persistence import Backend`` names ``persistence``, but
    ``from .persistence._backend import Backend`` does not."""
    modules = module_names(package_dir, package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for _line, target, _imported, _typing_only in imports_of(name, path, set(modules)):
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_imports_one_that_imports_it_back(package):
    assert circles(import_graph(package, PACKAGES[package])) == []


def test_the_circle_check_finds_a_typing_only_circle_and_a_long_one(tmp_path):
    root = tmp_path / "toy"
    files = {
        "__init__.py": "from ._a import A\n",
        "_a.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._b import B\nA = 1\n"
        ),
        "_b.py": "from ._a import A\nB = A\n",
        "_c.py": "from . import _d\n",
        "_d.py": "from ._e import E\n",
        "_e.py": "import toy._c\nE = 1\n",
        "_f.py": "from ._a import A\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    assert circles(import_graph("toy", root)) == [
        ["toy._a", "toy._b"],
        ["toy._c", "toy._d", "toy._e"],
    ]
