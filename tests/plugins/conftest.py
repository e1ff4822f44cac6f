"""The example third-party plugin (tests/plugins/example_plugin) pip-installed once per module,
for the modules that run it in a real gateway process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).parent / "example_plugin"


@pytest.fixture(scope="module")
def example_plugin_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`pip install` the example package (from a copy, so the tree stays clean)."""
    work = tmp_path_factory.mktemp("example_plugin")
    src = work / "src"
    shutil.copytree(
        SOURCE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    target = work / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert (target / "crosstalk_example").is_dir()
    return str(target)
