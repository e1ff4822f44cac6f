"""The WhatsApp adapter against FakeWhatsApp: read receipts with typing (D163), media in,
start-up errors and retries, a 500 recorded not retried (D16), reply chunks that fit (D161).
The webhook and the 24-hour window have their own modules; the shared behaviour (pairing,
allowlists, formatting, redelivery, 429/503) is in tests/adapters/conformance."""

from __future__ import annotations

import asyncio

import pytest

from adapters.whatsapp.adapter import WhatsAppAdapter
from core.model.errors import ChannelUnavailable
from tests.adapters.inbox import Inbox
from tests.adapters.whatsapp.helpers import ANN, account, is_true, serve
from tests.fakes.whatsapp import FakeWhatsApp
from tests.polling import eventually

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
        await eventually(lambda: is_true(adapter.status().state == "connected"))
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
