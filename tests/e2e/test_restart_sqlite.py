"""kill -9 on SQLite with turns queued (D81, issue 25): the turn cut short gets its own notice
naming its message, the turns that were accepted and queued are answered after the restart,
none twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.engine.outbound.restart_notice import restart_notice
from tests.e2e.gateway_chat import Chat, Held
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually


async def test_kill_minus_nine_with_queued_turns_on_sqlite(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    held = Held("cut short")
    fake_model.set_responder(held)
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    first = GatewayProcess(config)
    await first.__aenter__()
    try:
        async with Chat(first) as chat:
            await chat.send("cut short")
            await asyncio.wait_for(held.reached.wait(), 30)
            await chat.send("queued one")
            await chat.send("queued two")

            async def stored() -> bool:  # both accepted: stored before the kill
                history = await first.invoke(
                    "sessions_history", {"sessionKey": "main", "limit": 10}
                )
                said = [m["content"][0]["text"] for m in history["messages"]]
                return {"queued one", "queued two"} <= set(said)

            await eventually(stored, timeout=20, what="the two queued messages stored")
    finally:
        await first.kill()
    async with GatewayProcess(config) as second, Chat(second) as chat:
        for said in ("echo: queued two", restart_notice("cut short")):
            await chat.wait_for(
                lambda f, said=said: f.get("type") == "message" and f.get("text") == said,
                timeout=60,
            )
        assert [t for t in chat.texts() if t.startswith("echo:")] == [
            "echo: queued one",
            "echo: queued two",
        ]
        status, body = await second.request("GET", "/api/deliveries")
        assert status == 200
        texts = sorted(d["text"] for d in body["deliveries"])
        assert texts == sorted(
            [restart_notice("cut short"), "echo: queued one", "echo: queued two"]
        )
