"""The command registry enforces a spec's Permission before its handler runs.

These tests build only a command invocation and a registry: no runtime, no model server. The
invocation's environment is a bare object, so a handler that reached for it would fail the test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandInvocation, CommandRegistry, CommandSpec
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.model.permission import EVERYONE, OWNER, Caller, Permission
from core.model.records import SessionEntry

if TYPE_CHECKING:
    from core.features.commands.registry import CommandEnv


def invocation(
    text: str, *, owner: bool, sender: str = "u1", channel: str = "telegram"
) -> CommandInvocation:
    parsed = parse_command(text)
    assert parsed is not None
    msg = InboundMessage(
        channel=channel,
        chat_type="direct",
        chat_id=sender,
        sender_id=sender,
        text=text,
        reply_to=DeliveryContext(channel=channel, to=sender),
    )
    entry = SessionEntry(
        key=f"agent:main:{channel}:dm:{sender}",
        session_id="s1",
        agent_id="main",
        kind="direct",
        created_at=0,
        updated_at=0,
    )
    return CommandInvocation(cast("CommandEnv", object()), parsed, msg, entry, owner)


class Deploy:
    """A third-party command that declares owner-only and never checks it itself."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def __call__(self, inv: CommandInvocation) -> str:
        self.ran.append(inv.command.args)
        return f"deployed {inv.command.args}"


async def test_owner_command_refuses_a_non_owner_without_running_the_handler() -> None:
    handler = Deploy()
    registry = CommandRegistry()
    registry.register(
        CommandSpec(name="deploy", description="Ship it", handler=handler, permission=OWNER)
    )
    inv = invocation("/deploy prod", owner=False)
    spec = registry.lookup(inv.command)
    assert spec is not None
    assert await registry.dispatch(spec, inv) == "⚙️ /deploy is owner-only."
    assert handler.ran == []
    assert await registry.dispatch(spec, invocation("/deploy prod", owner=True)) == "deployed prod"
    assert handler.ran == ["prod"]


async def test_owner_only_shorthand_is_enforced_too() -> None:
    handler = Deploy()
    spec = CommandSpec(name="deploy", description="x", handler=handler, owner_only=True)
    assert spec.permission is OWNER
    registry = CommandRegistry()
    registry.register(spec)
    assert (
        await registry.dispatch(spec, invocation("/deploy", owner=False))
        == "⚙️ /deploy is owner-only."
    )
    assert handler.ran == []


async def test_predicate_permissions_compose_and_name_the_failing_part() -> None:
    on_telegram = Permission.predicate(
        "telegram", lambda c: c.channel == "telegram", "⚙️ /{name} works only on Telegram."
    )
    perm = OWNER & on_telegram
    handler = Deploy()
    registry = CommandRegistry()
    spec = CommandSpec(name="deploy", description="x", handler=handler, permission=perm)
    registry.register(spec)
    assert (
        await registry.dispatch(spec, invocation("/deploy", owner=False))
        == "⚙️ /deploy is owner-only."
    )
    assert (
        await registry.dispatch(spec, invocation("/deploy", owner=True, channel="slack"))
        == "⚙️ /deploy works only on Telegram."
    )
    assert await registry.dispatch(spec, invocation("/deploy a", owner=True)) == "deployed a"
    assert handler.ran == ["a"]
    alice = Permission.predicate("alice", lambda c: c.sender_id == "alice")
    either = OWNER | alice
    guest = Caller(is_owner=False, session_key="k", sender_id="bob")
    assert either.allows(Caller(is_owner=False, session_key="k", sender_id="alice"))
    assert not either.allows(guest)
    assert (~OWNER).allows(guest) and not (~EVERYONE).allows(guest)


async def test_visible_lists_only_what_the_caller_may_run() -> None:
    registry = CommandRegistry()
    registry.register(
        CommandSpec(name="deploy", description="x", handler=Deploy(), permission=OWNER)
    )
    registry.register(CommandSpec(name="ping", description="y", handler=Deploy()))
    guest = invocation("/help", owner=False).caller
    assert [c.name for c in registry.visible(guest)] == ["ping"]
    owner = invocation("/help", owner=True).caller
    assert [c.name for c in registry.visible(owner)] == ["deploy", "ping"]


async def test_one_replaceable_error_hook_reports_failures() -> None:
    async def broken(inv: CommandInvocation) -> str:
        raise RuntimeError("disk full")

    registry = CommandRegistry()
    spec = CommandSpec(name="deploy", description="x", handler=broken)
    registry.register(spec)
    assert (
        await registry.dispatch(spec, invocation("/deploy", owner=True))
        == "⚠️ /deploy failed: disk full"
    )
    seen: list[tuple[str, str]] = []

    async def hook(inv: CommandInvocation, exc: Exception) -> str:
        seen.append((inv.command.name, str(exc)))
        return "⚠️ Something went wrong."

    registry.set_error_hook(hook)
    assert (
        await registry.dispatch(spec, invocation("/deploy", owner=True))
        == "⚠️ Something went wrong."
    )
    assert seen == [("deploy", "disk full")]
