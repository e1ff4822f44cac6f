"""The layer contract (D90): core's floors import only downward, and nothing loops.

    core/model → core/config → core/store → core/engine → core/features → core/runtime.py
      → core/edge → core/api  ←  adapters/, plugins/ (and third-party packages)

An AST scan of every module under core/, adapters/ and plugins/ — top-level, lazy (inside a
function) and ``TYPE_CHECKING`` imports alike, so no import can hide a dependency that points
up the floors. Every upward import is a failure, every import loop is a failure (between
modules, and between the packages of one floor), and adapters/ and plugins/ import only
``core.api``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("core", "adapters", "plugins")
LAYERS = ("model", "config", "store", "engine", "features", "runtime", "edge", "api")
"""core's floors, lowest first; ``runtime`` is the module core/runtime.py (the only wiring)."""
EXTENSIONS = 9  # adapters/ and plugins/: above every floor of core


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _paths() -> dict[str, Path]:
    return {
        _name(p): p
        for top in TOPS
        for p in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in p.parts
    }


MODULES = _paths()


def imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name `module` imports (``from a import b`` gives ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _resolve(name: str) -> str | None:
    """The module of ours a dotted name lands in (``core.store.Store`` → ``core.store``)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        deps = {_resolve(n) for n in imported_names(path, module)}
        graph[module] = {d for d in deps if d is not None and d != module}
    return graph


GRAPH = module_graph()


def floor(module: str) -> int:
    """0 for the ``core`` package itself, 1–8 for core's floors, 9 for adapters and plugins."""
    parts = module.split(".")
    if parts[0] != "core":
        return EXTENSIONS
    if len(parts) == 1:
        return 0
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module} is on no floor: core/ holds only {', '.join(LAYERS)}")
    return LAYERS.index(parts[1]) + 1


def package_of(module: str) -> str:
    """The package a module counts in for loops: ``core.<floor>.<package>`` or its floor."""
    parts = module.split(".")
    if parts[0] != "core":
        return ".".join(parts[:2])
    if len(parts) >= 3 and (ROOT.joinpath(*parts[:3])).is_dir():
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node: the import loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return loops


def _edges() -> Iterable[tuple[str, str]]:
    for module, deps in sorted(GRAPH.items()):
        for dep in sorted(deps):
            yield module, dep


# ---- the floors ---------------------------------------------------------------------------------


def test_every_core_module_is_on_a_floor() -> None:
    loose = [m for m in MODULES if m.startswith("core.") and m.split(".")[1] not in LAYERS]
    assert loose == []


def test_no_upward_import_in_core() -> None:
    upward = [
        f"{m} (floor {floor(m)}) imports {d} (floor {floor(d)})"
        for m, d in _edges()
        if m.startswith("core") and floor(d) > floor(m)
    ]
    assert upward == []


def test_adapters_and_plugins_import_only_the_public_api() -> None:
    """D37/D38/D24: our own channels and plugins are built like third-party ones."""
    private = [
        f"{m} imports {d}"
        for m, d in _edges()
        if m.split(".")[0] in ("adapters", "plugins")
        and d.split(".")[0] == "core"
        and not d.startswith("core.api")
    ]
    assert private == []


def test_adapters_and_plugins_do_not_import_each_other() -> None:
    crossing = [
        f"{m} imports {d}"
        for m, d in _edges()
        if {m.split(".")[0], d.split(".")[0]} == {"adapters", "plugins"}
    ]
    assert crossing == []


def test_no_module_import_loop() -> None:
    assert strongly_connected(GRAPH) == []


def test_no_package_import_loop() -> None:
    packages: dict[str, set[str]] = {}
    for m, d in _edges():
        a, b = package_of(m), package_of(d)
        if a != b:
            packages.setdefault(a, set()).add(b)
    assert strongly_connected(packages) == []


# ---- all SQL in the store (D96) -----------------------------------------------------------------


def test_only_the_store_speaks_sql() -> None:
    """SQLAlchemy and sqlmodel are imported only under core/store/ (and the migrations)."""
    outside = [
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if not module.startswith("core.store")
        for name in imported_names(path, module)
        if name.split(".")[0] in ("sqlalchemy", "sqlmodel", "alembic")
    ]
    assert outside == []


# ---- core names no channel (D94) ---------------------------------------------------------------


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """String constants of a module, docstrings left out (they may name examples)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_core_names_no_channel() -> None:
    """Every channel, ours too, declares itself in its package's spec (D94): core holds no
    channel's name, so a new channel touches no core file."""
    from core.config.channel_registry import installed_channels

    names = set(installed_channels())
    assert {"telegram", "discord", "slack", "webchat"} <= names
    found = [
        f"{module}:{line} {value!r}"
        for module, path in MODULES.items()
        if module.startswith("core.")
        for line, value in _string_constants(path)
        if value.strip().lower() in names
    ]
    assert found == []


# ---- the composition root (D30) ----------------------------------------------------------------

COMPOSITION_ROOTS = {"core.edge.http.server", "core.api.testing"}
"""And everything under core/edge/cli/: the process entry points that build a runtime."""

KNOWN_RUNTIME_IMPORTS = {
    # The HTTP edge's handlers read the runtime from the aiohttp app (appkeys.RUNTIME).
    "core.edge.http.appkeys",
    "core.edge.http.channel_stats",
    "core.edge.http.http_hooks",
    "core.edge.http.idempotency",
    "core.edge.http.openai_run",
    "core.edge.http.openai_target",
    "core.edge.mcp.server",
}


def test_only_composition_roots_import_the_runtime() -> None:
    """Features get narrow environments, even for type hints: a TYPE_CHECKING import of
    core.runtime is a new importer too."""
    importers = {m for m, d in _edges() if d == "core.runtime"}
    importers = {m for m in importers if not m.startswith("core.edge.cli.")}
    assert importers - COMPOSITION_ROOTS - KNOWN_RUNTIME_IMPORTS == set()


# ---- the scan itself ---------------------------------------------------------------------------


def test_the_scan_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from core.runtime import Runtime\n"
        "def f():\n    from plugins import x\n    import adapters.base\n"
        "from . import sibling\nfrom ..up import thing\n",
        encoding="utf-8",
    )
    found = imported_names(module, "core.features.tools.m")
    assert {"core.runtime", "plugins", "adapters.base"} <= found
    assert {"core.features.tools.sibling", "core.features.up.thing"} <= found


@pytest.mark.parametrize(
    ("graph", "loops"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_the_loop_finder(graph: dict[str, set[str]], loops: list[list[str]]) -> None:
    assert strongly_connected(graph) == loops


def test_floors_are_ordered() -> None:
    assert floor("core.model.keys") < floor("core.config") < floor("core.store.store")
    assert floor("core.store") < floor("core.engine.outbound.gate") < floor("core.features")
    assert floor("core.features.agent.turn") < floor("core.runtime") < floor("core.edge.cli")
    assert floor("core.edge.http.server") < floor("core.api.plugins") < floor("plugins")


# ---- CI holds the contract (D93) ---------------------------------------------------------------


def test_ci_runs_lint_format_and_strict_types_before_the_suite() -> None:
    """`.ci/run` calls README's `./scripts/test`, which checks before it tests."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert "./scripts/test" in ci
    checks = [
        ".venv/bin/ruff check core adapters plugins tests bench",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy --strict core adapters plugins tests",
    ]
    positions = [script.find(check) for check in checks]
    assert -1 not in positions, positions
    assert max(positions) < script.find("-m pytest")
