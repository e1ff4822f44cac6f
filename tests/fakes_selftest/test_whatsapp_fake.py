"""FakeWhatsApp driven by a plain aiohttp client and a small webhook receiver on loopback:
Graph auth and error shapes, the 24-hour window, media, and Meta's signed, retried webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.fakes.whatsapp import FakeWhatsApp


class Receiver:
    """A bot's webhook endpoint: checks the signature the way Meta documents it."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.bodies: list[dict[str, Any]] = []
        self.answer = 200
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        want = "sha256=" + hmac.new(self.secret.encode(), raw, hashlib.sha256).hexdigest()
        if request.headers.get("X-Hub-Signature-256") != want:
            return web.Response(status=401)
        if self.answer != 200:
            return web.Response(status=self.answer)
        self.bodies.append(json.loads(raw))
        return web.Response(text="ok")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/whatsapp/webhook", self.handle)
        self.runner = web.AppRunner(app, shutdown_timeout=1)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/whatsapp/webhook"


@pytest.fixture
async def bot(fake_whatsapp: FakeWhatsApp) -> AsyncIterator[Receiver]:
    receiver = Receiver(fake_whatsapp.app_secret)
    await receiver.start()
    fake_whatsapp.webhook_url = receiver.url
    yield receiver
    assert receiver.runner is not None
    await receiver.runner.cleanup()


async def graph(
    fake: FakeWhatsApp, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token or fake.token}"}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, f"{fake.api_base}/{path}", json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json()


def text(to: str, body: str) -> dict[str, Any]:
    return {"messaging_product": "whatsapp", "to": to, "type": "text", "text": {"body": body}}


async def test_signed_webhook_is_retried_until_acknowledged(
    fake_whatsapp: FakeWhatsApp, bot: Receiver
) -> None:
    bot.answer = 503
    payload = fake_whatsapp.user_message("4915100000001", "hello", name="Ann")
    await fake_whatsapp.wait_for("webhook", 2)  # refused twice at least: still queued
    assert fake_whatsapp.outbox == [payload] and bot.bodies == []
    bot.answer = 200
    await fake_whatsapp.wait_delivered()
    [body] = bot.bodies
    value = body["entry"][0]["changes"][0]["value"]
    assert value["metadata"]["phone_number_id"] == fake_whatsapp.phone_number_id
    assert value["contacts"] == [{"profile": {"name": "Ann"}, "wa_id": "4915100000001"}]
    [msg] = value["messages"]
    assert msg["from"] == "4915100000001" and msg["text"] == {"body": "hello"}
    assert msg["id"].startswith("wamid.")
    status, _ = await fake_whatsapp.post_webhook(payload, signature="")  # no signature
    assert status == 401
    status, _ = await fake_whatsapp.post_webhook(payload, app_secret="wrong")
    assert status == 401


async def test_send_within_the_window_and_its_status(
    fake_whatsapp: FakeWhatsApp, bot: Receiver
) -> None:
    fake_whatsapp.user_message("4915100000001", "hi")
    status, body = await graph(
        fake_whatsapp,
        "POST",
        f"{fake_whatsapp.phone_number_id}/messages",
        text("4915100000001", "*hello*"),
    )
    assert status == 200
    [sent] = fake_whatsapp.sent
    assert sent == {"to": "4915100000001", "text": "*hello*", "id": body["messages"][0]["id"]}
    await fake_whatsapp.wait_delivered()
    statuses = [b["entry"][0]["changes"][0]["value"].get("statuses") for b in bot.bodies]
    assert statuses[1] == [
        {
            "id": sent["id"],
            "status": "sent",
            "recipient_id": "4915100000001",
            "timestamp": statuses[1][0]["timestamp"],
        }
    ]
    status, body = await graph(
        fake_whatsapp,
        "POST",
        f"{fake_whatsapp.phone_number_id}/messages",
        {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": "wamid.X",
            "typing_indicator": {"type": "text"},
        },
    )
    assert (status, body) == (200, {"success": True})
    [read] = fake_whatsapp.calls_for("markRead")
    assert read.params["typing_indicator"] == {"type": "text"}


@pytest.mark.parametrize("mode", ["status", "error"])
async def test_outside_the_window(fake_whatsapp: FakeWhatsApp, bot: Receiver, mode: str) -> None:
    now = [1_800_000_000.0]
    fake_whatsapp.clock = lambda: now[0]
    fake_whatsapp.window_mode = mode  # type: ignore[assignment]
    fake_whatsapp.user_message("4915100000002", "hi")
    now[0] += 24 * 3600
    status, body = await graph(
        fake_whatsapp,
        "POST",
        f"{fake_whatsapp.phone_number_id}/messages",
        text("4915100000002", "too late"),
    )
    assert fake_whatsapp.sent == []
    if mode == "error":
        assert status == 400 and body["error"]["code"] == 131047
        return
    assert status == 200  # accepted, then reported failed
    await fake_whatsapp.wait_delivered()
    [failed] = bot.bodies[-1]["entry"][0]["changes"][0]["value"]["statuses"]
    assert failed["status"] == "failed" and failed["id"] == body["messages"][0]["id"]
    assert failed["errors"][0]["code"] == 131047


async def test_auth_errors_media_and_injected_failures(fake_whatsapp: FakeWhatsApp) -> None:
    status, body = await graph(fake_whatsapp, "GET", fake_whatsapp.phone_number_id, token="wrong")
    assert status == 401 and body["error"]["code"] == 190
    status, body = await graph(fake_whatsapp, "GET", fake_whatsapp.phone_number_id)
    assert status == 200 and body["display_phone_number"] == fake_whatsapp.display_number
    media_id = fake_whatsapp.add_media(b"\x89PNG...", "image/png")
    status, info = await graph(fake_whatsapp, "GET", media_id)
    assert status == 200 and info["mime_type"] == "image/png" and info["file_size"] == 7
    async with aiohttp.ClientSession() as http:
        async with http.get(info["url"]) as resp:
            assert resp.status == 401  # the download needs the token too
        async with http.get(
            info["url"], headers={"Authorization": f"Bearer {fake_whatsapp.token}"}
        ) as resp:
            assert resp.status == 200 and await resp.read() == b"\x89PNG..."
    fake_whatsapp.user_message("4915100000003", "hi", deliver=False)
    fake_whatsapp.fail_next("sendMessage", 429, retry_after=0.5)
    status, body = await graph(
        fake_whatsapp,
        "POST",
        f"{fake_whatsapp.phone_number_id}/messages",
        text("4915100000003", "x"),
    )
    assert status == 429 and body["error"]["code"] == 130429
    status, _ = await graph(
        fake_whatsapp,
        "POST",
        f"{fake_whatsapp.phone_number_id}/messages",
        text("4915100000003", "x"),
    )
    assert status == 200 and len(fake_whatsapp.sent) == 1
