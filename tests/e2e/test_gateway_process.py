"""End to end: the real gateway process, chatted with over HTTP and the web-chat socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp

from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config


async def _webchat_exchange(gw: GatewayProcess, text: str) -> tuple[str, list[str]]:
    """Send one message over the web-chat socket; the final reply and the streamed previews."""
    deltas: list[str] = []
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(f"{gw.url}/ws?token={gw.token}") as ws,
    ):
        first = json.loads((await asyncio.wait_for(ws.receive(), 10)).data)
        assert first["type"] == "history"
        await ws.send_str(json.dumps({"type": "message", "text": text}))
        while True:
            frame = json.loads((await asyncio.wait_for(ws.receive(), 10)).data)
            if frame["type"] == "delta":
                deltas.append(frame["text"])
            if frame["type"] == "message":
                return str(frame["text"]), deltas


async def test_chat_list_history_and_restart(tmp_path: Path, fake_model: FakeModelServer) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw:
        status, body = await gw.request(
            "POST",
            "/v1/chat/completions",
            {"model": "crosstalk", "messages": [{"role": "user", "content": "hello over http"}]},
            {"x-crosstalk-session-key": "main"},
        )
        assert status == 200, body
        assert body["choices"][0]["message"]["content"] == "echo: hello over http"

        reply, deltas = await _webchat_exchange(gw, "hello from the web")
        assert reply == "echo: hello from the web"
        assert len(deltas) > 1 and deltas[-1] == reply  # streamed word by word, then final

        listed = await gw.invoke("sessions_list", {"messageLimit": 2})
        main = next(r for r in listed["sessions"] if r["key"] == "main")
        assert main["kind"] == "main"
        assert main["channel"] == "webchat"
        assert main["deliveryContext"] == {
            "channel": "webchat",
            "to": "owner",
            "accountId": "default",
        }
        assert [m["role"] for m in main["messages"]] == ["user", "assistant"]

        history = await gw.invoke("sessions_history", {"sessionKey": "main"})
        texts = [m["content"][0]["text"] for m in history["messages"]]
        assert texts == [
            "hello over http",
            "echo: hello over http",
            "hello from the web",
            "echo: hello from the web",
        ]
        transcript = Path(main["transcriptPath"])
        assert len(transcript.read_text().splitlines()) == 4

    async with GatewayProcess(config) as gw2:
        history = await gw2.invoke("sessions_history", {"sessionKey": "main"})
        assert len(history["messages"]) == 4
        status, body = await gw2.request("GET", "/healthz")
        assert status == 200 and body["ok"] is True


async def test_streaming_completion_and_auth(tmp_path: Path, fake_model: FakeModelServer) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw:
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{gw.url}/v1/chat/completions",
                json={"stream": True, "messages": [{"role": "user", "content": "one two three"}]},
                headers={
                    "Authorization": f"Bearer {gw.token}",
                    "x-crosstalk-session-key": "agent:main:api-client",
                },
            ) as resp:
                assert resp.status == 200
                raw = (await resp.read()).decode()
            chunks = [
                json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")
            ]
            text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
            assert text == "echo: one two three"
            assert raw.rstrip().endswith("data: [DONE]")
            async with http.post(f"{gw.url}/tools/invoke", json={"tool": "sessions_list"}) as r:
                assert r.status == 401
                assert await r.json() == {
                    "error": {"message": "Unauthorized", "type": "unauthorized"}
                }
        listed = await gw.invoke("sessions_list", {})
        assert "agent:main:api-client" in [r["key"] for r in listed["sessions"]]
