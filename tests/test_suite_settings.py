"""The test suite's own settings: Hypothesis must not fail on a slow, shared machine."""

from __future__ import annotations

import tomllib
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent


def test_hypothesis_ci_profile_is_active() -> None:
    active = settings.default
    assert active is not None
    assert active.deadline is None
    assert HealthCheck.too_slow in active.suppress_health_check


def test_license_is_an_spdx_string() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
