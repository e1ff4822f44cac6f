"""Media out (D78): one chunk per item after the text's, stored first, sent by `send_media`,
a text naming the file where the platform cannot take it (D150), settled after a crash (D16)."""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.engine.outbound.delivery import Outbound
from core.engine.outbound.gate import send_media_chunk
from core.engine.outbound.recovery import DeliveryDuties, reconcile_delivery
from core.model.channel import ChunkRef
from core.model.delivery_context import DeliveryContext
from core.model.media import MediaItem
from core.runtime import Runtime
from core.store import DeliveryRecord, now_ms
from tests.conftest import RuntimeFactory

KEY = "agent:main:testchat:direct:u1"
PNG = MediaItem(data=b"\x89PNG" + b"x" * 2000, mime="image/png", name="chart.png", caption="Q3")


async def _runtime(make_runtime: RuntimeFactory, adapter: RecordingAdapter) -> Runtime:
    rt = await make_runtime(adapters=[adapter])
    await rt.services.ensure_session(KEY, channel="testchat", chat_type="direct")
    await rt.store.update_session(
        KEY, last_channel="testchat", last_to="u1", last_account_id="default"
    )
    return rt


async def test_text_then_each_item_once_and_logged(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    rt = await _runtime(make_runtime, adapter)
    result = await rt.gate.deliver(Outbound("Here is the chart", "reply", KEY, media=[PNG]))
    assert result.outcome == "delivered"
    assert adapter.texts() == ["Here is the chart"]
    [(_, sent)] = adapter.media
    assert (sent.data, sent.name, sent.caption, sent.id is not None) == (
        PNG.data,
        "chart.png",
        "Q3",
        True,
    )
    assert result.delivery_id is not None
    chunks = (await rt.store.chunks_of([result.delivery_id]))[result.delivery_id]
    assert [(c.text, c.state, c.media_id) for c in chunks] == [
        ("Here is the chart", "sent", None),
        ("[image: chart.png, 2 KB]", "sent", sent.id),
    ]
    [row] = [d for d in await rt.store.list_deliveries() if d.id == result.delivery_id]
    assert row.text == "Here is the chart\n[image: chart.png, 2 KB]"
    assert (await rt.store.media_by_id([sent.id or ""]))[sent.id or ""].data == PNG.data


async def test_too_big_or_no_media_becomes_a_text_naming_the_file(
    make_runtime: RuntimeFactory,
) -> None:
    adapter = RecordingAdapter()
    adapter.media_limit = 1024
    rt = await _runtime(make_runtime, adapter)
    await rt.gate.deliver(Outbound("", "reply", KEY, media=[PNG]))
    assert adapter.media == []
    assert adapter.texts() == ["📎 chart.png (2 KB) is too big to send here (limit 1 KB)."]
    adapter.media_limit = 0  # a channel without media
    await rt.gate.deliver(Outbound("see", "reply", KEY, media=[PNG]))
    assert adapter.texts()[1:] == [
        "see",
        "📎 chart.png (2 KB) could not be sent: this chat takes no files.",
    ]


async def test_policy_denies_media_like_text(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    rt = await _runtime(make_runtime, adapter)
    await rt.store.update_session(KEY, send_policy="deny")
    result = await rt.gate.deliver(Outbound("x", "reply", KEY, media=[PNG]))
    assert result.outcome == "suppressed_by_policy"
    assert adapter.media == [] and adapter.sent == []


async def test_an_in_doubt_item_is_resent_once_and_marked(make_runtime: RuntimeFactory) -> None:
    """Killed after the platform took the photo, before its receipt was written (D16)."""
    adapter = RecordingAdapter()
    rt = await _runtime(make_runtime, adapter)
    [item] = await rt.store.save_media([PNG], run_id=None, session_key=KEY)
    target = DeliveryContext(channel="testchat", to="u1", account_id="default")
    rec = DeliveryRecord(
        kind="reply",
        outcome="pending",
        text="hi",
        created_at=now_ms() - 1000,
        channel="testchat",
        to="u1",
        account_id="default",
        session_key=KEY,
    )
    delivery_id = await rt.store.open_delivery(rec, ["hi", item.placeholder()], [None, item.id])
    await rt.store.mark_chunk(delivery_id, 0, "sent", message_id="1")
    await send_media_chunk(adapter, target, item, ChunkRef(delivery_id, 1))  # then: killed
    [rec] = [d for d in await rt.store.pending_deliveries(now_ms()) if d.id == delivery_id]
    duties = DeliveryDuties(rt.config, rt.store, rt.gate, rt.channels)
    assert await reconcile_delivery(duties, rec, wait=1) == "resent_after_crash"
    assert [m.data for _, m in adapter.media] == [PNG.data, PNG.data]  # at most twice, marked
    chunks = (await rt.store.chunks_of([delivery_id]))[delivery_id]
    assert [c.state for c in chunks] == ["sent", "resent_after_crash"]
