"""End to end: a Telegram user's agent messages the web-chat main session mid-conversation.

Real python-telegram-bot against the fake Bot API, the real web chat over a WebSocket on the
real aiohttp app, the fake model scripting both agents. The agent-to-agent loop runs
1 primary + 1 reply step (cut short by REPLY_SKIP) + 1 announce, and the announce appears in
the web chat.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from core.edge.http.server import build_app
from core.engine.channels.build import ChannelEnv, build_adapters
from tests.conftest import ConfigFactory
from tests.fakes.model import (
    FakeModelServer,
    RequestJSON,
    last_user_text,
    system_text,
    text,
    tool_call,
    tool_results,
)
from tests.fakes.telegram import FakeTelegram

TG_USER = 4242


def script(req: RequestJSON) -> Any:
    system, prompt = system_text(req), last_user_text(req)
    if "Session: agent:main:telegram:" in system:
        if "Agent-to-agent reply step" in system:
            return text("REPLY_SKIP")
        if tool_results(req):
            return text("I asked the main session.")
        return tool_call(
            "sessions_send",
            {"sessionKey": "main", "message": "status please?", "timeoutSeconds": 10},
        )
    if "Session: agent:main:main" in system:
        if prompt == "Agent-to-agent announce step.":
            return text("Announcing: the Telegram agent asked for a status; all good.")
        if "Agent-to-agent message context" in system:
            return text("all good here")
    return None


async def test_telegram_agent_sends_to_web_chat_main(
    make_config: ConfigFactory, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    from core.runtime import Runtime

    config = make_config(
        {
            "session": {"dmScope": "per-channel-peer"},
            "channels": {
                "telegram": {
                    "botToken": fake_telegram.token,
                    "apiBaseUrl": fake_telegram.base_url,
                    "owners": [str(TG_USER)],  # a guest could not reach main (D61)
                    "streaming": "off",
                }
            },  # replies land whole
        }
    )
    rt = Runtime(config)
    adapters = build_adapters(config, ChannelEnv(rt.state_dir, rt.pages))
    server = TestServer(build_app(rt, "test-token", adapters))
    await server.start_server()
    await rt.start(adapters=adapters, probe_models=False)
    fake_model.set_responder(script)
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(server.make_url("/ws?token=test-token")) as ws,
        ):
            assert json.loads((await ws.receive(timeout=5)).data)["type"] == "history"
            await ws.send_str(json.dumps({"type": "message", "text": "hello"}))

            async def next_message() -> str:
                while True:
                    frame = json.loads((await ws.receive(timeout=10)).data)
                    if frame["type"] == "message":
                        return str(frame["text"])

            assert await next_message() == "echo: hello"

            fake_telegram.user_message(TG_USER, "please ask main how it is going")
            sent = await fake_telegram.wait_for("sendMessage", timeout=10)
            assert sent[0].params["text"] == "I asked the main session."
            assert str(sent[0].params["chat_id"]) == str(TG_USER)

            announce = await asyncio.wait_for(next_message(), 10)
            assert announce == "Announcing: the Telegram agent asked for a status; all good."

        tg_key = f"agent:main:telegram:dm:{TG_USER}"
        main = await rt.store.get_session("agent:main:main")
        assert main is not None
        main_runs = [m for m in await rt.store.history(main.session_id) if m.role == "user"]
        assert [m.plain_text() for m in main_runs] == [
            "hello",
            "status please?",
            "Agent-to-agent announce step.",
        ]
        tg = await rt.store.get_session(tg_key)
        assert tg is not None
        tg_user = [
            m.plain_text() for m in await rt.store.history(tg.session_id) if m.role == "user"
        ]
        assert tg_user == ["please ask main how it is going", "all good here"]
        log = await rt.store.list_deliveries(outcome="delivered")
        assert [(d.kind, d.channel) for d in log if d.kind == "announce"] == [
            ("announce", "webchat")
        ]
        listed = await rt.tools.invoke(
            rt.tool_env, "sessions_list", {}, rt.services.context_for(tg)
        )
        rows = {r["key"]: r for r in listed["sessions"]}
        assert rows[tg_key]["channel"] == "telegram"
        assert rows[tg_key]["deliveryContext"] == {
            "channel": "telegram",
            "to": str(TG_USER),
            "accountId": "default",
        }
        assert rows["main"]["deliveryContext"]["channel"] == "webchat"
    finally:
        await rt.stop()
        await server.close()


def spawn_script(req: RequestJSON) -> Any:
    system, prompt = system_text(req), last_user_text(req)
    if "Session: agent:main:subagent:" in system:
        if prompt == "Sub-agent announce step.":
            return text("Result: 3 open issues\nNotes: - all in core")
        return text("counted the issues")
    if "Session: agent:main:telegram:" in system:
        if tool_results(req):
            return text("A sub-agent is on it.")
        return tool_call("sessions_spawn", {"task": "count the open issues", "label": "count"})
    return None


async def test_spawned_child_announces_in_the_telegram_chat_and_sandbox_is_enforced(
    fake_telegram: FakeTelegram, make_runtime: Any, fake_model: FakeModelServer
) -> None:
    from adapters.telegram.adapter import build

    rt = await make_runtime(
        {
            "session": {"dmScope": "per-channel-peer"},
            "agents": {"defaults": {"sandbox": {"mode": "non-main"}}},
            "channels": {
                "telegram": {
                    "botToken": fake_telegram.token,
                    "apiBaseUrl": fake_telegram.base_url,
                    "owners": [str(TG_USER)],  # a guest could not reach main (D61)
                    "streaming": "off",
                }
            },  # replies land whole
        }
    )
    for adapter in build(rt.config.channels.telegram, rt):
        await rt.add_adapter(adapter)
    fake_model.set_responder(spawn_script)
    fake_telegram.user_message(TG_USER, "count the open issues in the background")
    sent = await fake_telegram.wait_for("sendMessage", count=2, timeout=15)
    texts = [c.params["text"] for c in sent]
    assert texts[0] == "A sub-agent is on it."
    announce = texts[1].split("\n")
    assert announce[:5] == ["Status: success", "", "Result:", "3 open issues", ""]
    assert announce[5:7] == ["Notes:", "• all in core"]  # the markdown list as Telegram shows it
    assert announce[-1].startswith("Stats: runtime ")
    assert "sessionKey agent:main:subagent:" in announce[-1]
    assert all(str(c.params["chat_id"]) == str(TG_USER) for c in sent)

    # The Telegram session is sandboxed (mode non-main): it sees only what it spawned.
    tg = await rt.store.get_session(f"agent:main:telegram:dm:{TG_USER}")
    assert tg is not None
    ctx = rt.services.context_for(tg)
    assert ctx.sandboxed
    listed = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, ctx)
    assert [r["key"].split(":")[2] for r in listed["sessions"]] == ["subagent"]
    await rt.services.ensure_session("agent:main:main")
    refused = await rt.tools.invoke(
        rt.tool_env, "sessions_history", {"sessionKey": "agent:main:main"}, ctx
    )
    assert refused == {
        "status": "forbidden",
        "error": "Session not visible from this sandboxed agent session: agent:main:main",
    }
