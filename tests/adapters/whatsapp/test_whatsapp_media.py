"""Media out on WhatsApp (D78, D150, D156) against FakeWhatsApp: a tool's image leaves with the
reply as an uploaded photo with its caption, once; each item becomes the message kind the Cloud
API takes (a GIF or a 6 MB photo as a document, a voice note as audio marked `voice`); a file
over the document limit is a text naming it; the 24-hour window holds for files as for text."""

from __future__ import annotations

import pytest

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from core.engine.outbound.delivery import Outbound
from core.model.records import SessionQuery
from tests.adapters.whatsapp.helpers import ANN, DAY, Clock, gateway, started_runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call, tool_results
from tests.fakes.whatsapp import FakeWhatsApp

PNG = MediaItem(data=TINY_PNG, mime="image/png", name="chart.png", caption="Q3 sales")
MB = 1024 * 1024


async def _chart(env: object, ctx: object, args: object) -> WithMedia:
    return WithMedia({"status": "drawn"}, [PNG])


async def test_a_tools_image_arrives_once_as_a_photo(
    fake_whatsapp: FakeWhatsApp, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    rt.tools.register(ToolSpec("draw_chart", "Draw the chart.", ToolArgs, _chart))
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        fake_model.script(tool_call("draw_chart", {}), text("Here is your chart."))
        fake_whatsapp.user_message(ANN, "chart please")
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent_media) == 1, 60)
        [photo] = fake_whatsapp.sent_media
        assert (photo["to"], photo["kind"], photo["data"], photo["caption"]) == (
            ANN,
            "image",
            TINY_PNG,
            "Q3 sales",
        )
        [upload] = fake_whatsapp.calls_for("uploadMedia")
        assert upload.params == {"messaging_product": "whatsapp", "type": "image/png"}
        assert list(fake_whatsapp.upload_names.values()) == ["chart.png"]
        assert [m["text"] for m in fake_whatsapp.sent] == ["Here is your chart."]
        assert '"attached":true' in tool_results(fake_model.requests[1])[-1]["content"]
        [row] = await rt.store.list_deliveries()
        assert row.outcome == "delivered" and row.id is not None
        chunks = (await rt.store.chunks_of([row.id]))[row.id]
        assert [(c.state, c.media_id is not None) for c in chunks] == [
            ("sent", False),
            ("sent", True),
        ]
        assert chunks[1].platform_message_id == photo["id"]
    finally:
        await adapter.stop()
        await server.close()


async def test_each_item_goes_as_the_kind_whatsapp_takes(
    fake_whatsapp: FakeWhatsApp, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        fake_whatsapp.user_message(ANN, "hello")
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1, 30)
        [entry] = await rt.store.list_sessions(SessionQuery())
        items = [
            MediaItem(data=b"GIF89a...", mime="image/gif", name="cat.gif", caption="a cat"),
            MediaItem(data=b"\x89PNG" + b"x" * 6 * MB, mime="image/png", name="big.png"),
            MediaItem(data=b"OggS voice", mime="audio/ogg", name="reply.ogg", voice=True),
            MediaItem(data=b"ID3 song", mime="audio/mpeg", name="song.mp3", caption="listen"),
            MediaItem(data=b"%PDF-1.4", mime="application/pdf", name="r.pdf", caption="report"),
        ]
        result = await rt.gate.deliver(Outbound("", "notice", entry.key, media=items))
        assert result.outcome == "delivered", result.reason
        shown = [
            (m["kind"], m["filename"], m["caption"], m["voice"]) for m in fake_whatsapp.sent_media
        ]
        assert shown == [
            ("document", "cat.gif", "a cat", False),  # only JPEG and PNG are photos
            ("document", "big.png", None, False),  # a photo is at most 5 MB
            ("audio", None, None, True),  # a voice note: play button and waveform
            ("document", "song.mp3", "listen", False),  # audio messages carry no caption
            ("document", "r.pdf", "report", False),
        ]
        assert adapter.media_limit_for(items[1]) == 100 * MB
    finally:
        await adapter.stop()
        await server.close()


@pytest.mark.timeout(120)
async def test_a_file_over_the_document_limit_is_a_text_naming_it(
    fake_whatsapp: FakeWhatsApp, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    """D150 on WhatsApp: 100 MB (a document's limit); the chat reads why, Graph is not asked."""
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        fake_whatsapp.user_message(ANN, "hello")
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1, 30)
        [entry] = await rt.store.list_sessions(SessionQuery())
        huge = MediaItem(data=bytes(100 * MB + 1), mime="video/mp4", name="film.mp4")
        result = await rt.gate.deliver(Outbound("", "notice", entry.key, media=[huge]))
        assert result.outcome == "delivered", result.reason
        assert fake_whatsapp.sent[-1]["text"] == (
            "📎 film.mp4 (100.0 MB) is too big to send here (limit 100.0 MB)."
        )
        assert fake_whatsapp.calls_for("uploadMedia") == [] and fake_whatsapp.sent_media == []
    finally:
        await adapter.stop()
        await server.close()


async def test_a_file_outside_the_window_fails_without_an_upload(
    fake_whatsapp: FakeWhatsApp, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    clock = Clock()
    fake_whatsapp.clock = clock
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp, {"clock": clock})
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        fake_whatsapp.user_message(ANN, "hello")
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1, 30)
        [entry] = await rt.store.list_sessions(SessionQuery())
        clock.now += DAY + 60
        result = await rt.gate.deliver(Outbound("", "notice", entry.key, media=[PNG]))
        assert result.outcome == "failed"
        assert result.reason is not None and result.reason.startswith("OutsideServiceWindow:")
        assert fake_whatsapp.calls_for("uploadMedia") == []
    finally:
        await adapter.stop()
        await server.close()
