"""Media out on Signal (D78, D150, D157) against FakeSignal (signal-cli's JSON-RPC): a tool's
image leaves with the reply as one message carrying the file and its caption, once; a voice note
goes as audio without a file name (how Signal's apps send one); groups take files too; a file
over Signal's 100 MB is a text naming it, and signal-cli is not asked."""

from __future__ import annotations

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from core.engine.outbound.delivery import Outbound
from core.model.delivery_context import DeliveryContext
from tests.adapters.signal.runtime import ANN, GROUP, signal_runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.fakes.signal import FakeSignal
from tests.polling import eventually

PNG = MediaItem(data=TINY_PNG, mime="image/png", name="chart.png", caption="Q3 sales")
MB = 1024 * 1024


async def _chart(env: object, ctx: object, args: object) -> WithMedia:
    return WithMedia({"status": "drawn"}, [PNG])


async def test_a_tools_image_arrives_once_with_its_caption(
    fake_signal: FakeSignal, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await signal_runtime(make_runtime, fake_signal)
    rt.tools.register(ToolSpec("draw_chart", "Draw the chart.", ToolArgs, _chart))
    try:
        fake_model.script(tool_call("draw_chart", {}), text("Here is your chart."))
        fake_signal.user_message(ANN, "chart please")
        await fake_signal.wait_until(lambda: len(fake_signal.sent_media) == 1, 60)
        [photo] = fake_signal.sent_media
        assert (photo["to"], photo["mime"], photo["filename"], photo["data"]) == (
            ANN,
            "image/png",
            "chart.png",
            TINY_PNG,
        )
        assert photo["caption"] == "Q3 sales"
        assert [m["text"] for m in fake_signal.sent] == ["Here is your chart."]

        async def delivered() -> bool:
            rows = await rt.store.list_deliveries()
            return len(rows) == 1 and rows[0].outcome == "delivered"

        await eventually(delivered, 10, "the reply's delivery settled")
        [row] = await rt.store.list_deliveries()
        assert row.id is not None
        chunks = (await rt.store.chunks_of([row.id]))[row.id]
        assert [c.media_id is not None for c in chunks] == [False, True]
        assert chunks[1].platform_message_id == str(photo["timestamp"])
    finally:
        await adapter.stop()


async def test_voice_notes_groups_and_the_size_limit(
    fake_signal: FakeSignal, make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await signal_runtime(make_runtime, fake_signal)
    try:
        note = MediaItem(data=b"OggS voice", mime="audio/ogg", name="reply.ogg", voice=True)
        group = DeliveryContext(channel="signal", to=f"group:{GROUP}")
        result = await rt.gate.deliver(Outbound("", "notice", None, target=group, media=[note]))
        assert result.outcome == "delivered", result.reason
        [voice] = fake_signal.sent_media
        assert (voice["to"], voice["mime"], voice["filename"], voice["caption"]) == (
            f"group:{GROUP}",
            "audio/ogg",
            None,  # no file name: Signal's apps show it as a voice note
            None,
        )
        huge = MediaItem(data=bytes(100 * MB + 1), mime="video/mp4", name="film.mp4")
        dm = DeliveryContext(channel="signal", to=ANN)
        result = await rt.gate.deliver(Outbound("", "notice", None, target=dm, media=[huge]))
        assert result.outcome == "delivered", result.reason
        assert fake_signal.sent[-1]["text"] == (
            "📎 film.mp4 (100.0 MB) is too big to send here (limit 100.0 MB)."
        )
        assert len(fake_signal.sent_media) == 1  # signal-cli was not asked
    finally:
        await adapter.stop()


async def test_a_file_to_someone_not_on_signal_is_a_failed_delivery(
    fake_signal: FakeSignal, make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await signal_runtime(make_runtime, fake_signal)
    try:
        fake_signal.unregistered.add("+15550000077")
        target = DeliveryContext(channel="signal", to="+15550000077")
        result = await rt.gate.deliver(Outbound("", "notice", None, target=target, media=[PNG]))
        assert result.outcome == "failed"
        assert result.reason is not None and "UNREGISTERED_FAILURE" in result.reason
        assert fake_signal.sent_media == []
    finally:
        await adapter.stop()
