"""Layering contract: `core` never imports `plugins`; `adapters` only where listed below.

An AST scan of every module under core/ (top-level, function-level and TYPE_CHECKING imports
alike), so a lazy import cannot hide a dependency that points up the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"

# D37/D38: the adapter protocol lives in core/engine/channels and adapters are built through the
# channel registry (entry points), so no core module imports `adapters`.
KNOWN_ADAPTER_IMPORTS: set[tuple[str, str]] = set()


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def upward_imports() -> set[tuple[str, str]]:
    out = set()
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE.parent).as_posix()
        for name in imports_of(path):
            top = name.split(".")[0]
            if top in ("plugins", "adapters"):
                out.add((rel, name))
    return out


def test_core_never_imports_plugins() -> None:
    assert {(m, n) for m, n in upward_imports() if n.split(".")[0] == "plugins"} == set()


def test_core_imports_adapters_only_where_documented() -> None:
    adapters = {(m, n) for m, n in upward_imports() if n.split(".")[0] == "adapters"}
    assert adapters - KNOWN_ADAPTER_IMPORTS == set(), "new core → adapters import"


def test_the_scan_sees_lazy_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from plugins import x\n    import adapters.base\n")
    assert {"plugins", "adapters.base"} <= imports_of(module)


# ---- the runtime is imported only by the composition roots (D30) -------------------------------

ROOT = CORE.parent
COMPOSITION_ROOTS = {"core/runtime.py", "core/edge/http/server.py"}
"""And everything under core/edge/cli/: the process entry points that build a runtime."""

KNOWN_RUNTIME_IMPORTS = {
    # The HTTP edge: aiohttp handlers read the runtime from the app (appkeys.RUNTIME) that the
    # gateway server (a composition root) builds; a narrower gateway environment is future work.
    "core/edge/http/appkeys.py",
    "core/edge/http/channel_stats.py",
    "core/edge/http/http_hooks.py",
    "core/edge/http/idempotency.py",
    "core/edge/http/openai_run.py",
    "core/edge/http/openai_target.py",
    "core/edge/mcp/server.py",
}


def runtime_importers() -> set[str]:
    out = set()
    for top in ("core", "adapters", "plugins"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "core.runtime" in imports_of(path):
                out.add(path.relative_to(ROOT).as_posix())
    return out


def test_only_composition_roots_import_the_runtime() -> None:
    """Features get narrow environments (core.features.services, ToolEnv, CommandEnv, TurnEnv),
    even for type hints: a TYPE_CHECKING import of core.runtime is a new importer too."""
    importers = {m for m in runtime_importers() if not m.startswith("core/edge/cli/")}
    assert importers - COMPOSITION_ROOTS - KNOWN_RUNTIME_IMPORTS == set(), (
        "only the composition roots may import core.runtime"
    )


def _module_graph() -> dict[str, set[str]]:
    paths = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in CORE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {d for d in deps if d in paths}
    return graph


def test_no_import_cycle_through_the_runtime() -> None:
    """Nothing the runtime imports (at any depth, lazily or for types) imports it back."""
    graph = _module_graph()
    seen: set[str] = set()
    stack = ["core.runtime"]
    while stack:
        for dep in graph[stack.pop()]:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    assert "core.runtime" not in seen
