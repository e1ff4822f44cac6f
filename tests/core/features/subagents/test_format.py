"""Announce normalisation, the stats line and the sub-agent prompt (R4.6, R4.9)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.config import CrosstalkConfig
from core.features.subagents.announce import (
    announce_text,
    format_cost,
    format_duration,
    format_tokens,
    parse_reply,
    stats_line,
    status_word,
)
from core.features.subagents.prompts import subagent_system_prompt
from core.runtime import Runtime
from core.store import SessionEntry
from core.store.subagents import SubagentRecord

CHILD = "agent:main:subagent:0b9c6d7e-1111-4222-8333-944445555666"


@pytest.mark.parametrize(
    ("reply", "result", "notes"),
    [
        ("Result: found it\nNotes: - a\n- b", "found it", "- a\n- b"),
        ("result:\nline 1\nline 2\n\nNOTES:\n- careful", "line 1\nline 2", "- careful"),
        ("**Result:** bold\n**Notes:** none", "bold", "none"),
        ("- **Result**: bulleted\n* Notes: x", "bulleted", "x"),
        ("just a plain answer", "just a plain answer", None),
        ("plain first\nNotes: then notes", "plain first", "then notes"),
        ("", None, None),
        ("Resultant: not a header", "Resultant: not a header", None),
    ],
)
def test_parse_reply(reply: str, result: str | None, notes: str | None) -> None:
    parsed = parse_reply(reply)
    assert (parsed.result, parsed.notes) == (result, notes)


@pytest.mark.parametrize(
    ("outcome", "word"),
    [
        ("ok", "success"),
        ("error", "error"),
        ("timeout", "timeout"),
        ("aborted", "error"),
        (None, "unknown"),
        ("weird", "unknown"),
    ],
)
def test_status_word(outcome: str | None, word: str) -> None:
    assert status_word(outcome) == word


def test_announce_text_layout() -> None:
    assert (
        announce_text(outcome="ok", error=None, reply="Result: r\nNotes: - n", stats="Stats: x")
        == "Status: success\n\nResult:\nr\n\nNotes:\n- n\n\nStats: x"
    )
    assert (
        announce_text(outcome="ok", error=None, reply="", stats="Stats: x")
        == "Status: success\n\nResult:\n(not available)\n\nNotes:\n- (none)\n\nStats: x"
    )
    assert (
        announce_text(
            outcome="error", error="boom", reply="Result: r\nNotes: - (none)", stats="Stats: x"
        )
        == "Status: error\n\nResult:\nr\n\nNotes:\n- Error: boom\n\nStats: x"
    )
    assert (
        announce_text(outcome="timeout", error=None, reply="r\nNotes: - partial", stats="S")
        == "Status: timeout\n\nResult:\nr\n\nNotes:\n- partial\n- Error: unknown error\n\nS"
    )


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (None, "n/a"),
        (0, "n/a"),
        (10, "0s"),
        (7_000, "7s"),
        (7_400, "7s"),
        (65_000, "1m5s"),
        (3_600_000 + 61_000, "1h1m"),
    ],
)
def test_format_duration(ms: int | None, text: str) -> None:
    assert format_duration(ms) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (None, "n/a"),
        (12, "12"),
        (999, "999"),
        (1_000, "1.0k"),
        (11_200, "11.2k"),
        (2_500_000, "2.5m"),
    ],
)
def test_format_tokens(n: int | None, text: str) -> None:
    assert format_tokens(n) == text


def test_format_cost() -> None:
    assert format_cost(0.45) == "$0.45"
    assert format_cost(0.0078) == "$0.0078"


def _entry() -> SessionEntry:
    return SessionEntry(
        key=CHILD,
        session_id="aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa",
        agent_id="main",
        kind="other",
        created_at=0,
        updated_at=0,
        model="fake/priced",
    )


def _record(**kw: object) -> SubagentRecord:
    base = SubagentRecord(
        run_id="r",
        child_key=CHILD,
        requester_key="agent:main:main",
        task="t",
        created_at=1_000,
        started_at=2_000,
        ended_at=9_000,
        input_tokens=12,
        output_tokens=516,
        total_tokens=11_200,
    )
    for k, v in kw.items():
        setattr(base, k, v)
    return base


def test_stats_line_acceptance_116(make_config: Callable[..., CrosstalkConfig]) -> None:
    rt = Runtime(make_config())
    line = stats_line(rt.services, _record(), _entry())
    transcript = rt.store.transcript_path("aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa")
    assert line == (
        f"Stats: runtime 7s • tokens 11.2k (in 12 / out 516) • sessionKey {CHILD} "
        f"• sessionId aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa • transcript {transcript}"
    )


def test_stats_line_with_cost_and_missing_parts(
    make_config: Callable[..., CrosstalkConfig],
) -> None:
    rt = Runtime(
        make_config(
            {
                "models": {
                    "providers": {
                        "fake": {"models": [{"id": "priced", "cost": {"input": 3, "output": 15}}]}
                    }
                }
            }
        )
    )
    line = stats_line(rt.services, _record(), _entry())
    assert "• tokens 11.2k (in 12 / out 516) • est $0.0078 • sessionKey" in line
    bare = stats_line(
        rt.services,
        _record(ended_at=None, input_tokens=None, output_tokens=None, total_tokens=None),
        None,
    )
    assert bare == f"Stats: runtime n/a • tokens n/a • sessionKey {CHILD}"
    partial = stats_line(rt.services, _record(total_tokens=None, output_tokens=None), None)
    assert "tokens 12 (in 12 / out n/a)" in partial


def test_subagent_prompt_structure() -> None:
    prompt = subagent_system_prompt(
        task="  find\n the   thing ",
        child_key=CHILD,
        requester_key="agent:main:discord:group:req",
        requester_channel="discord",
        label="finder",
    )
    assert prompt.startswith("# Subagent Context\n")
    assert "- You were created to handle: find the thing\n" in prompt
    for section in ("## Rules", "## Output Format", "## What You DON'T Do", "## Session Context"):
        assert section in prompt
    assert prompt.endswith(
        "## Session Context\n- Label: finder\n"
        "- Requester session: agent:main:discord:group:req.\n"
        "- Requester channel: discord.\n"
        f"- Your session: {CHILD}."
    )
    minimal = subagent_system_prompt(
        task=" ", child_key=CHILD, requester_key=None, requester_channel=None, label=None
    )
    assert "- You were created to handle: {{TASK_DESCRIPTION}}" in minimal
    assert minimal.endswith(f"## Session Context\n- Your session: {CHILD}.")
