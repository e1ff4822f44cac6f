"""The WhatsApp 24-hour customer-service window (D162, D166) against FakeWhatsApp: a reply
outside it is a visible failed delivery without calling Graph, and Graph's 131047 (at once or
in a later status) is a failed delivery that closes the window."""

from __future__ import annotations

import pytest

from adapters.whatsapp.adapter import WhatsAppAdapter
from core.engine.outbound.delivery import Outbound
from core.model.errors import TargetForbidden
from core.model.records import SessionQuery
from tests.adapters.inbox import Inbox
from tests.adapters.whatsapp.helpers import (
    ANN,
    DAY,
    Clock,
    account,
    gateway,
    is_true,
    serve,
    started_runtime,
)
from tests.conftest import RuntimeFactory
from tests.fakes.whatsapp import FakeWhatsApp
from tests.polling import eventually

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
        await eventually(lambda: is_true(adapter.late_failures == 1))
        assert receipt.message_id and fake_whatsapp.sent == []
        with pytest.raises(TargetForbidden, match="24-hour"):
            await adapter.send_text(target, "again")
    finally:
        await adapter.stop()
        await server.close()


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
