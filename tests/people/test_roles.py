"""D60: roles resolved at admission, carried by every run a run starts, shown by /whoami."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.config import validate_config
from core.engine.runs.rebuild import rebuild_request
from core.features.access.policy import access_policy, judge
from core.features.tools.registry import tool_caller
from core.model.delivery_context import DeliveryContext
from core.model.inbound import ChatType, InboundMessage
from core.model.roles import lower_role
from core.store import RunRecord
from tests.conftest import RuntimeFactory
from tests.polling import eventually


def _msg(sender: str, chat_type: ChatType = "direct", chat_id: str | None = None) -> InboundMessage:
    chat = chat_id or sender
    return InboundMessage(
        channel="telegram",
        account_id="default",
        chat_type=chat_type,
        chat_id=chat,
        sender_id=sender,
        text="hi",
        reply_to=DeliveryContext(channel="telegram", to=chat),
    )


@pytest.mark.parametrize(
    ("section", "sender", "chat_type", "approved", "role"),
    [
        ({"owners": ["1"]}, "1", "direct", False, "owner"),
        ({"owners": ["1"]}, "2", "direct", True, "member"),  # paired
        ({"allowFrom": ["2"], "dmPolicy": "allowlist"}, "2", "direct", False, "member"),
        ({"allowFrom": ["*"], "dmPolicy": "allowlist"}, "2", "direct", False, "guest"),
        ({"dmPolicy": "open"}, "2", "direct", False, "guest"),
        ({"owners": ["1"], "groupPolicy": "open"}, "1", "group", False, "owner"),
        ({"groupPolicy": "open"}, "3", "group", False, "guest"),
        ({"groupPolicy": "open"}, "3", "group", True, "member"),
        ({"groupPolicy": "open", "allowFrom": ["3"]}, "3", "group", False, "member"),
    ],
)
def test_the_verdict_carries_the_role(
    section: dict[str, Any], sender: str, chat_type: ChatType, approved: bool, role: str
) -> None:
    config = validate_config({"channels": {"telegram": {"botToken": "1:x", **section}}})
    policy = access_policy(config, "telegram")
    assert policy is not None
    verdict = judge(
        policy, _msg(sender, chat_type, "-5" if chat_type == "group" else None), approved=approved
    )
    assert verdict.admit and verdict.role == role


def test_a_started_run_never_gets_a_higher_role() -> None:
    assert lower_role("member", "owner") == "member"
    assert lower_role("owner", "guest") == "guest"
    assert lower_role("owner", "owner") == "owner"


async def _whoami(adapter: RecordingAdapter, sender: str) -> str:
    before = len(adapter.sent)
    await adapter.say("/whoami", chat_id=sender, sender=sender)
    await adapter.wait_sent(before + 1)
    return adapter.sent[-1][1]


async def test_whoami_answers_each_role_exactly(make_runtime: RuntimeFactory) -> None:
    tg = RecordingAdapter("telegram")
    web = RecordingAdapter("webchat")
    await make_runtime(
        {
            "session": {"dmScope": "per-channel-peer"},
            "channels": {
                "telegram": {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"]}
            },
        },
        adapters=[tg, web],
    )
    assert await _whoami(tg, "10") == "⚙️ You are owner on telegram (10)."
    assert await _whoami(tg, "20") == "⚙️ You are member on telegram (20)."
    assert await _whoami(tg, "30") == "⚙️ You are guest on telegram (30)."
    assert await _whoami(web, "someone") == "⚙️ You are owner on webchat (someone)."


async def test_a_paired_sender_is_a_member_and_their_runs_carry_it(
    make_runtime: RuntimeFactory,
) -> None:
    tg, web = RecordingAdapter("telegram"), RecordingAdapter("webchat")
    rt = await make_runtime(
        {
            "session": {"dmScope": "per-channel-peer"},
            "channels": {"telegram": {"botToken": "1:x", "owners": ["10"]}},
        },
        adapters=[tg, web],
    )
    await tg.say("hello", chat_id="7", sender="7")
    code = tg.texts()[-1].rsplit(" ", 1)[1]
    await web.say(f"/pair approve {code}", chat_id="owner", sender="owner")
    await web.wait_sent(1)
    assert await _whoami(tg, "7") == "⚙️ You are member on telegram (7)."
    before = len(tg.sent)
    await tg.say("hi again", chat_id="7", sender="7")
    await tg.wait_for("", before + 1, timeout=15)
    run = await rt.store.last_run("agent:main:telegram:dm:7")
    assert run is not None and run.meta is not None
    assert run.meta["request"]["role"] == "member"
    assert run.meta["request"]["sender"] == "telegram:7"


async def test_a_sub_agent_and_its_announce_carry_the_member_role(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime()
    key = "agent:main:telegram:dm:7"
    entry = await rt.services.ensure_session(key)
    ctx = rt.services.context_for(entry, role="member")
    out = await rt.tools.invoke(rt.tool_env, "sessions_spawn", {"task": "look around"}, ctx)
    assert out["status"] == "accepted", out
    [rec] = await rt.store.list_subagent_runs(requester_key=key)
    assert rec.role == "member"
    child_run = await rt.store.get_run(rec.run_id)
    assert child_run is not None and child_run.meta is not None
    assert child_run.meta["request"]["role"] == "member"


async def test_a_sessions_send_target_and_an_adopted_run_keep_the_requester(
    make_runtime: RuntimeFactory,
) -> None:
    """A member's `sessions_send` runs its target (and the reply-back turns of the exchange) as
    the member; a run rebuilt from its row, as a process that adopts it does (D27), gets the
    same role, sender, person and group back, so its tools see the same caller (D60, D63)."""
    rt = await make_runtime({"session": {"agentToAgent": {"maxPingPongTurns": 1}}})
    member = "agent:main:telegram:dm:7"
    child = "agent:main:subagent:c1"
    entry = await rt.services.ensure_session(member)
    await rt.services.ensure_session(child, spawned_by=member)
    ctx = replace(
        rt.services.context_for(entry, role="member"),
        sender="telegram:7",
        person_id="ann",
        group_id="telegram:-100",
    )
    out = await rt.tools.invoke(
        rt.tool_env, "sessions_send", {"sessionKey": child, "message": "hi"}, ctx
    )
    assert out["status"] == "ok", out
    for key in (child, member):  # the target's turn, and the member's reply-back turn

        async def ran(key: str = key) -> RunRecord | None:
            run = await rt.store.last_run(key)
            return run if run is not None and run.status not in ("queued", "running") else None

        done = await eventually(ran, 20, f"a run in {key}")
        assert done.meta is not None and done.meta["request"]["role"] == "member", done.meta
        assert done.meta["request"]["sender"] == "telegram:7"
    run = await rt.store.last_run(child)
    assert run is not None
    child_entry = await rt.store.get_session(child)
    assert child_entry is not None
    rebuilt = await rebuild_request(rt.store, run, child_entry, rt.services.context_for)
    got = rebuilt.context
    assert (got.role, got.sender, got.person_id, got.group_id) == (
        "member",
        "telegram:7",
        "ann",
        "telegram:-100",
    )
    assert tool_caller(got) == replace(tool_caller(ctx), session_key=child)
