"""A chunk in doubt after a crash (decision D16): each platform settles it as well as it can.

The crash is re-created in the store exactly as a killed gateway leaves it: a delivery row that
is still `pending`, chunk 0 sent with its receipt, chunk 1 posted to the platform but killed
before its receipt was written, chunk 2 never sent. Then the gateway restarts.

* Discord: the resend carries the same nonce with `enforce_nonce`, so Discord returns the
  message it already has — chunk 1 appears once;
* Slack: the chunk's metadata is found in the channel, so it is not posted again;
* Telegram: there is no way to ask, so it is sent once more and marked `resent_after_crash`.
"""

from __future__ import annotations

import pytest

from adapters.base import ChunkRef
from core.engine.outbound.gate import send_chunk
from core.model.delivery_context import DeliveryContext
from core.store import DeliveryRecord, now_ms
from tests.adapters.conformance.drivers import Driver
from tests.conftest import RuntimeFactory
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

PARTS = ["part one", "part two", "part three"]
#: what the chat shows after the restart, and the delivery's outcome
EXPECTED = {
    "discord": (PARTS, "delivered", ["sent", "sent", "sent"]),
    "slack": (PARTS, "delivered", ["sent", "sent", "sent"]),
    "telegram": (
        ["part one", "part two", "part two", "part three"],
        "resent_after_crash",
        ["sent", "resent_after_crash", "sent"],
    ),
    # neither Graph nor signal-cli can be asked what was sent, nor takes an idempotency key
    "whatsapp": (
        ["part one", "part two", "part two", "part three"],
        "resent_after_crash",
        ["sent", "resent_after_crash", "sent"],
    ),
    "signal": (
        ["part one", "part two", "part two", "part three"],
        "resent_after_crash",
        ["sent", "resent_after_crash", "sent"],
    ),
    # SMTP cannot be asked either; the resend carries the same Message-ID
    "email": (
        ["part one", "part two", "part two", "part three"],
        "resent_after_crash",
        ["sent", "resent_after_crash", "sent"],
    ),
    # the same transaction id: the homeserver answers with the event it already has
    "matrix": (PARTS, "delivered", ["sent", "sent", "sent"]),
}


async def test_in_doubt_chunk_is_settled_after_a_restart(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    if driver.platform not in EXPECTED:
        pytest.skip(f"{driver.platform}: replies go to live sockets only; nothing to settle")
    shown, outcome, states = EXPECTED[driver.platform]
    rt = await driver.start(make_runtime)
    sent = await driver.dm("hello")
    [reply] = await driver.wait_replies(1)
    [adapter] = driver.adapters
    target = DeliveryContext(
        channel=driver.channel,
        to=driver.address(reply),
        account_id="default",
        thread_id=reply.thread,
    )
    rec = DeliveryRecord(
        kind="reply",
        outcome="pending",
        text="\n".join(PARTS),
        created_at=now_ms() - 1000,
        channel=target.channel,
        to=target.to,
        account_id="default",
    )
    delivery_id = await rt.store.open_delivery(rec, PARTS)
    first = await send_chunk(adapter, target, PARTS[0], ChunkRef(delivery_id, 0))
    await rt.store.mark_chunk(delivery_id, 0, "sent", message_id=first.message_id)
    await send_chunk(adapter, target, PARTS[1], ChunkRef(delivery_id, 1))  # then: killed
    await driver.wait_replies(3)

    rt = await driver.restart(make_runtime, {"gateway": {"reconcileAfterSeconds": 0}})

    async def settled() -> DeliveryRecord | None:
        [row] = [d for d in await rt.store.list_deliveries() if d.id == delivery_id]
        return row if row.outcome != "pending" else None

    row = await eventually(settled)
    assert row.outcome == outcome, row.reason
    replies = await driver.wait_replies(1 + len(shown))
    assert [r.text for r in replies] == ["echo: hello", *shown]
    assert all(r.chat == sent.chat for r in replies)
    chunks = (await rt.store.chunks_of([delivery_id]))[delivery_id]
    assert [c.state for c in chunks] == states
    assert all(c.platform_message_id for c in chunks)
