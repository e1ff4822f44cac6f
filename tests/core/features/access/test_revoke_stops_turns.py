"""Revoking a sender (D81) stops what they left in their own chat: a stranger again, their
queued messages reach no model and nothing answers them, whatever the busy-input mode; on
SQLite and PostgreSQL (the turns are found by their sender in the store)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import RequestJSON, TextReply, last_user_text, text
from tests.polling import eventually

APPROVED = "✅ You are approved. Send your message again."


@pytest.mark.parametrize("mode", ["queue", "collect"])
async def test_a_revoked_senders_queued_and_running_turns_stop_silently(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, db: dict[str, Any], mode: str
) -> None:
    release = asyncio.Event()
    seen: list[str] = []

    async def slow(request: RequestJSON) -> TextReply:
        seen.append(last_user_text(request))
        if last_user_text(request) == "first":
            await release.wait()
        return text("reply: " + last_user_text(request))

    fake_model.set_responder(slow)
    chat = RecordingAdapter("telegram")
    rt = await make_runtime(
        {
            **db,
            "channels": {"telegram": {"owners": ["owner-1"], "dmPolicy": "pairing"}},
            "messages": {"queue": {"mode": mode}},
        },
        adapters=[chat],
    )
    await chat.say("hello", chat_id="u7", sender="u7")
    await chat.wait_for("🔐 ")
    (req,) = await rt.pairing.pending()
    await rt.pairing.approve(req.code)
    await chat.say("first", chat_id="u7", sender="u7")
    await fake_model.wait_for_requests(1)
    for later in ("second", "third"):
        await chat.say(later, chat_id="u7", sender="u7")
    assert await rt.store.unfinished_sessions_of("telegram:u7")
    assert await rt.pairing.revoke("telegram", "u7")
    release.set()
    await eventually(
        lambda: _none_left(rt.store.unfinished_sessions_of("telegram:u7")), what="turns ended"
    )
    # before: "second" and "third" ran as a member after the revocation and were answered
    assert seen == ["first"]
    assert chat.texts() == [chat.texts()[0], APPROVED]


async def _none_left(pending: Any) -> bool:
    return not await pending
