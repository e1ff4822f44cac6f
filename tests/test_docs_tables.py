"""The tables of README and docs/ say each thing once (issue 24: THREAT_MODEL repeated two rows,
one under the same name, one under a longer name with the same cells)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def tables(text: str) -> list[list[list[str]]]:
    """Each markdown table's body rows (header and rule left out), as lists of cells."""
    found: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(rows) > 2:
            found.append(rows[2:])
        rows = []
    return found


def repeats(table: list[list[str]]) -> list[str]:
    """Rows that say what an earlier row says: the same first cell and another cell the same
    (a first column that groups rows, as ARCHITECTURE's layers, differs in the others), or the
    same cells after a different first one."""
    found = []
    for i, row in enumerate(table):
        for earlier in table[:i]:
            same_name = row[0] == earlier[0] and any(
                a == b for a, b in zip(row[1:], earlier[1:], strict=False)
            )
            if same_name or (len(row) > 2 and row[1:] == earlier[1:]):
                found.append(row[0])
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_table_row_is_said_twice(page: Path) -> None:
    for table in tables(page.read_text(encoding="utf-8")):
        assert repeats(table) == []
