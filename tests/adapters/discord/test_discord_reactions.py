"""D74 status reactions on Discord: 👀 on the message when its turn starts, replaced by ✅ (the
bot's own 👀 removed) when it ends; ❌ for a failed turn; none where the send policy is off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.adapters.discord.runtime import add_discord
from tests.conftest import RuntimeFactory
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer, error, text

OWNER = 800000000001
DM = 900000000001


@pytest.fixture
async def gateway(
    fake_discord: FakeDiscord, make_runtime: RuntimeFactory
) -> AsyncIterator[Runtime]:
    section: dict[str, Any] = {
        "token": fake_discord.token,
        "owners": [str(OWNER)],
        "streaming": "off",
    }
    rt = await make_runtime({"channels": {"discord": section}})
    adapter = await add_discord(rt)
    yield rt
    await adapter.stop()


def _reactions(fake: FakeDiscord) -> list[tuple[str, str, str]]:
    return [
        (c.method, c.params["emoji"], c.params["message_id"])
        for c in fake.calls
        if c.method in ("createReaction", "deleteOwnReaction")
    ]


async def test_status_reactions_around_a_turn(
    gateway: Runtime, fake_discord: FakeDiscord, fake_model: FakeModelServer
) -> None:
    fake_model.script(text("hello"))
    sent = await fake_discord.user_message(DM, "hi", author_id=OWNER)
    await fake_discord.wait_for("createMessage", 1, timeout=30)
    await fake_discord.wait_for("createReaction", 2, timeout=30)
    mid = sent["id"]
    assert _reactions(fake_discord) == [
        ("createReaction", "👀", mid),
        ("deleteOwnReaction", "👀", mid),
        ("createReaction", "✅", mid),
    ]
    fake_model.script(error(400, "bad request"))  # a turn that fails ends with ❌
    failed = await fake_discord.user_message(DM, "break", author_id=OWNER)
    await fake_discord.wait_for("createReaction", 4, timeout=30)
    assert _reactions(fake_discord)[3:] == [
        ("createReaction", "👀", failed["id"]),
        ("deleteOwnReaction", "👀", failed["id"]),
        ("createReaction", "❌", failed["id"]),
    ]


async def test_no_reactions_where_the_bot_may_not_speak(
    gateway: Runtime, fake_discord: FakeDiscord, fake_model: FakeModelServer
) -> None:
    await fake_discord.user_message(DM, "/send off", author_id=OWNER)
    await fake_discord.wait_for("createMessage", 1, timeout=30)
    fake_model.script(text("should not be sent"))  # a muted chat's message starts no turn
    await fake_discord.user_message(DM, "are you there?", author_id=OWNER)
    await fake_discord.user_message(DM, "/send on", author_id=OWNER)
    await fake_discord.wait_for("createMessage", 2, timeout=30)
    assert _reactions(fake_discord) == []
    said = [c.params["content"] for c in fake_discord.created_messages()]
    assert "should not be sent" not in said
