"""D74, D124, D125 on Discord: the application commands the connection holder registers, per
scope (everyone's in servers and DMs; owner-only ones in servers, for administrators), and slash
commands from that menu routed as the commands typed and answered through the gate."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.adapters.discord.runtime import add_discord
from tests.conftest import RuntimeFactory
from tests.fakes.discord import FakeDiscord

OWNER, ADMIN = 800000000001, 800000000002
DM = 900000000001


@pytest.fixture
async def gateway(
    fake_discord: FakeDiscord, make_runtime: RuntimeFactory
) -> AsyncIterator[Runtime]:
    section: dict[str, Any] = {
        "token": fake_discord.token,
        "owners": [str(OWNER)],
        "allowFrom": ["*"],
        "groupPolicy": "open",
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({"channels": {"discord": section}})
    adapter = await add_discord(rt)
    yield rt
    await adapter.stop()


async def test_the_command_menu_per_scope(gateway: Runtime, fake_discord: FakeDiscord) -> None:
    [call] = await fake_discord.wait_for("bulkOverwriteGlobalCommands", 1, timeout=30)
    registered = {c["name"]: c for c in call.params["commands"]}
    everyone = {c.name for c in gateway.commands.visible(is_owner=False)}
    every = {c.name for c in gateway.commands.visible(is_owner=True)}
    assert set(registered) == every and {"help", "approve", "deny", "send"} <= every
    assert registered["help"]["contexts"] == [0, 1]  # servers and the bot's DMs
    assert "default_member_permissions" not in registered["help"]
    approve = registered["approve"]
    assert approve["contexts"] == [0] and approve["default_member_permissions"] == "0"
    assert approve["options"] == [
        {"type": 3, "name": "args", "description": "What follows /approve", "required": False}
    ]
    assert all(1 <= len(c["description"]) <= 100 for c in registered.values())
    # what Discord's `/` menu then shows: a member and a DM see everyone's commands only
    assert set(fake_discord.menu_for(DM)) == everyone
    assert set(fake_discord.menu_for(fake_discord.CHANNEL_ID)) == everyone
    assert set(fake_discord.menu_for(fake_discord.CHANNEL_ID, admin=True)) == every
    assert call.token == fake_discord.token


async def test_slash_commands_are_the_commands_typed(
    gateway: Runtime, fake_discord: FakeDiscord
) -> None:
    await fake_discord.wait_for("bulkOverwriteGlobalCommands", 1, timeout=30)
    help_ = await fake_discord.slash(DM, "help", user_id=OWNER)
    [reply] = await fake_discord.wait_for("createMessage", 1, timeout=30)
    assert reply.params["channel_id"] == str(DM) and "/approve" in reply.params["content"]
    [ack] = fake_discord.callbacks
    assert ack["type"] == 4 and ack["data"]["flags"] == 64 and ack["data"]["content"] == "/help"

    # replayed after a resume: acknowledged once by Discord, answered once by us (D16)
    await fake_discord.redeliver_interaction(help_)
    refused = await fake_discord.wait_for("interactionCallback", 2, timeout=30)
    assert refused[-1].status == 400
    # the option carries the arguments; a server administrator who is no owner is refused
    await fake_discord.slash(
        fake_discord.CHANNEL_ID, "approve", "ABCD2345", user_id=ADMIN, username="bob", admin=True
    )
    await fake_discord.slash(
        fake_discord.CHANNEL_ID, "approve", "NOPE2345", user_id=OWNER, admin=True
    )
    replies = await fake_discord.wait_for("createMessage", 3, timeout=30)
    assert {(c.params["channel_id"], c.params["content"]) for c in replies[1:]} == {
        (str(fake_discord.CHANNEL_ID), "⚙️ /approve is owner-only."),
        (str(fake_discord.CHANNEL_ID), "⚙️ No pending approval with id NOPE2345."),
    }
    with pytest.raises(LookupError):  # a member's menu does not offer it
        await fake_discord.slash(fake_discord.CHANNEL_ID, "approve", "X", user_id=ADMIN)
    assert len(fake_discord.created_messages()) == 3
