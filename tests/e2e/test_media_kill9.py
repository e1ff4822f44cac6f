"""A tool returning an image, across a kill -9 (D78, D151, D16): a real gateway process runs the
turn (the fake model calls the MCP server's `chart`, which returns a PNG), sends the reply's text
and then the image; the platform fake shows the image and holds its answer, and the process is
SIGKILLed before the receipt. The restarted gateway settles the in-doubt item under D16's rules:
Discord's upload carries the chunk's nonce and comes back as the same message (one image);
Telegram, Slack, WhatsApp, Signal and email cannot look an upload up, so it is sent once more
and logged `resent_after_crash` (never a third time). The reply's text is shown once everywhere."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import aiosmtplib
import pytest

from core.store import DeliveryRecord, Store
from tests.e2e.chart_gateway import REPLY, chart_config
from tests.fakes.base import EmulatorServer
from tests.fakes.discord import FakeDiscord
from tests.fakes.mailserver import MailServer
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp
from tests.gateway_process import GatewayProcess, free_port
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@dataclass
class Platform:
    """One platform fake: its config, how a person asks, what the bot showed."""

    fake: EmulatorServer
    held: str  # the fake's name for the media send whose answer is held
    yaml: Callable[[], str]
    ask: Callable[[str], Awaitable[None]]
    images: Callable[[], list[bytes]]
    texts: Callable[[], list[str]]
    outcome: str  # the delivery's outcome once settled
    sent: int  # how often the image reaches the chat


def _telegram() -> Platform:
    tg = FakeTelegram()

    async def ask(said: str) -> None:
        tg.user_message(42, said)

    return Platform(
        tg,
        "sendPhoto",
        lambda: (
            "channels:\n  telegram:\n    streaming: 'off'\n    owners: ['42']\n"
            f'    botToken: "{tg.token}"\n    apiBaseUrl: {tg.base_url}\n'
        ),
        ask,
        lambda: [bytes(m["data"]) for m in tg.media if m["method"] == "sendPhoto"],
        lambda: [str(c.params["text"]) for c in tg.calls_for("sendMessage") if c.status == 200],
        "resent_after_crash",
        2,
    )


def _slack() -> Platform:
    sl = FakeSlack()

    async def ask(said: str) -> None:
        await sl.queue_event(sl.message_event("D0DM0009", said, user="U0USER001"))

    return Platform(
        sl,
        "files.completeUploadExternal",
        lambda: (
            "channels:\n  slack:\n    streaming: 'off'\n    owners: [U0USER001]\n"
            f"    botToken: {sl.bot_token}\n    appToken: {sl.app_token}\n"
            f"    apiBaseUrl: {sl.base_url}\n"
        ),
        ask,
        lambda: [bytes(u["data"]) for u in sl.uploads],
        lambda: [str(m["text"]) for m in sl.posted if not m.get("files")],
        "resent_after_crash",
        2,
    )


def _discord() -> Platform:
    dc = FakeDiscord()

    async def ask(said: str) -> None:
        await dc.user_message(dc.DM_CHANNEL_ID, said)

    return Platform(
        dc,
        "upload",
        lambda: (
            "channels:\n  discord:\n    owners: ['800000000001']\n"
            f"    token: {dc.token}\n    apiBaseUrl: {dc.api_base}\n"
            f"    gatewayUrl: {dc.gateway_url}\n"
        ),
        ask,
        lambda: [bytes(u["data"]) for u in dc.uploads],
        lambda: [str(m["content"]) for m in dc.shown.values()],
        "delivered",
        1,
    )


def _whatsapp(port: int) -> Platform:
    wa = FakeWhatsApp()
    wa.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"  # the gateway under test

    async def ask(said: str) -> None:
        wa.user_message(ANN, said)

    return Platform(
        wa,
        "sendMedia",
        lambda: (
            f"channels:\n  whatsapp:\n    owners: ['{ANN}']\n"
            f'    phoneNumberId: "{wa.phone_number_id}"\n'
            f"    accessToken: {wa.token}\n    appSecret: {wa.app_secret}\n"
            f"    verifyToken: {wa.verify_token}\n    apiBaseUrl: {wa.api_base}\n"
        ),
        ask,
        lambda: [bytes(m["data"]) for m in wa.sent_media if m["kind"] == "image"],
        lambda: [str(m["text"]) for m in wa.sent],
        "resent_after_crash",
        2,
    )


def _signal() -> Platform:
    sg = FakeSignal()

    async def ask(said: str) -> None:
        sg.user_message("+15550000001", said)

    return Platform(
        sg,
        "sendMedia",
        lambda: (
            "channels:\n  signal:\n    owners: ['+15550000001']\n"
            f'    account: "{sg.account}"\n    httpUrl: {sg.base_url}\n'
        ),
        ask,
        lambda: [bytes(m["data"]) for m in sg.sent_media],
        lambda: [str(m["text"]) for m in sg.sent],
        "resent_after_crash",
        2,
    )


def _email() -> Platform:
    mail = MailServer()
    bot, owner = "bot@example.org", "alice@example.org"

    async def ask(said: str) -> None:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = owner, bot, "Chart"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(said)
        await aiosmtplib.send(msg, hostname="127.0.0.1", port=mail.smtp_port, start_tls=False)

    def bot_mail() -> list[EmailMessage]:
        return [m for m in mail.sent() if bot in str(m["From"])]

    def plain(m: EmailMessage) -> str:
        part = m.get_body(("plain",))
        return str(part.get_content()).strip() if part is not None else ""

    return Platform(
        mail,
        "sendMedia",
        lambda: (
            f"channels:\n  email:\n    owners: ['{owner}']\n    from: {bot}\n"
            "    pollSeconds: 0.5\n"
            f"    imap: {{host: 127.0.0.1, port: {mail.imap_port}, username: {bot}, "
            f"password: {mail.password}, tls: none}}\n"
            f"    smtp: {{host: 127.0.0.1, port: {mail.smtp_port}, username: {bot}, "
            f"password: {mail.password}, tls: none}}\n"
        ),
        ask,
        lambda: [
            bytes(p.get_payload(decode=True))
            for m in bot_mail()
            for p in m.iter_attachments()
            if p.get_content_maintype() == "image"
        ],
        lambda: [plain(m) for m in bot_mail()],
        "resent_after_crash",
        2,
    )


ANN = "4915100000001"
PLATFORMS: dict[str, Callable[[int], Platform]] = {
    "telegram": lambda _: _telegram(),
    "slack": lambda _: _slack(),
    "discord": lambda _: _discord(),
    "whatsapp": _whatsapp,
    "signal": lambda _: _signal(),
    "email": lambda _: _email(),
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", sorted(PLATFORMS))
async def test_a_tools_image_is_sent_once_across_a_kill_minus_nine(
    name: str, tmp_path: Path
) -> None:
    port = free_port()
    platform = PLATFORMS[name](port)
    model = FakeModelServer()
    await model.start()
    await platform.fake.start()
    try:
        model.script(tool_call("calc__chart", {}), text(REPLY))
        cfg = chart_config(tmp_path, model, platform.yaml())
        platform.fake.hold_next(platform.held)
        async with GatewayProcess(cfg, port) as gw:
            await platform.ask("the chart, please")
            await platform.fake.wait_until(lambda: platform.held in platform.fake.held, 90)
            assert platform.images() == [TINY_PNG]  # shown; its receipt never comes back
            await gw.kill()
        store = Store(f"sqlite+aiosqlite:///{tmp_path / 'state'}/crosstalk.db", tmp_path)
        try:
            async with GatewayProcess(cfg, port):

                async def settled() -> DeliveryRecord | None:
                    rows = await store.list_deliveries()
                    done = [d for d in rows if d.outcome != "pending"]
                    return done[0] if rows and len(done) == len(rows) else None

                row = await eventually(settled, 60, f"{name}: the in-doubt image settled")
                await platform.fake.wait_until(lambda: len(platform.images()) >= platform.sent)
                assert row.outcome == platform.outcome, row.reason
                [delivery] = await store.list_deliveries()
                assert delivery.id == row.id and row.id is not None
                chunks = (await store.chunks_of([row.id]))[row.id]
                assert [c.media_id is not None for c in chunks] == [False, True]
                assert all(c.platform_message_id for c in chunks)
        finally:
            await store.close()
        assert platform.images() == [TINY_PNG] * platform.sent
        assert [t for t in platform.texts() if REPLY in t] == [REPLY]
    finally:
        await platform.fake.stop()
        await model.stop()
