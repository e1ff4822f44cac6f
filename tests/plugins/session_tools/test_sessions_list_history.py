"""`sessions_list` and `sessions_history`: reference R2.1/R2.2 cases adapted to D1–D3, D10."""

from __future__ import annotations

from typing import Any

import pytest

from core.model.errors import ToolInputError
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from core.store import TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory

MAIN = "agent:main:main"


async def ctx_for(rt: Runtime, key: str = MAIN, *, sandboxed: bool = False) -> ToolContext:
    entry = await rt.services.ensure_session(key)
    from dataclasses import replace

    return replace(rt.services.context_for(entry), sandboxed=sandboxed)


async def call(rt: Runtime, tool: str, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, tool, args, ctx)


async def add(rt: Runtime, key: str, *, updated: int | None = None, **fields: Any) -> None:
    await rt.services.ensure_session(key, **fields)
    if updated is not None:
        await rt.store.update_session(key, updated_at=updated)


async def say(rt: Runtime, key: str, *messages: TranscriptMessage) -> None:
    entry = await rt.store.get_session(key)
    assert entry is not None
    await rt.store.append_messages(entry, list(messages), touch=False)


def tool_result(text: str = "{}") -> TranscriptMessage:
    return TranscriptMessage(
        role="toolResult",
        content=[{"type": "text", "text": text}],
        timestamp=now_ms(),
        tool_call_id="c1",
        tool_name="x",
    )


async def test_rows_kinds_channels_and_order(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    await rt.store.update_session(
        MAIN, updated_at=5000, last_channel="whatsapp", last_to="+1555", last_account_id="work"
    )
    await add(rt, "agent:main:cron:job-1", updated=4000, last_channel="telegram")
    await add(rt, "agent:main:hook:x", updated=3000)
    await add(rt, "agent:main:node-1", updated=2900)
    await add(
        rt, "agent:main:discord:group:dev", updated=2000, channel="discord", chat_type="group"
    )
    await add(rt, "agent:main:slack:channel:c1", updated=1000)
    await add(rt, "agent:main:subagent:abc", updated=500)
    await add(rt, "unknown", updated=9999)
    out = await call(rt, "sessions_list", {}, ctx)
    rows = out["sessions"]
    assert out["count"] == len(rows) == 7
    assert [(r["key"], r["kind"], r["channel"]) for r in rows] == [
        ("main", "main", "whatsapp"),
        ("agent:main:cron:job-1", "cron", "internal"),
        ("agent:main:hook:x", "hook", "internal"),
        ("agent:main:node-1", "node", "internal"),
        ("agent:main:discord:group:dev", "group", "discord"),
        ("agent:main:slack:channel:c1", "group", "slack"),
        ("agent:main:subagent:abc", "other", "unknown"),
    ]
    main = rows[0]
    assert main["deliveryContext"] == {"channel": "whatsapp", "to": "+1555", "accountId": "work"}
    assert (main["lastChannel"], main["lastTo"], main["lastAccountId"]) == (
        "whatsapp",
        "+1555",
        "work",
    )
    entry = await rt.store.get_session(MAIN)
    assert entry is not None
    assert main["transcriptPath"] == str(rt.store.transcript_path(entry.session_id))
    assert "messages" not in main


async def test_filters_apply_before_the_limit_and_clamp(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    await rt.store.update_session(MAIN, updated_at=now_ms())
    await add(rt, "agent:main:cron:old", updated=now_ms() - 15 * 60_000)
    for i in range(4):
        await add(rt, f"agent:main:discord:group:g{i}", updated=now_ms() - 30_000)
    cron = await call(rt, "sessions_list", {"limit": 1, "kinds": ["CRON", " bogus "]}, ctx)
    assert [r["key"] for r in cron["sessions"]] == ["agent:main:cron:old"]  # D2: kinds first
    both = await call(rt, "sessions_list", {"kinds": ["cron", " Group "]}, ctx)
    assert {r["kind"] for r in both["sessions"]} == {"cron", "group"}
    assert (await call(rt, "sessions_list", {"kinds": ["bogus"]}, ctx))["count"] == 6
    assert (await call(rt, "sessions_list", {"kinds": "cron"}, ctx))["count"] == 1
    assert (await call(rt, "sessions_list", {"limit": 2.9}, ctx))["count"] == 2
    assert (await call(rt, "sessions_list", {"limit": -4}, ctx))["count"] == 1
    recent = await call(rt, "sessions_list", {"activeMinutes": 5}, ctx)
    assert "agent:main:cron:old" not in [r["key"] for r in recent["sessions"]]
    assert recent["count"] == 5
    for tool, extra in (("sessions_list", {}), ("sessions_search", {"query": "x"})):
        # an hour count past what a 64-bit cutoff can hold filters nothing; it was a 500
        out = await call(rt, tool, {"activeMinutes": 1e300, **extra}, ctx)
        assert out["count"] == (6 if tool == "sessions_list" else 0)
    with pytest.raises(ToolInputError, match=r"^limit: "):
        await call(rt, "sessions_list", {"limit": "lots"}, ctx)


async def test_default_limit_is_50(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    for i in range(60):
        await add(rt, f"agent:main:dm:u{i}")
    assert (await call(rt, "sessions_list", {}, ctx))["count"] == 50
    assert (await call(rt, "sessions_list", {"limit": 500}, ctx))["count"] == 61


async def test_message_limit_skips_tool_results_and_clamps(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, TranscriptMessage.text("assistant", "hi", now_ms()), tool_result())
    rows = (await call(rt, "sessions_list", {"messageLimit": 1}, ctx))["sessions"]
    assert [m["role"] for m in rows[0]["messages"]] == ["assistant"]
    await say(rt, MAIN, *[TranscriptMessage.text("user", f"m{i}", now_ms()) for i in range(30)])
    rows = (await call(rt, "sessions_list", {"messageLimit": 50}, ctx))["sessions"]
    assert len(rows[0]["messages"]) == 20


async def test_send_policy_override_is_listed(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    await rt.store.update_session(MAIN, send_policy="deny")
    rows = (await call(rt, "sessions_list", {}, ctx))["sessions"]
    assert rows[0]["sendPolicy"] == "deny"


async def test_global_scope_lists_main_and_hides_reserved(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime({"session": {"scope": "global"}})
    ctx = await ctx_for(rt, "global")
    await add(rt, "unknown")
    rows = (await call(rt, "sessions_list", {}, ctx))["sessions"]
    assert [(r["key"], r["kind"]) for r in rows] == [("main", "main")]
    history = await call(rt, "sessions_history", {"sessionKey": "main"}, ctx)
    assert history == {"sessionKey": "main", "messages": []}


@pytest.mark.parametrize(
    ("a2a", "visible"),
    [
        ({}, {"main"}),
        ({"enabled": True, "allow": ["main", "oth*"]}, {"main", "agent:other:main"}),
        ({"enabled": True, "allow": ["main"]}, {"main"}),
        ({"enabled": True}, {"main", "agent:other:main"}),
    ],
)
async def test_cross_agent_rows_follow_agent_to_agent(
    make_runtime: RuntimeFactory, a2a: dict[str, Any], visible: set[str]
) -> None:
    rt = await make_runtime({"tools": {"agentToAgent": a2a}})
    ctx = await ctx_for(rt)
    await add(rt, "agent:other:main")
    rows = (await call(rt, "sessions_list", {}, ctx))["sessions"]
    assert {r["key"] for r in rows} == visible


async def test_sandboxed_requester_sees_only_its_children(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt, sandboxed=True)
    await add(rt, "agent:main:subagent:kid", spawned_by=MAIN)
    await add(rt, "agent:main:discord:group:dev")
    rows = (await call(rt, "sessions_list", {}, ctx))["sessions"]
    assert [r["key"] for r in rows] == ["agent:main:subagent:kid"]
    kid = await call(rt, "sessions_history", {"sessionKey": "agent:main:subagent:kid"}, ctx)
    assert kid == {"sessionKey": "agent:main:subagent:kid", "messages": []}
    for raw in ("agent:main:discord:group:dev", "main"):
        out = await call(rt, "sessions_history", {"sessionKey": raw}, ctx)
        assert out == {
            "status": "forbidden",
            "error": f"Session not visible from this sandboxed agent session: {raw}",
        }
    dev = await rt.store.get_session("agent:main:discord:group:dev")
    assert dev is not None
    out = await call(rt, "sessions_history", {"sessionKey": dev.session_id}, ctx)
    assert out["status"] == "forbidden" and out["error"].endswith(dev.session_id)
    open_ctx = await ctx_for(rt, sandboxed=True)
    rt.config.agents.defaults.sandbox.session_tools_visibility = "all"
    assert (await call(rt, "sessions_list", {}, open_ctx))["count"] == 3
    child_ctx = await ctx_for(rt, "agent:main:subagent:kid", sandboxed=True)
    rt.config.agents.defaults.sandbox.session_tools_visibility = "spawned"
    assert (await call(rt, "sessions_list", {}, child_ctx))["count"] == 3


async def test_history_by_key_session_id_and_label_like_keys(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime({"session": {"mainKey": " Primary "}})
    ctx = await ctx_for(rt, "agent:main:primary")
    await say(rt, "agent:main:primary", TranscriptMessage.text("user", "hello", now_ms()))
    out = await call(rt, "sessions_history", {"sessionKey": "main"}, ctx)
    assert out["sessionKey"] == "main" and [m["role"] for m in out["messages"]] == ["user"]
    await add(rt, "agent:main:discord:channel:123")
    dev = await rt.store.get_session("agent:main:discord:channel:123")
    assert dev is not None
    out = await call(rt, "sessions_history", {"sessionKey": dev.session_id.upper()}, ctx)
    assert out["sessionKey"] == "agent:main:discord:channel:123"
    await add(rt, "agent:main:test-labeled-session")
    out = await call(rt, "sessions_history", {"sessionKey": "test-labeled-session"}, ctx)
    assert out["sessionKey"] == "agent:main:test-labeled-session"
    missing = await call(
        rt, "sessions_history", {"sessionKey": "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa"}, ctx
    )
    assert missing == {
        "status": "error",
        "error": "No session found: aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa",
    }
    for bad in ({}, {"sessionKey": "   "}):
        with pytest.raises(ToolInputError, match=r"^sessionKey required$"):
            await call(rt, "sessions_history", bad, ctx)


async def test_history_tools_filter_before_limit_and_clamps(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, tool_result(), TranscriptMessage.text("assistant", "ok", now_ms()))
    out = await call(rt, "sessions_history", {"sessionKey": "main"}, ctx)
    assert [m["role"] for m in out["messages"]] == ["assistant"]
    out = await call(rt, "sessions_history", {"sessionKey": "main", "includeTools": True}, ctx)
    assert [m["role"] for m in out["messages"]] == ["toolResult", "assistant"]
    assert out["messages"][0]["toolCallId"] == "c1" and out["messages"][0]["isError"] is False
    await say(
        rt,
        MAIN,
        *[TranscriptMessage.text("user", f"m{i}", now_ms()) for i in range(300)],
        tool_result(),
    )
    assert len((await call(rt, "sessions_history", {"sessionKey": "main"}, ctx))["messages"]) == 50
    out = await call(rt, "sessions_history", {"sessionKey": "main", "limit": 5000}, ctx)
    assert len(out["messages"]) == 200  # D3: clamped, not an error
    out = await call(rt, "sessions_history", {"sessionKey": "main", "limit": 5}, ctx)
    assert [m["content"][0]["text"] for m in out["messages"]] == [f"m{i}" for i in range(295, 300)]


async def test_history_is_capped_at_256_kib(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    big = "x" * 10_000
    await say(rt, MAIN, *[TranscriptMessage.text("user", f"{i}{big}", now_ms()) for i in range(40)])
    out = await call(rt, "sessions_history", {"sessionKey": "main"}, ctx)
    import json

    assert out["truncated"] is True
    assert len(json.dumps(out["messages"]).encode()) <= 256 * 1024
    assert out["messages"][-1]["content"][0]["text"].startswith("39")


async def test_cross_agent_history_texts(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    out = await call(rt, "sessions_history", {"sessionKey": "agent:other:main"}, ctx)
    assert out == {
        "status": "forbidden",
        "error": (
            "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to allow "
            "cross-agent access."
        ),
    }
    rt.config.tools.agent_to_agent.enabled = True
    rt.config.tools.agent_to_agent.allow = ["main"]
    out = await call(rt, "sessions_history", {"sessionKey": "agent:other:main"}, ctx)
    assert out == {
        "status": "forbidden",
        "error": "Agent-to-agent history denied by tools.agentToAgent.allow.",
    }
