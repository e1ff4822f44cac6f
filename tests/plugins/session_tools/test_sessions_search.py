"""`sessions_search` and `sessions_history {messageId}` (D66) on SQLite and PostgreSQL: ranking,
phrases, accents, hostile queries, scope before `limit`, excerpts and redaction, and a turn's
reply searchable the moment it is stored (through `/v1/chat/completions` and an agent's tool call).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.store import TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, RequestJSON, text, tool_call, tool_results
from tests.plugins.session_tools.search_helpers import MAIN, ctx_for, found, say, search

AUTH = {"Authorization": "Bearer test-token"}


async def test_words_phrases_accents_and_ranking(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, ("user", "Shall we meet at the café on Monday?"), at=1000)
    await say(rt, "agent:main:dm:bob", ("assistant", "The launch date is the 3rd of March."))
    await say(rt, "agent:main:dm:eve", ("user", "date of the launch: unknown"), at=2000)
    await say(rt, "agent:main:dm:amy", ("user", "launch launch launch date date"), at=500)
    out = await search(rt, ctx, query="CAFE")
    assert found(out) == [("main", "Shall we meet at the café on Monday?")]
    assert set(out["results"][0]) == {"sessionKey", "messageId", "role", "timestamp", "excerpt"}
    assert out["results"][0]["role"] == "user" and out["results"][0]["timestamp"] == 1000
    assert found(await search(rt, ctx, query="Café monday"))[0][0] == "main"
    assert found(await search(rt, ctx, query="café tuesday")) == []
    phrase = await search(rt, ctx, query='"launch date"')
    assert {k for k, _ in found(phrase)} == {"agent:main:dm:bob", "agent:main:dm:amy"}
    both = await search(rt, ctx, query="launch date")
    assert both["count"] == 3
    assert both["results"][0]["sessionKey"] == "agent:main:dm:amy"  # the best match first


@pytest.mark.parametrize("query", ['"', "*", "NEAR(", ":", "OR", "a OR b", 'x" OR "y', "-", "^"])
async def test_hostile_queries_never_error(start: RuntimeFactory, query: str) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, ("user", "OR NEAR( stars * and colons : here"))
    out = await search(rt, ctx, query=query)
    assert set(out) == {"count", "results"}
    if query in ("OR", "NEAR(", "a OR b"):
        assert out["count"] == (0 if query == "a OR b" else 1)


async def test_query_length_and_blank_are_refused_clearly(start: RuntimeFactory) -> None:
    from core.model.errors import ToolInputError

    rt = await start()
    ctx = await ctx_for(rt)
    with pytest.raises(ToolInputError, match=r"^query too long: 300 characters \(at most 256\)$"):
        await search(rt, ctx, query="x" * 300)
    for blank in ("", "   "):
        with pytest.raises(ToolInputError, match=r"^query required$"):
            await search(rt, ctx, query=blank)
    assert (await search(rt, ctx, query=" " + "y" * 256 + " "))["count"] == 0


async def test_tool_results_and_other_agents_are_not_searched(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    entry = await rt.services.ensure_session(MAIN)
    await rt.store.append_messages(
        entry,
        [
            TranscriptMessage(
                role="toolResult",
                content=[{"type": "text", "text": "zebra in a tool result"}],
                timestamp=now_ms(),
                tool_call_id="c1",
                tool_name="x",
            )
        ],
    )
    await say(rt, "agent:other:main", ("user", "zebra elsewhere"))
    assert (await search(rt, ctx, query="zebra"))["count"] == 0  # agentToAgent off


async def test_scope_applies_before_the_limit(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt, sandboxed=True)
    for i in range(30):
        await say(rt, f"agent:main:dm:u{i}", ("user", "needle in someone else's chat"))
    await rt.services.ensure_session("agent:main:subagent:kid", spawned_by=MAIN)
    await say(rt, "agent:main:subagent:kid", ("assistant", "needle found by my child"), at=1)
    out = await search(rt, ctx, query="needle", limit=1)
    assert found(out) == [("agent:main:subagent:kid", "needle found by my child")]
    assert (await search(rt, await ctx_for(rt), query="needle", limit=500))["count"] == 31
    hidden = await search(rt, ctx, query="needle", sessionKey="agent:main:dm:u1")
    assert hidden == {
        "status": "forbidden",
        "error": "Session not visible from this sandboxed agent session: agent:main:dm:u1",
    }


async def test_role_scope_applies_before_the_limit(start: RuntimeFactory) -> None:
    """D61: a member searches its tree, a guest its own session; the owner's stay unseen."""
    rt = await start()
    friend = "agent:main:telegram:dm:friend"
    for i in range(20):
        await say(rt, MAIN, ("user", f"secret plan number {i}"))
    await say(rt, friend, ("user", "my plan is lunch"), at=1)
    await rt.services.ensure_session("agent:main:subagent:fk", spawned_by=friend)
    await say(rt, "agent:main:subagent:fk", ("assistant", "plan for the friend"), at=2)
    member = await ctx_for(rt, friend, role="member")
    out = await search(rt, member, query="plan", limit=2)
    assert {k for k, _ in found(out)} == {friend, "agent:main:subagent:fk"}
    guest = await ctx_for(rt, friend, role="guest")
    assert found(await search(rt, guest, query="plan", limit=1)) == [(friend, "my plan is lunch")]
    hidden = await search(rt, member, query="plan", sessionKey="main")
    assert hidden == {"status": "error", "error": "No session found: main"}
    assert (await search(rt, await ctx_for(rt), query="plan", limit=50))["count"] == 22


async def test_filters_one_session_kinds_and_limits(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    for i in range(60):
        await say(rt, f"agent:main:dm:p{i}", ("user", f"apple number {i}"))
    await say(rt, "agent:main:cron:daily", ("assistant", "apple report"))
    assert (await search(rt, ctx, query="apple"))["count"] == 10
    assert (await search(rt, ctx, query="apple", limit=100))["count"] == 50
    assert (await search(rt, ctx, query="apple", limit=0))["count"] == 1
    cron = await search(rt, ctx, query="apple", kinds=["cron"])
    assert found(cron) == [("agent:main:cron:daily", "apple report")]
    one = await search(rt, ctx, query="apple", sessionKey="agent:main:dm:p7")
    assert found(one) == [("agent:main:dm:p7", "apple number 7")]
    await rt.store.update_session("agent:main:dm:p3", updated_at=now_ms() - 3_600_000)
    recent = await search(rt, ctx, query="apple", activeMinutes=30, limit=50)
    assert "agent:main:dm:p3" not in {k for k, _ in found(recent)}


async def test_excerpt_is_centred_short_and_redacted(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    long = "word " * 200 + "the deploy key is sk-proj-AbCdEf0123456789XyZ0123 ok " + "tail " * 200
    await say(rt, MAIN, ("user", long))
    (row,) = (await search(rt, ctx, query="deploy"))["results"]
    assert len(row["excerpt"]) <= 240 and row["excerpt"].startswith("…")
    assert row["excerpt"].endswith("…") and "the deploy key is [redacted] ok" in row["excerpt"]
    await say(rt, MAIN, ("assistant", "token: ghp_abcdefghijklmnopqrstuvwxyz0123 for bob"))
    (tok,) = (await search(rt, ctx, query="bob"))["results"]
    assert tok["excerpt"] == "token: [redacted] for bob"


async def test_deleted_session_leaves_the_index(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    await say(rt, "agent:main:dm:gone", ("user", "ephemeral words"))
    assert (await search(rt, ctx, query="ephemeral"))["count"] == 1
    assert await rt.store.delete_session("agent:main:dm:gone")
    await say(rt, "agent:main:dm:gone", ("user", "fresh words"))
    assert (await search(rt, ctx, query="ephemeral"))["count"] == 0


async def test_history_message_id_opens_a_centred_window(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    ids = await say(rt, MAIN, *[("user" if i % 2 else "assistant", f"line {i}") for i in range(20)])
    hit = (await search(rt, ctx, query="line 9"))["results"]
    target = next(r["messageId"] for r in hit if r["excerpt"] == "line 9")
    assert target == ids[9]
    args = {"sessionKey": "main", "messageId": target, "limit": 5}
    out = await rt.tools.invoke(rt.tool_env, "sessions_history", args, ctx)
    assert [m["id"] for m in out["messages"]] == ids[7:12]
    assert out["messages"][2]["content"] == [{"type": "text", "text": "line 9"}]
    edge = {**args, "messageId": ids[1]}
    first = await rt.tools.invoke(rt.tool_env, "sessions_history", edge, ctx)
    assert [m["id"] for m in first["messages"]] == ids[0:5]
    plain = await rt.tools.invoke(rt.tool_env, "sessions_history", {"sessionKey": "main"}, ctx)
    assert [m["id"] for m in plain["messages"]] == ids
    other = await say(rt, "agent:main:dm:x", ("user", "elsewhere"))
    wrong = await rt.tools.invoke(
        rt.tool_env, "sessions_history", {**args, "messageId": other[0]}, ctx
    )
    assert wrong == {"status": "error", "error": f"No message {other[0]} in session main"}


def script(req: RequestJSON) -> Any:
    if "remember" in json.dumps(req):
        results = tool_results(req)
        if not results:
            return tool_call("sessions_search", {"query": "launch date"})
        return text("found: " + str(json.loads(results[-1]["content"])["count"]))
    return None


async def test_a_reply_is_searchable_once_stored_over_http(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await start()
    fake_model.set_responder(script)
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        resp = await c.post(
            "/v1/chat/completions",
            json={"model": "crosstalk", "messages": [{"role": "user", "content": "launch date?"}]},
            headers={**AUTH, "x-crosstalk-session-key": "agent:main:dm:carol"},
        )
        assert resp.status == 200
        inv = {"tool": "sessions_search", "args": {"query": "echo launch"}, "sessionKey": "main"}
        body = await (await c.post("/tools/invoke", json=inv, headers=AUTH)).json()
        assert body["result"]["details"]["results"][0]["excerpt"] == "echo: launch date?"
        assert body["result"]["details"]["results"][0]["role"] == "assistant"
        resp = await c.post(
            "/v1/chat/completions",
            json={"model": "crosstalk", "messages": [{"role": "user", "content": "remember?"}]},
            headers={**AUTH, "x-crosstalk-session-key": "main"},
        )
        reply = (await resp.json())["choices"][0]["message"]["content"]
        assert reply == "found: 2"  # the agent's own tool call, through a real turn
        bad = {"tool": "sessions_search", "args": {"query": "q" * 300}, "sessionKey": "main"}
        resp = await c.post("/tools/invoke", json=bad, headers=AUTH)
        assert resp.status == 400
        assert "query too long" in (await resp.json())["error"]["message"]


async def test_a_captioned_voice_notes_words_are_found(start: RuntimeFactory) -> None:
    """A voice note with a caption keeps its transcript in the part (D152); search finds it
    by what was said, and the excerpt shows the words."""
    rt = await start()
    ctx = await ctx_for(rt)
    entry = await rt.services.ensure_session(MAIN)
    note = {"type": "attachment", "kind": "voice", "name": "voice.ogg", "size": 3000}
    heard = "the blue elephant sleeps at noon"
    msg = TranscriptMessage(
        role="user",
        content=[{"type": "text", "text": "listen"}, {**note, "transcript": heard}],
        timestamp=now_ms(),
    )
    await rt.store.append_messages(entry, [msg])
    out = await search(rt, ctx, query="elephant")
    assert found(out) == [("main", f"listen {heard}")]
    assert found(await search(rt, ctx, query="listen"))[0][0] == "main"
