"""Media out on every platform (D78): a reply's image arrives once as the platform's own photo
or file message; after a crash between the send and its receipt it is settled under D16's rules
(Telegram, WhatsApp, Signal, email: sent once more and marked `resent_after_crash`; platforms
with a nonce or a lookup: once). The crash is re-created in the store as in test_in_doubt (a
real kill -9 is tests/e2e/test_media_kill9.py). A file over the platform's limit is a text
naming it (D150)."""

from __future__ import annotations

import pytest

from adapters.base import ChunkRef
from core.engine.outbound.delivery import Outbound
from core.engine.outbound.gate import send_media_chunk
from core.model.delivery_context import DeliveryContext
from core.model.media import MediaItem, too_big_text
from core.store import DeliveryRecord, now_ms
from tests.adapters.conformance.drivers import Driver
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import TINY_PNG
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

PNG = MediaItem(data=TINY_PNG, mime="image/png", name="chart.png", caption="the chart")
#: how the platform shows a photo, and the outcome of an in-doubt photo after a restart
EXPECTED = {
    "telegram": ("photo", "resent_after_crash", 2),
    "discord": ("image", "delivered", 1),
    "slack": ("image", "resent_after_crash", 2),
    "whatsapp": ("image", "resent_after_crash", 2),
    "signal": ("image", "resent_after_crash", 2),
    "matrix": ("image", "delivered", 1),
    "email": ("image", "resent_after_crash", 2),
    "webchat": ("image", "", 0),
}

MB = 1024 * 1024
#: what each adapter sends at most, for a photo (D150, D156, D157)
LIMITS = {
    "telegram": 50 * MB,  # a photo over 10 MB goes as a document
    "discord": 10 * MB,
    "slack": 1024 * MB,
    "whatsapp": 100 * MB,
    "signal": 100 * MB,
    "matrix": 50 * MB,
    "email": 18 * MB,
    "webchat": 50 * MB,
}


async def _target(driver: Driver) -> DeliveryContext:
    await driver.dm("hello")
    [reply] = await driver.wait_replies(1, timeout=60)
    return DeliveryContext(
        channel=driver.channel,
        to=driver.address(reply),
        account_id="default",
        thread_id=reply.thread,
    )


async def test_a_reply_image_arrives_once(driver: Driver, make_runtime: RuntimeFactory) -> None:
    if not driver.media_out:
        pytest.skip(f"{driver.platform}: media are not sent here")
    rt = await driver.start(make_runtime)
    target = await _target(driver)
    result = await rt.gate.deliver(Outbound("Here:", "reply", None, target=target, media=[PNG]))
    assert result.outcome == "delivered", result.reason
    [(kind, data)] = await driver.wait_media(1)
    assert (kind, data) == (EXPECTED[driver.platform][0], TINY_PNG)
    assert [r.text for r in await driver.wait_replies(2, timeout=30)][1].startswith("Here:")


async def test_an_in_doubt_image_is_settled_after_a_restart(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    if not driver.media_out:
        pytest.skip(f"{driver.platform}: media are not sent here")
    rt = await driver.start(make_runtime)
    _, outcome, count = EXPECTED[driver.platform]
    if not count:
        pytest.skip(f"{driver.platform}: media go to live sockets only; nothing to settle")
    target = await _target(driver)
    [item] = await rt.store.save_media([PNG], run_id=None, session_key=None)
    rec = DeliveryRecord(
        kind="reply",
        outcome="pending",
        text=item.placeholder(),
        created_at=now_ms() - 1000,
        channel=target.channel,
        to=target.to,
        account_id="default",
    )
    delivery_id = await rt.store.open_delivery(rec, [item.placeholder()], [item.id])
    [adapter] = driver.adapters
    await send_media_chunk(adapter, target, item, ChunkRef(delivery_id, 0))  # then: killed
    await driver.wait_media(1)

    rt = await driver.restart(make_runtime, {"gateway": {"reconcileAfterSeconds": 0}})

    async def settled() -> DeliveryRecord | None:
        [row] = [d for d in await rt.store.list_deliveries() if d.id == delivery_id]
        return row if row.outcome != "pending" else None

    row = await eventually(settled)
    assert row.outcome == outcome, row.reason
    sent = await driver.wait_media(count)
    assert [d for _, d in sent] == [TINY_PNG] * count
    [chunk] = (await rt.store.chunks_of([delivery_id]))[delivery_id]
    assert chunk.platform_message_id and chunk.media_id == item.id


async def test_a_file_over_the_platforms_limit_is_a_text_naming_it(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    """D150 per platform: one byte over what the adapter sends (Telegram's 10 MB photos,
        Discord's 10 MB, WhatsApp's and Signal's 100 MB, Matrix's and the web chat's 50 MB, email's
    18 MB; Slack's 1 GB is
        not built here) arrives as the text naming the file, and the platform gets no upload."""
    if not driver.media_out:
        pytest.skip(f"{driver.platform}: media are not sent here")
    rt = await driver.start(make_runtime)
    [adapter] = driver.adapters
    probe = MediaItem(data=b"", mime="image/png", name="big.png")
    limit = adapter.media_limit_for(probe)
    assert limit == LIMITS[driver.platform]
    if limit > 100 * 1024 * 1024 + 1:
        pytest.skip(f"{driver.platform}: a {limit}-byte file is not built in a test")
    target = await _target(driver)
    big = MediaItem(data=bytes(limit + 1), mime="image/png", name="big.png")
    result = await rt.gate.deliver(Outbound("", "reply", None, target=target, media=[big]))
    assert result.outcome == "delivered", result.reason
    replies = await driver.wait_replies(2, timeout=30)
    assert replies[-1].text == too_big_text(big, limit)
    assert await driver.sent_media() == []


async def test_a_photo_too_big_for_a_photo_goes_as_a_file(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    """Telegram (sendPhoto: 10 MB) and WhatsApp (image: 5 MB) send a larger photo as a
    document rather than a line naming it (D150, D156)."""
    if driver.platform not in ("telegram", "whatsapp"):
        pytest.skip(f"{driver.platform}: one limit for photos and files")
    rt = await driver.start(make_runtime)
    target = await _target(driver)
    big = MediaItem(data=TINY_PNG + bytes(11 * MB), mime="image/png", name="big.png")
    result = await rt.gate.deliver(Outbound("", "reply", None, target=target, media=[big]))
    assert result.outcome == "delivered", result.reason
    [(kind, data)] = await driver.wait_media(1, timeout=30)
    assert (kind, data == big.data) == ("document", True)
