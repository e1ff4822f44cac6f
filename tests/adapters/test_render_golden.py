"""Golden files for the per-platform markdown renderers (tests/adapters/golden/).

The same markdown reply (and a hostile one: raw HTML, broadcasts, javascript: links, broken
markup, every MarkdownV2 special) rendered for Telegram (text + entities), Slack (mrkdwn) and
Discord (markdown). A golden file is the reviewed expectation of what a user sees; after an
intended change regenerate with ``CROSSTALK_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.discord.render import render as discord_render
from adapters.slack.render import render as slack_render
from adapters.telegram.render import render as telegram_render

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CROSSTALK_UPDATE_GOLDEN") == "1"
SOURCES = ("reply", "hostile")


def _telegram(md: str) -> str:
    shown = telegram_render(md)
    return (
        json.dumps(
            {"text": shown.text, "entities": list(shown.entities)}, ensure_ascii=False, indent=1
        )
        + "\n"
    )


def _slack(md: str) -> str:
    return slack_render(md) + "\n"


def _discord(md: str) -> str:
    return discord_render(md) + "\n"


RENDERERS = {"telegram.json": _telegram, "slack.txt": _slack, "discord.txt": _discord}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("platform", sorted(RENDERERS))
def test_golden(source: str, platform: str) -> None:
    md = (GOLDEN / f"{source}.md").read_text(encoding="utf-8")
    got = RENDERERS[platform](md)
    path = GOLDEN / f"{source}.{platform}"
    if UPDATE:
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")


def _telegram_text(source: str) -> tuple[str, list[dict[str, Any]]]:
    data = json.loads((GOLDEN / f"{source}.telegram.json").read_text(encoding="utf-8"))
    return data["text"], data["entities"]


def test_telegram_hostile_html_is_literal_and_unformatted() -> None:
    text, entities = _telegram_text("hostile")
    for raw in (
        '<script>alert("x")</script>',
        "<b>not bold</b>",
        '<a href="https://evil.example">click</a>',
        "<!-- hidden -->",
        "<!channel>",
    ):
        assert raw in text
    assert not any(e.get("url", "").startswith("javascript") for e in entities)
    assert all(e["type"] != "text_link" or e["url"] != "https://evil.example" for e in entities)


def test_telegram_entities_lie_inside_the_text_in_utf16_units() -> None:
    for source in SOURCES:
        text, entities = _telegram_text(source)
        units = len(text.encode("utf-16-le")) // 2
        for e in entities:
            assert 0 <= e["offset"] and e["offset"] + e["length"] <= units
    text, entities = _telegram_text("reply")
    pre = [e for e in entities if e["type"] == "pre"]
    assert [e.get("language") for e in pre] == ["python", None]  # code block, then the table
    assert "Ada  | 10" in text and "--+-" in text  # the table is an aligned monospaced block


def test_slack_escapes_every_control_character() -> None:
    out = (GOLDEN / "hostile.slack.txt").read_text(encoding="utf-8")
    for forged in (
        "<!channel>",
        "<!here>",
        "<@U123>",
        "<#C123>",
        "<script>",
        "<b>",
        "<javascript:",
    ):
        assert forged not in out
    assert "&lt;!channel&gt;" in out and "&lt;b&gt;not bold&lt;/b&gt;" in out
    reply = (GOLDEN / "reply.slack.txt").read_text(encoding="utf-8")
    assert "*Release notes*" in reply and "<https://example.com/docs?a=1&amp;b=2|a link>" in reply
    assert "&lt;hello {name}&gt;" in reply  # escaped inside code blocks too


def test_discord_headings_bold_and_tables_monospaced() -> None:
    out = (GOLDEN / "reply.discord.txt").read_text(encoding="utf-8")
    assert out.startswith("**Release notes**\n")
    assert "```\nName | Score | Note\n" in out
    assert "```python\ndef greet" in out  # the language is kept for highlighting
