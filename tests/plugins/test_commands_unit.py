"""The built-in chat commands on their command environment alone (D30).

Each test builds a `CommandInvocation` over a `CommandEnv` of real parts (tests/narrow.py) and
dispatches it through the command registry: no runtime, no router, no model server.
"""

from __future__ import annotations

from pathlib import Path

from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandInvocation
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from tests.narrow import Parts, narrow_parts

MAIN = "agent:main:main"


async def run(p: Parts, text: str, *, owner: bool = True) -> str | None:
    parsed = parse_command(text)
    assert parsed is not None
    spec = p.commands.lookup(parsed)
    assert spec is not None, text
    entry = await p.command_env.ensure_session(MAIN)
    msg = InboundMessage(
        channel="webchat",
        chat_type="direct",
        chat_id="u1",
        sender_id="u1",
        text=text,
        reply_to=DeliveryContext(channel="webchat", to="u1"),
    )
    inv = CommandInvocation(p.command_env, parsed, msg, entry, owner)
    return await p.commands.dispatch(spec, inv)


async def test_status_reads_the_session_through_the_environment(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        reply = await run(p, "/status")
        assert reply is not None
        assert reply.splitlines()[:2] == [f"⚙️ Session: {MAIN}", "Model: none configured"]
        assert "Last run: none" in reply


async def test_send_sets_the_session_override(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        assert await run(p, "/send off") == "⚙️ Send policy set to off."
        entry = await p.store.get_session(MAIN)
        assert entry is not None and entry.send_policy == "deny"


async def test_new_starts_a_fresh_session_and_stop_finds_nothing(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        before = await p.command_env.ensure_session(MAIN)
        reply = await run(p, "/new")
        assert reply is not None and reply.startswith("⚙️ New session started (")
        after = await p.store.get_session(MAIN)
        assert after is not None and after.session_id != before.session_id
        assert await run(p, "/stop") == "⚙️ Nothing to stop."


async def test_owner_commands_refuse_a_non_owner(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        assert await run(p, "/new", owner=False) == "⚙️ /new is owner-only."
        assert await run(p, "/cron list", owner=False) == "⚙️ /cron is owner-only."


async def test_help_lists_what_the_caller_may_run(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        owner_help = await run(p, "/help")
        guest_help = await run(p, "/help", owner=False)
        assert owner_help is not None and guest_help is not None
        assert "/new — " in owner_help and "/new — " not in guest_help
        assert "/status — " in guest_help


async def test_cron_and_subagents_use_their_services(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        assert await run(p, "/cron list") == "⚙️ No cron jobs."
        assert await run(p, "/subagents list") == "🧭 Subagents: none for this session."
