"""README's first screen is what a newcomer needs (issue 24): what Crosstalk is, the two set-up
commands, a first chat with a config that loads, a real screenshot, and no decision numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.config import load_config

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIRST_SCREEN = README[: README.index("## OpenAI clients")]


def test_the_first_screen_has_the_two_commands_and_no_decision_numbers() -> None:
    setup = FIRST_SCREEN[FIRST_SCREEN.index("## Set up") : FIRST_SCREEN.index("## A first chat")]
    commands = [line.strip() for line in setup.splitlines() if line.startswith("    ")]
    assert commands == ["./scripts/run", "./scripts/test"]
    assert re.findall(r"\bD\d+\b", FIRST_SCREEN) == []
    intro = FIRST_SCREEN[FIRST_SCREEN.index("\n\n") : FIRST_SCREEN.index("## Set up")].strip()
    assert 2 <= len(intro.splitlines()) <= 4


def test_the_first_chat_config_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = re.findall(r"```yaml\n(.*?)```", FIRST_SCREEN, re.S)
    assert len(block.strip().splitlines()) <= 5
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = tmp_path / "crosstalk.yaml"
    path.write_text(block, encoding="utf-8")
    config = load_config(path, env={"OPENAI_API_KEY": "sk-test"})
    assert config.agents.defaults.model == "openai/gpt-4o-mini"
    assert "./scripts/run --config crosstalk.yaml" in FIRST_SCREEN


def test_the_screenshot_is_a_small_png() -> None:
    (image,) = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", FIRST_SCREEN)
    png = (ROOT / image).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 100_000


def test_every_doc_the_readme_names_exists() -> None:
    for name in re.findall(r"`((?:docs|bench|deploy)/[^`]+)`", README):
        assert (ROOT / name).exists(), name
