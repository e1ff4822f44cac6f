"""Sends that survive platform faults (D142): a fault that may pass is retried with backoff,
then logged `failed`; a 429 met anywhere (a preview too) holds the chat for what the platform
asked; an enormous reply is cut with a note instead of becoming dozens of messages."""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.engine.outbound.delivery import Outbound
from core.model.delivery_context import DeliveryContext
from core.model.errors import ChannelUnavailable, RateLimited
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.retry_clock import FakeHold

KEY = "agent:main:testchat:group:g1"
CHAT = DeliveryContext(channel="testchat", to="g1", account_id="default")


async def _runtime(make_runtime: RuntimeFactory) -> tuple[Runtime, RecordingAdapter]:
    adapter = RecordingAdapter()
    rt = await make_runtime(adapters=[adapter])
    await rt.services.ensure_session(KEY, chat_type="group")
    await rt.store.update_session(
        KEY, last_channel="testchat", last_to="g1", last_account_id="default"
    )
    return rt, adapter


async def test_a_fault_that_passes_is_retried_with_backoff(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    hold = FakeHold(rt)
    adapter.failures = [ChannelUnavailable("HTTP 502"), ChannelUnavailable("HTTP 503")]
    result = await rt.gate.deliver(Outbound("hi", "reply", KEY))
    assert result.delivered and result.attempts == 3
    assert hold.slept == [1.0, 2.0]
    assert [t for _, t in adapter.sent] == ["hi"]


async def test_a_fault_that_stays_is_a_visible_failure(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    hold = FakeHold(rt)
    adapter.failures = [ChannelUnavailable("HTTP 500") for _ in range(10)]
    result = await rt.gate.deliver(Outbound("hi", "cron", KEY))
    assert result.outcome == "failed" and result.attempts == 4
    assert result.reason == "ChannelUnavailable: HTTP 500 (after 4 attempts)"
    assert hold.slept == [1.0, 2.0, 4.0]
    [row] = await rt.store.list_deliveries(outcome="failed")
    assert row.reason == result.reason and row.attempts == 4
    assert adapter.sent == []


async def test_a_rate_limit_on_a_preview_holds_the_chat_for_every_send(
    make_runtime: RuntimeFactory,
) -> None:
    rt, adapter = await _runtime(make_runtime)
    hold = FakeHold(rt)

    async def limited(target: DeliveryContext, run_id: str, text: str) -> None:
        raise RateLimited("Too Many Requests: retry after 5", 5.0)

    adapter.send_preview = limited  # type: ignore[method-assign]
    assert not await rt.gate.preview(KEY, CHAT, "run-1", "partial")
    assert rt.gate.retry.held("testchat|default|g1") == 5.0
    assert not await rt.gate.typing(KEY, CHAT)  # nothing more while held
    assert adapter.typing == []
    result = await rt.gate.deliver(Outbound("final", "reply", KEY, target=CHAT))
    assert result.delivered and hold.slept == [5.0]  # waited what Telegram asked
    hold.slept.clear()
    adapter.failures = [RateLimited("slow down", 1.0)]
    assert (await rt.gate.deliver(Outbound("again", "reply", KEY, target=CHAT))).delivered
    assert hold.slept == [1.0]


async def test_an_enormous_reply_is_cut_with_a_note(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    reply = " ".join(f"word{i:05d}" for i in range(30_000))  # 299,999 characters
    result = await rt.gate.deliver(Outbound(reply, "reply", KEY))
    texts = [t for _, t in adapter.sent]
    assert result.delivered and len(texts) == 5  # 16,000 characters in 4,000-character chunks
    assert texts[-1].endswith("✂️ Reply cut: it was 299,999 characters; a chat gets 16,000.")
    assert sum(len(t) for t in texts) < 16_200
