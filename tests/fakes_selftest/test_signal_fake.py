"""FakeSignal driven by a plain aiohttp client: JSON-RPC shapes, the event stream with its ids,
Last-Event-ID replay across a dropped stream and a daemon restart, injected failures."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import aiohttp

from tests.fakes.signal import FakeSignal


async def rpc(fake: FakeSignal, method: str, **params: Any) -> tuple[int, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"account": fake.account, **params},
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{fake.base_url}/api/v1/rpc", json=body) as resp,
    ):
        return resp.status, (await resp.json() if resp.status == 200 else None)


async def read_events(resp: aiohttp.ClientResponse, count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` events (id, body) from an open stream."""
    out: list[tuple[str, dict[str, Any]]] = []
    event_id = ""
    async with asyncio.timeout(5):
        async for raw in resp.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("id:"):
                event_id = line[3:]
            elif line.startswith("data:"):
                out.append((event_id, json.loads(line[5:])))
                if len(out) == count:
                    return out
    return out


async def test_stream_ids_and_replay(fake_signal: FakeSignal) -> None:
    url = f"{fake_signal.base_url}/api/v1/events?account=%2B{fake_signal.account[1:]}"
    async with aiohttp.ClientSession() as http:
        async with http.get(url) as resp:
            assert resp.headers["Content-Type"] == "text/event-stream"
            await fake_signal.wait_until(lambda: len(fake_signal.streams) == 1)
            fake_signal.user_message("+15550000001", "one", name="Ann")
            [(first_id, first)] = await read_events(resp, 1)
        assert first_id == f"{fake_signal.prefix}1"
        env = first["envelope"]
        assert first["account"] == fake_signal.account
        assert (env["sourceNumber"], env["dataMessage"]["message"]) == ("+15550000001", "one")
        await fake_signal.wait_until(lambda: not fake_signal.streams)
        fake_signal.user_message("+15550000001", "two")  # nobody connected: kept
        fake_signal.user_message("+15550000001", "three")
        async with http.get(url, headers={"Last-Event-ID": first_id}) as resp:
            missed = await read_events(resp, 2)
        assert [b["envelope"]["dataMessage"]["message"] for _, b in missed] == ["two", "three"]
        await fake_signal.restart()
        async with http.get(url, headers={"Last-Event-ID": missed[-1][0]}) as resp:
            fake_signal.user_message("+15550000001", "four")
            [(new_id, body)] = await read_events(resp, 1)
        assert new_id.startswith(fake_signal.prefix) and not new_id.startswith(
            first_id.split("-")[0] + "-"
        )  # a new series after the restart
        assert body["envelope"]["dataMessage"]["message"] == "four"
        async with http.get(f"{fake_signal.base_url}/api/v1/events?account=%2B1999") as resp:
            assert resp.status == 400


async def test_rpc_send_typing_receipt_attachment(fake_signal: FakeSignal) -> None:
    status, answer = await rpc(
        fake_signal, "send", recipient=["+15550000001"], message="hello", textStyle=["0:5:BOLD"]
    )
    assert status == 200
    result = answer["result"]
    assert result["results"][0]["type"] == "SUCCESS"
    assert fake_signal.sent == [
        {
            "to": "+15550000001",
            "text": "hello",
            "textStyle": ["0:5:BOLD"],
            "timestamp": result["timestamp"],
        }
    ]
    status, answer = await rpc(fake_signal, "send", groupId="R3JvdXA=", message="hi all")
    assert fake_signal.sent[-1]["to"] == "group:R3JvdXA="
    assert len(answer["result"]["results"]) == 2
    _, answer = await rpc(fake_signal, "sendTyping", recipient=["+15550000001"])
    assert "result" in answer
    _, answer = await rpc(
        fake_signal, "sendReceipt", recipient="+15550000001", targetTimestamp=[1], type="read"
    )
    assert "result" in answer
    att = fake_signal.add_attachment(b"\x00\x01", "image/png", "a.png")
    _, answer = await rpc(fake_signal, "getAttachment", id=att["id"])
    assert base64.b64decode(answer["result"]["data"]) == b"\x00\x01"
    _, answer = await rpc(fake_signal, "nope")
    assert answer["error"]["code"] == -32601


async def test_failures_and_errors(fake_signal: FakeSignal) -> None:
    fake_signal.fail_next("send", 503)
    status, _ = await rpc(fake_signal, "send", recipient=["+1"], message="x")
    assert status == 503
    fake_signal.fail_next(
        "send",
        200,
        {
            "result": {
                "timestamp": 1,
                "results": [
                    {
                        "recipientAddress": {"number": "+1"},
                        "type": "RATE_LIMIT_FAILURE",
                        "retryAfterSeconds": 3,
                    }
                ],
            }
        },
    )
    _, answer = await rpc(fake_signal, "send", recipient=["+1"], message="x")
    assert answer["result"]["results"][0]["type"] == "RATE_LIMIT_FAILURE"
    fake_signal.unregistered.add("+2")
    _, answer = await rpc(fake_signal, "send", recipient=["+2"], message="x")
    assert answer["result"]["results"][0]["type"] == "UNREGISTERED_FAILURE"
    assert fake_signal.sent == []
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{fake_signal.base_url}/api/v1/rpc", data="{}") as resp,
    ):
        assert resp.status == 415
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "send",
        "params": {"account": "+1999", "recipient": ["+1"], "message": "x"},
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{fake_signal.base_url}/api/v1/rpc", json=body) as resp,
    ):
        assert (await resp.json())["error"]["code"] == -32602
