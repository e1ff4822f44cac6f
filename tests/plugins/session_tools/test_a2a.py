"""The agent-to-agent reply-back loop and announce of `sessions_send` (R3.3–R3.6).

Both sides are the fake model, scripted per session; the announce reaches a minimal in-test
Discord adapter (a fake at the network edge) through the real outbound gate.
"""

from __future__ import annotations

import json
from typing import Any

from core.api.testing import RecordingAdapter
from core.engine.runs import RunRequest
from core.model.delivery_context import DeliveryContext
from core.runtime import Runtime
from plugins.session_tools.a2a import message_context
from plugins.session_tools.announce_target import resolve_announce_target
from tests.conftest import RuntimeFactory
from tests.fakes.model import (
    FakeModelServer,
    RequestJSON,
    error,
    last_message,
    last_user_text,
    system_text,
    text,
    tool_call,
    tool_results,
)
from tests.plugins.session_tools.send_helpers import (
    MAIN,
    REQ,
    TARGET,
    a2a_done,
    is_announce,
    is_reply_step,
    runs_in,
    send,
    session_of,
)


def discord_adapter() -> RecordingAdapter:
    return RecordingAdapter("discord")


def turns(max_turns: int | None) -> dict[str, Any]:
    return (
        {} if max_turns is None else {"session": {"agentToAgent": {"maxPingPongTurns": max_turns}}}
    )


async def discord_runtime(
    make_runtime: RuntimeFactory, extra: dict[str, Any] | None = None
) -> tuple[Runtime, RecordingAdapter]:
    adapter = discord_adapter()
    rt = await make_runtime(extra, adapters=[adapter])
    return rt, adapter


def script(
    fake: FakeModelServer,
    *,
    primary: str = "initial",
    requester: str | None = "pong",
    target: str | None = "pong",
    announce: str = "announce now",
) -> None:
    """Per-session answers: the target's primary reply, numbered ping-pong replies, announce."""
    counter = {"n": 0}

    def responder(req: RequestJSON) -> Any:
        if is_announce(req):
            return text(announce)
        if is_reply_step(req):
            counter["n"] += 1
            answer = requester if session_of(req) == REQ else target
            if answer is None:
                return None
            return text(f"{answer}-{counter['n']}" if answer == "pong" else answer)
        return text(primary) if session_of(req) == TARGET else None

    fake.set_responder(responder)


def step_requests(fake: FakeModelServer) -> list[RequestJSON]:
    return [r for r in fake.requests if is_reply_step(r)]


async def test_two_turns_then_announce_to_the_target_chat(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(2))
    script(fake_model, announce="  announce now  ")
    out = await send(rt, {"sessionKey": TARGET, "message": "please", "timeoutSeconds": 5})
    assert out["status"] == "ok" and out["reply"] == "initial"
    await a2a_done(rt)

    assert [m.plain_text() for m in await runs_in(rt, REQ)] == ["initial"]
    assert [m.plain_text() for m in await runs_in(rt, TARGET)] == [
        "please",
        "pong-1",
        "Agent-to-agent announce step.",
    ]
    steps = step_requests(fake_model)
    assert [session_of(r) for r in steps] == [REQ, TARGET]
    assert "Current agent: Agent 1 (requester).\nTurn 1 of 2." in system_text(steps[0])
    assert "Current agent: Agent 2 (target).\nTurn 2 of 2." in system_text(steps[1])
    assert "Agent 2 (target) channel: discord." in system_text(steps[0])
    assert 'reply exactly "REPLY_SKIP"' in system_text(steps[0])

    announce = next(r for r in fake_model.requests if is_announce(r))
    assert session_of(announce) == TARGET
    assert last_user_text(announce) == "Agent-to-agent announce step."
    prompt = system_text(announce)
    for line in (
        "Original request: please",
        "Round 1 reply: initial",
        "Latest reply: pong-2",
        'If you want to remain silent, reply exactly "ANNOUNCE_SKIP".',
        "Any other reply will be posted to the target channel.",
        "After this reply, the agent-to-agent conversation is over.",
    ):
        assert line in prompt

    assert [(t.channel, t.to, body) for t, body in chat.sent] == [
        ("discord", "channel:target", "announce now")
    ]
    rows = await rt.store.list_deliveries(session_key=TARGET)
    assert [(r.kind, r.outcome, r.channel, r.to, r.text) for r in rows] == [
        ("announce", "delivered", "discord", "channel:target", "announce now")
    ]
    announce_run = await rt.store.get_run(rows[0].run_id or "")
    assert announce_run is not None and announce_run.session_key == TARGET
    assert announce_run.lane == "nested" and not announce_run.deliver
    # Every step shares the send's trace.
    primary = await rt.store.get_run(out["runId"])
    assert primary is not None and primary.meta is not None
    assert announce_run.meta is not None
    assert announce_run.meta["traceId"] == primary.meta["traceId"]


async def test_default_allows_five_reply_steps(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, _ = await discord_runtime(make_runtime)
    script(fake_model)
    out = await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    assert out["status"] == "ok"
    await a2a_done(rt)
    assert [session_of(r) for r in step_requests(fake_model)] == [REQ, TARGET, REQ, TARGET, REQ]
    assert len(await runs_in(rt, REQ)) + len(await runs_in(rt, TARGET)) == 1 + 5 + 1


async def test_zero_turns_still_announces(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(0))
    script(fake_model)
    await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    await a2a_done(rt)
    assert step_requests(fake_model) == []
    assert [body for _, body in chat.sent] == ["announce now"]


async def test_reply_skip_ends_the_ping_pong(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(4))
    script(fake_model, requester="  REPLY_SKIP  ")
    await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    await a2a_done(rt)
    assert len(step_requests(fake_model)) == 1
    announce = next(r for r in fake_model.requests if is_announce(r))
    assert "Latest reply: initial" in system_text(announce)
    assert [body for _, body in chat.sent] == ["announce now"]


async def test_skip_tokens_are_case_sensitive(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(2))
    script(fake_model, requester="reply_skip", announce="announce_skip")
    await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    await a2a_done(rt)
    assert len(step_requests(fake_model)) == 2
    assert [body for _, body in chat.sent] == ["announce_skip"]


async def test_failed_reply_step_ends_the_ping_pong(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(4))

    def responder(req: RequestJSON) -> Any:
        if is_announce(req):
            return text("announce now")
        if is_reply_step(req):
            return error(400, "step broke")
        return text("initial")

    fake_model.set_responder(responder)
    await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    await a2a_done(rt)
    assert len(step_requests(fake_model)) == 1
    assert [body for _, body in chat.sent] == ["announce now"]


async def test_announce_skip_posts_nothing(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(1))
    script(fake_model, announce=" ANNOUNCE_SKIP ")
    await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    await a2a_done(rt)
    assert any(is_announce(r) for r in fake_model.requests)
    assert chat.sent == [] and await rt.store.list_deliveries() == []


async def test_announce_suppressed_when_target_policy_turns_deny(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(0))

    async def responder(req: RequestJSON) -> Any:
        if is_announce(req):  # the owner says "/send off" while the target is announcing
            await rt.store.update_session(TARGET, send_policy="deny")
            return text("hi")
        return text("initial")

    fake_model.set_responder(responder)
    out = await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    assert out["status"] == "ok"
    await a2a_done(rt)
    assert chat.sent == []
    rows = await rt.store.list_deliveries(session_key=TARGET)
    assert [(r.kind, r.outcome, r.text) for r in rows] == [
        ("announce", "suppressed_by_policy", "hi")
    ]


async def test_announce_failure_does_not_change_the_result(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(turns(0))  # no Discord adapter connected
    script(fake_model)
    out = await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 5})
    assert out["status"] == "ok"
    await a2a_done(rt)
    rows = await rt.store.list_deliveries(session_key=TARGET)
    assert [(r.kind, r.outcome) for r in rows] == [("announce", "failed")]


async def test_fire_and_forget_runs_the_flow_after_the_primary(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime, turns(1))
    script(fake_model)
    out = await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 0})
    assert out["status"] == "accepted" and "reply" not in out
    await a2a_done(rt)
    assert [last_user_text(r) for r in step_requests(fake_model)] == ["initial"]
    assert [body for _, body in chat.sent] == ["announce now"]


async def test_fire_and_forget_with_failed_primary_stops(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, chat = await discord_runtime(make_runtime)
    fake_model.script(error(400, "boom"))
    out = await send(rt, {"sessionKey": TARGET, "message": "go", "timeoutSeconds": 0})
    assert out["status"] == "accepted"
    await a2a_done(rt)
    assert len(fake_model.requests) == 1 and chat.sent == []


async def test_send_to_own_session_is_accepted_at_once(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """From inside its own turn, a wait could only time out: the answer is `accepted`."""
    rt, chat = await discord_runtime(make_runtime)

    def responder(req: RequestJSON) -> Any:
        if is_announce(req):
            return text("note delivered")
        if last_message(req).get("role") == "tool":
            return text("sent")
        if last_user_text(req) == "remind yourself":
            return tool_call(
                "sessions_send", {"sessionKey": REQ, "message": "reminder", "timeoutSeconds": 30}
            )
        return text("noted")

    fake_model.set_responder(responder)
    entry = await rt.services.ensure_session(
        REQ, channel="discord", chat_type="group", last_channel="discord", last_to="channel:req"
    )
    run = await rt.services.start_run(
        RunRequest(REQ, "remind yourself", rt.services.context_for(entry))
    )
    assert (await rt.runs.wait(run.id, 10)).status == "ok"
    result = json.loads(tool_results(fake_model.requests[1])[0]["content"])
    assert result["status"] == "accepted" and result["sessionKey"] == REQ
    await a2a_done(rt)
    assert [m.plain_text() for m in await runs_in(rt, REQ)] == [
        "remind yourself",
        "reminder",
        "Agent-to-agent announce step.",
    ]
    assert step_requests(fake_model) == []  # no ping-pong with itself
    assert [(t.to, body) for t, body in chat.sent] == [("channel:req", "note delivered")]


# ---- contexts and announce targets -----------------------------------------------------------


def test_message_context_lines() -> None:
    assert message_context("agent:main:discord:group:req", "discord", "main").splitlines() == [
        "Agent-to-agent message context:",
        "Agent 1 (requester) session: agent:main:discord:group:req.",
        "Agent 1 (requester) channel: discord.",
        "Agent 2 (target) session: main.",
    ]
    assert message_context(MAIN, None, "x").splitlines()[1:] == [
        f"Agent 1 (requester) session: {MAIN}.",
        "Agent 2 (target) session: x.",
    ]


async def test_announce_targets(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    assert await resolve_announce_target(
        rt.tool_env, "agent:main:discord:group:dev"
    ) == DeliveryContext(channel="discord", to="channel:dev")
    assert await resolve_announce_target(
        rt.tool_env, "agent:main:telegram:group:-100123:topic:42"
    ) == DeliveryContext(channel="telegram", to="group:-100123", thread_id="42")
    await rt.services.ensure_session(MAIN, last_channel="whatsapp", last_to="+1555")
    assert await resolve_announce_target(rt.tool_env, MAIN) == DeliveryContext(
        channel="whatsapp", to="+1555"
    )
    # Keys are lowercase; the stored route keeps Slack's case and the account.
    slack = "agent:main:slack:channel:c0abc"
    await rt.services.ensure_session(
        slack, last_channel="slack", last_to="channel:C0ABC", last_account_id="work"
    )
    assert await resolve_announce_target(rt.tool_env, slack) == DeliveryContext(
        channel="slack", to="channel:C0ABC", account_id="work"
    )
    # WhatsApp groups prefer the session lookup.
    wa = "agent:main:whatsapp:group:123@g.us"
    await rt.services.ensure_session(
        wa, last_channel="whatsapp", last_to="123@g.us", last_account_id="work"
    )
    assert await resolve_announce_target(rt.tool_env, wa) == DeliveryContext(
        channel="whatsapp", to="123@g.us", account_id="work"
    )
    assert await resolve_announce_target(rt.tool_env, "agent:main:subagent:x") is None
