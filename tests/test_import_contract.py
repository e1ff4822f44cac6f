"""Layering contract: `core` never imports `plugins`; `adapters` only where listed below.

An AST scan of every module under core/ (top-level, function-level and TYPE_CHECKING imports
alike), so a lazy import cannot hide a dependency that points up the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"

# D37/D38: the adapter protocol lives in core/channels and adapters are built through the
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
