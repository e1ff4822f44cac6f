"""WhatsApp adapter (D77, D161–D163) against FakeWhatsApp: the webhook's verify challenge and
signatures on the real gateway app, the 24-hour window as a visible delivery outcome, read
receipts with typing, media in, statuses and start-up errors. The shared behaviour (pairing,
allowlists, formatting, redelivery, 429/503) is in tests/adapters/conformance."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from adapters.whatsapp.adapter import WhatsAppAdapter
from adapters.whatsapp.spec import WhatsAppAccountConfig
from core.edge.http.server import build_app
from core.engine.outbound.delivery import Outbound
from core.model.errors import ChannelUnavailable, TargetForbidden
from core.model.inbound import InboundMessage
from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.whatsapp import FakeWhatsApp
from tests.polling import eventually

ANN = "4915100000001"
DAY = 24 * 3600


class Inbox:
    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []

    async def __call__(self, msg: InboundMessage) -> None:
        self.messages.append(msg)


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


# -- the webhook ---------------------------------------------------------------------------


async def test_verify_challenge(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    try:
        client = server.make_url("/whatsapp/webhook")
        import aiohttp

        async with aiohttp.ClientSession() as http:
            ok = {
                "hub.mode": "subscribe",
                "hub.verify_token": fake_whatsapp.verify_token,
                "hub.challenge": "1158201444",
            }
            async with http.get(client, params=ok) as resp:
                assert (resp.status, await resp.text()) == (200, "1158201444")
            for bad in (
                {**ok, "hub.verify_token": "guess"},
                {**ok, "hub.mode": "unsubscribe"},
                {"hub.challenge": "x"},
            ):
                async with http.get(client, params=bad) as resp:
                    assert resp.status == 403
                    body = await resp.json()
                    assert "verification failed" in body["error"]["message"]
    finally:
        await server.close()


async def test_bad_or_missing_signature_is_401_and_nothing_is_stored(
    fake_whatsapp: FakeWhatsApp, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        payload = fake_whatsapp.user_message(ANN, "let me in", deliver=False)
        raw = json.dumps(payload).encode()
        assert (await fake_whatsapp.post_webhook(payload, signature=""))[0] == 401
        assert (await fake_whatsapp.post_webhook(payload, app_secret="not-the-secret"))[0] == 401
        tampered = raw.replace(b"let me in", b"evil twin")
        status, body = await fake_whatsapp.post_webhook(
            tampered, signature=fake_whatsapp_sig(fake_whatsapp, raw)
        )
        assert status == 401 and "X-Hub-Signature-256" in json.loads(body)["error"]["message"]
        assert await rt.store.list_sessions(SessionQuery(include_reserved=True)) == []
        assert fake_model.requests == []
        status, _ = await fake_whatsapp.post_webhook(payload)  # the real one
        assert status == 200
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1)
        assert fake_whatsapp.sent[0]["text"] == "echo: let me in"
        status, _ = await fake_whatsapp.post_webhook(b"{not json")
        assert status == 400
    finally:
        await adapter.stop()
        await server.close()


def fake_whatsapp_sig(fake: FakeWhatsApp, raw: bytes) -> str:
    from tests.fakes.whatsapp import sign

    return sign(raw, fake.app_secret)


async def test_webhook_before_start_is_retried_by_meta(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    inbox = Inbox()
    try:
        fake_whatsapp.user_message(ANN, "early")
        await fake_whatsapp.wait_for("webhook", 1)
        assert fake_whatsapp.posts[0][0] == 503 and fake_whatsapp.outbox  # kept for a retry
        await adapter.start(inbox)
        await fake_whatsapp.wait_delivered()
        [msg] = inbox.messages
        assert (msg.text, msg.chat_id, msg.sender_name) == ("early", ANN, "Ann")
        assert msg.identities[0].startswith("msg:wamid.")
    finally:
        await adapter.stop()
        await server.close()


async def test_statuses_reactions_and_other_numbers_start_nothing(
    fake_whatsapp: FakeWhatsApp,
) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    inbox = Inbox()
    await adapter.start(inbox)
    try:
        fake_whatsapp.deliver(
            fake_whatsapp.payload(statuses=[fake_whatsapp.status("wamid.OUT1", ANN, "delivered")])
        )
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[
                    fake_whatsapp.message(
                        ANN, kind="reaction", media={"message_id": "wamid.OUT1", "emoji": "👍"}
                    )
                ]
            )
        )
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[fake_whatsapp.message(ANN, "not ours")], phone_number_id="999"
            )
        )
        fake_whatsapp.user_message(ANN, "barrier")
        await fake_whatsapp.wait_delivered()
        assert [m.text for m in inbox.messages] == ["barrier"]
        assert all(status == 200 for status, _ in fake_whatsapp.posts)
    finally:
        await adapter.stop()
        await server.close()


async def test_two_numbers_share_the_route(fake_whatsapp: FakeWhatsApp) -> None:
    first = WhatsAppAdapter(account(fake_whatsapp))
    other_cfg = account(fake_whatsapp, phoneNumberId="222000333")
    second = WhatsAppAdapter(other_cfg, "work")
    fake_whatsapp.phone_numbers.add("222000333")
    server = await serve(fake_whatsapp, first, second)
    a, b = Inbox(), Inbox()
    await first.start(a)
    await second.start(b)
    try:
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[fake_whatsapp.message(ANN, "to work")], phone_number_id="222000333"
            )
        )
        fake_whatsapp.user_message(ANN, "to default")
        await fake_whatsapp.wait_delivered()
        assert [m.text for m in a.messages] == ["to default"]
        assert [(m.text, m.account_id) for m in b.messages] == [("to work", "work")]
    finally:
        await first.stop()
        await second.stop()
        await server.close()


# -- the 24-hour window ----------------------------------------------------------------------


async def test_reply_outside_the_window_fails_visibly_without_calling_graph(
    fake_whatsapp: FakeWhatsApp, make_runtime: RuntimeFactory
) -> None:
    clock = Clock()
    fake_whatsapp.clock = clock
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp, {"clock": clock})
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        fake_whatsapp.user_message(ANN, "hello")
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1)
        [entry] = await rt.store.list_sessions(SessionQuery())
        clock.now += DAY - 60  # still open
        assert adapter.window_open(ANN) is True
        result = await rt.gate.deliver(Outbound("just in time", "notice", entry.key))
        assert result.outcome == "delivered"
        clock.now += 120  # 24 h and a minute after the user's message
        sends = len(fake_whatsapp.calls_for("sendMessage"))
        result = await rt.gate.deliver(Outbound("too late", "notice", entry.key))
        assert result.outcome == "failed"
        assert result.reason is not None and result.reason.startswith("OutsideServiceWindow:")
        assert "24-hour customer-service window" in result.reason
        assert len(fake_whatsapp.calls_for("sendMessage")) == sends  # Graph never asked
        [row] = await rt.store.list_deliveries(outcome="failed")
        assert row.text == "too late" and row.reason == result.reason
        fake_whatsapp.user_message(ANN, "I'm back")  # the user writes: open again
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 3)
        assert fake_whatsapp.sent[-1]["text"] == "echo: I'm back"
    finally:
        await adapter.stop()
        await server.close()


async def test_graph_131047_is_a_failed_delivery(fake_whatsapp: FakeWhatsApp) -> None:
    """After a restart the adapter has not seen the user; Graph's own verdict counts."""
    fake_whatsapp.window_mode = "error"
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    await adapter.start(Inbox())
    try:
        from core.model.delivery_context import DeliveryContext

        with pytest.raises(TargetForbidden) as info:
            await adapter.send_text(DeliveryContext(channel="whatsapp", to=ANN), "hi")
        assert type(info.value).__name__ == "OutsideServiceWindow"
        assert "131047" in str(info.value) and "24-hour" in str(info.value)
    finally:
        await adapter.stop()


async def test_failed_status_closes_the_window(fake_whatsapp: FakeWhatsApp) -> None:
    """Graph accepted a send and reported it failed (131047) later: counted and logged, and
    the next reply fails at once instead of being accepted and lost again."""
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    await adapter.start(Inbox())
    try:
        from core.model.delivery_context import DeliveryContext

        target = DeliveryContext(channel="whatsapp", to=ANN)
        receipt = await adapter.send_text(target, "first contact")  # never wrote: accepted
        await fake_whatsapp.wait_delivered()
        await eventually(lambda: _true(adapter.late_failures == 1))
        assert receipt.message_id and fake_whatsapp.sent == []
        with pytest.raises(TargetForbidden, match="24-hour"):
            await adapter.send_text(target, "again")
    finally:
        await adapter.stop()
        await server.close()


async def _true(value: bool) -> bool:
    return value


async def test_a_later_failed_status_corrects_the_delivery_log(
    fake_whatsapp: FakeWhatsApp, make_runtime: RuntimeFactory
) -> None:
    """A cron or announce to someone this process never heard from: Graph accepts it, then
    reports 131047; the delivery that was `delivered` becomes `failed` with the reason (D166)."""
    from core.model.delivery_context import DeliveryContext

    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        target = DeliveryContext(channel="whatsapp", to=ANN, account_id="default")
        result = await rt.gate.deliver(Outbound("good morning", "cron", None, target=target))
        assert result.outcome == "delivered"  # what Graph said at first
        [wamid] = [r.message_id for r in result.receipts]

        async def corrected() -> bool:
            return bool(await rt.store.list_deliveries(outcome="failed"))

        await eventually(corrected)
        [row] = await rt.store.list_deliveries(outcome="failed")
        assert row.id == result.delivery_id and row.text == "good morning"
        assert row.reason is not None and row.reason.startswith("OutsideServiceWindow:")
        assert "reported by WhatsApp after sending" in row.reason

        assert row.id is not None
        [chunk] = (await rt.store.chunks_of([row.id]))[row.id]
        assert (chunk.state, chunk.platform_message_id) == ("failed", wamid)
        assert await rt.store.list_deliveries(outcome="delivered") == []
        # an unknown message id (sent before this database, say) changes nothing
        reports = adapter.delivery_reports
        assert reports is not None
        assert not await reports.failed("whatsapp", "default", "wamid.UNKNOWN", "x")
    finally:
        await adapter.stop()
        await server.close()


# -- typing, media, errors -----------------------------------------------------------------


async def test_typing_marks_the_message_read(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    await adapter.start(Inbox())
    try:
        from core.model.delivery_context import DeliveryContext

        target = DeliveryContext(channel="whatsapp", to=ANN)
        await adapter.send_typing(target)  # nothing received from Ann yet: nothing to show
        assert fake_whatsapp.calls_for("markRead") == []
        first = fake_whatsapp.user_message(ANN, "one")
        await fake_whatsapp.wait_delivered()
        await adapter.send_typing(target)
        await adapter.send_typing(target)  # renewed at most every 20 s
        [read] = fake_whatsapp.calls_for("markRead")
        wamid = first["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
        assert read.params == {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": wamid,
            "typing_indicator": {"type": "text"},
        }
        fake_whatsapp.user_message(ANN, "two")
        await fake_whatsapp.wait_delivered()
        await adapter.send_typing(target)  # a new message: read and typing again
        assert len(fake_whatsapp.calls_for("markRead")) == 2
    finally:
        await adapter.stop()
        await server.close()


async def test_media_arrives_as_an_attachment(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    inbox = Inbox()
    await adapter.start(inbox)
    try:
        photo = fake_whatsapp.add_media(b"\xff\xd8jpegbytes", "image/jpeg")
        voice = fake_whatsapp.add_media(b"OggS", "audio/ogg; codecs=opus")
        doc = fake_whatsapp.add_media(b"%PDF", "application/pdf")
        fake_whatsapp.user_message(
            ANN, "look", kind="image", media={"id": photo, "mime_type": "image/jpeg"}
        )
        fake_whatsapp.user_message(
            ANN,
            None,  # type: ignore[arg-type]
            kind="audio",
            media={"id": voice, "mime_type": "audio/ogg; codecs=opus", "voice": True},
        )
        fake_whatsapp.user_message(
            ANN,
            None,  # type: ignore[arg-type]
            kind="document",
            media={"id": doc, "mime_type": "application/pdf", "filename": "report.pdf"},
        )
        await fake_whatsapp.wait_delivered()
        image, note, pdf = inbox.messages
        [att] = image.attachments
        assert (image.text, att.kind, att.mime, att.file_id) == (
            "look",
            "image",
            "image/jpeg",
            photo,
        )
        assert await adapter.fetch_attachment(att) == b"\xff\xd8jpegbytes"
        assert (note.text, note.attachments[0].kind) == ("", "voice")
        assert (pdf.attachments[0].kind, pdf.attachments[0].name) == ("file", "report.pdf")
        [info, download] = [
            c for c in fake_whatsapp.calls if c.method in ("getMedia", "downloadMedia")
        ]
        assert info.token == download.token == fake_whatsapp.token
    finally:
        await adapter.stop()
        await server.close()


async def test_bad_token_or_missing_settings_fail_the_start(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp, accessToken="EAAwrong"), "work")
    with pytest.raises(ChannelUnavailable, match="whatsapp account work") as info:
        await adapter.start(Inbox())
    assert "accessToken" in str(info.value)
    assert adapter.status().state == "failed"
    assert fake_whatsapp.token not in str(info.value) and "EAAwrong" not in str(info.value)
    adapter = WhatsAppAdapter(account(fake_whatsapp, appSecret=None, verifyToken=None))
    with pytest.raises(ChannelUnavailable, match="appSecret, verifyToken"):
        await adapter.start(Inbox())


async def test_network_trouble_at_start_retries_in_the_background(
    fake_whatsapp: FakeWhatsApp,
) -> None:
    fake_whatsapp.fail_next("getPhoneNumber", 503, times=2)
    adapter = WhatsAppAdapter(account(fake_whatsapp), retry_initial=0.01)
    await adapter.start(Inbox())
    try:
        assert adapter.status().state == "retrying"
        await eventually(lambda: _true(adapter.status().state == "connected"))
        assert len(fake_whatsapp.calls_for("getPhoneNumber")) == 3
    finally:
        await adapter.stop()


async def test_a_500_is_recorded_not_retried(fake_whatsapp: FakeWhatsApp) -> None:
    """Graph may have sent before failing: a resend could show the reply twice (D16)."""
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    await adapter.start(Inbox())
    fake_whatsapp.user_message(ANN, "hi", deliver=False)
    try:
        from core.model.delivery_context import DeliveryContext

        fake_whatsapp.fail_next("sendMessage", 500)
        with pytest.raises(ChannelUnavailable, match="HTTP 500"):
            await adapter.send_text(DeliveryContext(channel="whatsapp", to=ANN), "x")
        assert len(fake_whatsapp.calls_for("sendMessage")) == 1
    finally:
        await adapter.stop()


async def test_long_reply_chunks_fit(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    md = "\n\n".join(f"**{i}** " + "word " * 300 for i in range(10))
    chunks = adapter.chunks(md)
    assert len(chunks) > 1 and all(len(c) <= 4096 for c in chunks)
    assert all(c.startswith("*") for c in chunks)
    await asyncio.sleep(0)
