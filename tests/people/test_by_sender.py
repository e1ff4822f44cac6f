"""D63: tools by sender: every match form, allow and deny, the defaults, and a denied tool is
neither offered to the model nor callable."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.features.tools.registry import tool_caller
from core.model.by_sender import compile_rules, denied
from core.model.permission import Caller
from core.model.roles import Role
from core.model.tool_context import ToolContext
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import tool_names


def caller(
    role: Role = "member",
    sender: str = "7",
    channel: str = "telegram",
    person: str | None = None,
    group: str | None = None,
) -> Caller:
    return Caller(
        is_owner=role == "owner",
        session_key="k",
        channel=channel,
        sender_id=sender,
        role=role,
        person_id=person,
        group=group,
    )


def test_the_defaults_take_cron_and_mcp_from_members_and_more_from_guests() -> None:
    rules = compile_rules(None)
    for tool in ("cron", "mcp_anything"):
        server = "files" if tool.startswith("mcp") else None
        assert denied(rules, caller("member"), tool, mcp_server=server)
        assert not denied(rules, caller("owner"), tool, mcp_server=server)
    assert not denied(rules, caller("member"), "sessions_spawn")
    for tool in ("cron", "sessions_spawn", "sessions_send"):
        assert denied(rules, caller("guest"), tool)
    assert not denied(rules, caller("guest"), "sessions_list")
    assert not denied(compile_rules([]), caller("guest"), "cron")  # [] replaces the defaults


@pytest.mark.parametrize(
    ("match", "who", "hit"),
    [
        ("role:guest", caller("guest"), True),
        ("role:guest", caller("member"), False),
        ("telegram:7", caller(sender="7"), True),
        ("telegram:7", caller(sender="7", channel="discord"), False),
        ("person:ann", caller(person="ann"), True),
        ("person:ann", caller(person="bob"), False),
        ("group:telegram:-100", caller(group="telegram:-100"), True),
        ("group:telegram:-100", caller(), False),
        ("*", caller("owner"), True),
    ],
)
def test_every_match_form(match: str, who: Caller, hit: bool) -> None:
    assert denied(compile_rules([{"match": match, "deny": ["web_*"]}]), who, "web_fetch") is hit


def test_allow_narrows_deny_wins_and_mcp_patterns() -> None:
    rules = compile_rules(
        [
            {"match": "*", "allow": ["sessions_*", "mcp:files"]},
            {"match": "role:member", "deny": ["sessions_send"]},
        ]
    )
    member = caller("member")
    assert not denied(rules, member, "sessions_list")
    assert denied(rules, member, "sessions_send")  # a deny anywhere wins
    assert denied(rules, member, "cron")  # not in the allow list
    assert not denied(rules, member, "files__read", mcp_server="files")
    assert denied(rules, member, "mail__send", mcp_server="mail")
    assert denied(
        compile_rules([{"match": "*", "deny": ["mcp:*"]}]), member, "x__y", mcp_server="x"
    )


async def _offered(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, extra: dict[str, Any], sender: str
) -> list[str]:
    tg = RecordingAdapter("telegram")
    section = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"]}
    await make_runtime(
        {"session": {"dmScope": "per-channel-peer"}, "channels": {"telegram": section}, **extra},
        adapters=[tg],
    )
    await tg.say("hello", chat_id=sender, sender=sender)
    await tg.wait_for("echo", 1, timeout=15)
    return tool_names(fake_model.requests[-1])


async def test_a_denied_tool_is_not_offered_to_the_model(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    owner = await _offered(make_runtime, fake_model, {}, "10")
    assert {"cron", "sessions_spawn", "sessions_send", "sessions_list"} <= set(owner)
    member = await _offered(make_runtime, fake_model, {}, "20")
    assert "cron" not in member and {"sessions_spawn", "sessions_send"} <= set(member)
    guest = await _offered(make_runtime, fake_model, {}, "30")
    assert not {"cron", "sessions_spawn", "sessions_send"} & set(guest)
    assert "sessions_list" in guest
    rules = {"tools": {"bySender": [{"match": "telegram:20", "deny": ["sessions_*"]}]}}
    custom = await _offered(make_runtime, fake_model, rules, "20")
    assert "cron" in custom and not [n for n in custom if n.startswith("sessions_")]


async def test_the_registry_refuses_a_denied_tool_even_if_called(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:telegram:dm:30")
    ctx = rt.services.context_for(entry, role="guest")
    out = await rt.tools.invoke(rt.tool_env, "sessions_spawn", {"task": "x"}, ctx)
    assert out == {
        "status": "forbidden",
        "error": "sessions_spawn is not allowed for this sender (tools.bySender)",
    }


@pytest.mark.parametrize(
    ("match", "hit"),
    [
        ("person:ann", True),
        ("group:telegram:-100", True),
        ("telegram:7", True),
        ("person:bob", False),
        ("group:telegram:-200", False),
        ("discord:7", False),
    ],
)
def test_a_runs_context_gives_the_rules_every_fact(match: str, hit: bool) -> None:
    """The facts come from the run's context (D63, D101): person and group included, and a run
    the chain started elsewhere (a sub-agent, no chat of its own) still matches its starter."""
    started = ToolContext(
        session_key="agent:main:subagent:x",
        agent_id="main",
        role="member",
        sender="telegram:7",
        person_id="ann",
        group_id="telegram:-100",
    )
    rules = compile_rules([{"match": match, "deny": ["web_*"]}])
    assert denied(rules, tool_caller(started), "web_fetch") is hit
