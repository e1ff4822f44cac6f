"""core.api.testing (D91): the harness plugin authors get is the runtime, wired as in production,
with a recording channel and echo turns."""

from __future__ import annotations

from pathlib import Path

from core.api.testing import test_gateway


async def test_a_message_is_answered_and_recorded(tmp_path: Path) -> None:
    async with test_gateway(tmp_path, answer=lambda m: m.upper()) as gw:
        await gw.adapter.say("hello")
        assert await gw.adapter.wait_sent(1) == ["HELLO"]
        assert gw.turns.turns == ["hello"]


async def test_the_installed_plugins_answer_commands_and_tools(tmp_path: Path) -> None:
    config = {"channels": {"webchat": {"enabled": False}}}
    async with test_gateway(tmp_path, config, channel="testchat") as gw:
        await gw.adapter.say("/help")
        [help_text] = await gw.adapter.wait_sent(1)
        assert "/status" in help_text and "/send" not in help_text  # the sender is no owner
        listed = await gw.invoke("sessions_list", {})
        # the sender is no owner: its DM is a session of its own, not the main one (D62)
        keys = [row["key"] for row in listed["sessions"]]
        assert "agent:main:testchat:dm:chat-1" in keys
        assert gw.runtime.config.channels.webchat.enabled is False
