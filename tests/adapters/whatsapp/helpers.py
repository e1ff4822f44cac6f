"""What the WhatsApp adapter tests share: a recording inbox, a settable clock, and the adapter
served on its own or on the real gateway app."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from adapters.whatsapp.adapter import WhatsAppAdapter
from adapters.whatsapp.spec import WhatsAppAccountConfig
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.whatsapp import FakeWhatsApp

ANN = "4915100000001"
DAY = 24 * 3600


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def account(fake: FakeWhatsApp, **over: Any) -> WhatsAppAccountConfig:
    return WhatsAppAccountConfig.model_validate(fake.config(**over))


async def serve(fake: FakeWhatsApp, *adapters: WhatsAppAdapter) -> TestServer:
    app = web.Application()
    for adapter in adapters:
        adapter.mount(app)
    server = TestServer(app)
    await server.start_server()
    fake.webhook_url = str(server.make_url("/whatsapp/webhook"))
    return server


async def gateway(rt: Runtime, fake: FakeWhatsApp, adapter: WhatsAppAdapter) -> TestServer:
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    fake.webhook_url = str(server.make_url("/whatsapp/webhook"))
    return server


async def started_runtime(
    make_runtime: RuntimeFactory, fake: FakeWhatsApp, adapter_kw: dict[str, Any] | None = None
) -> tuple[Runtime, WhatsAppAdapter]:
    rt = await make_runtime(
        {"channels": {"whatsapp": {**fake.config(), "dmPolicy": "open", "streaming": "off"}}}
    )
    section = rt.config.channels.whatsapp
    [(account_id, acc)] = section.iter_accounts()
    adapter = WhatsAppAdapter(acc, account_id, **(adapter_kw or {}))
    await rt.add_adapter(adapter)
    return rt, adapter


async def is_true(value: bool) -> bool:
    """`eventually` awaits its condition: a plain check, made awaitable."""
    return value
