"""One path from a finished run to the gate (D99): what a finished run says to its chat."""

from __future__ import annotations

import pytest

from core.engine.outbound.run_end import TIMEOUT_NOTICE, run_end_message


@pytest.mark.parametrize(
    ("status", "reply", "error", "expected"),
    [
        ("ok", "hi", None, ("hi", "reply")),
        ("ok", "", None, None),
        ("ok", None, None, None),
        ("aborted", None, "aborted", None),  # a stop somebody asked for says nothing
        ("aborted", None, "gateway stopping", ("⚙️ Agent run aborted: gateway stopping", "notice")),
        ("timeout", None, None, (TIMEOUT_NOTICE, "notice")),
        (
            "error",
            None,
            "⚠️ The model provider failed (HTTP 500).",
            (
                "⚠️ The model provider failed (HTTP 500).",
                "notice",
            ),
        ),
        ("error", None, "boom", ("⚠️ The agent failed: boom", "notice")),
        ("error", None, None, ("⚠️ The agent failed: unknown error", "notice")),
    ],
)
def test_what_a_finished_run_says(
    status: str, reply: str | None, error: str | None, expected: tuple[str, str] | None
) -> None:
    assert run_end_message(status, reply, error) == expected


def test_a_cron_or_hook_reply_keeps_its_kind() -> None:
    assert run_end_message("ok", "done", None, reply_kind="cron") == ("done", "cron")
    assert run_end_message("ok", "done", None, reply_kind="hook") == ("done", "hook")
