"""Background duties of the exactly-once promise (decision D16), started with the runtime.

* settle the deliveries a dead process left in doubt (core.engine.outbound.recovery);
* forget inbound identities older than `gateway.dedupWindowDays`;
* reconnect a channel that has received nothing for `gateway.watchdogSeconds` although it
  claims to be connected (a long poll that hangs, a socket that stays open but goes silent).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from core.model.channel import ChannelAdapter
from core.store import now_ms

if TYPE_CHECKING:
    from core.engine.outbound.recovery import DeliveryParts

log = logging.getLogger(__name__)

PRUNE_EVERY = 3600.0


async def prune_loop(rt: DeliveryParts) -> None:
    window_ms = int(rt.config.gateway.dedup_window_days * 86_400_000)
    while True:
        removed = await rt.store.prune_claims(now_ms() - window_ms)
        if removed:
            log.info("forgot %d inbound identities older than the de-dup window", removed)
        await asyncio.sleep(PRUNE_EVERY)


async def check_channels(rt: DeliveryParts) -> list[str]:
    """One watchdog pass: reconnect connected channels silent for too long; returns them."""
    limit_ms = rt.config.gateway.watchdog_seconds * 1000
    now = now_ms()
    stale: list[str] = []
    for adapter in rt.channels:
        if type(adapter).restart_connection is ChannelAdapter.restart_connection:
            continue  # the client library watches its own connection (discord.py heartbeats)
        last = adapter.last_receive_ms
        if last is None or adapter.status().state != "connected" or now - last <= limit_ms:
            continue
        name = f"{adapter.channel}/{adapter.account_id}"
        silent = (now - last) / 1000
        log.warning("%s received nothing for %.0fs; reconnecting", name, silent)
        adapter.last_receive_ms = now  # one reconnect per silent period
        try:
            await adapter.restart_connection(f"silent for {silent:.0f}s")
        except Exception:
            log.exception("%s: reconnect failed", name)
        stale.append(name)
    return stale


async def watchdog_loop(rt: DeliveryParts) -> None:
    every = max(0.05, min(rt.config.gateway.watchdog_seconds / 4, 5.0))
    while True:
        await asyncio.sleep(every)
        await check_channels(rt)


async def run(rt: DeliveryParts, started_ms: int) -> None:
    """Everything above; returns only when cancelled with the runtime.

    Only deliveries opened before `started_ms` (by an earlier process) are reconciled.
    """
    from core.engine.outbound.recovery import deliver_orphan_replies, reconcile_pending

    tasks = [asyncio.create_task(prune_loop(rt)), asyncio.create_task(watchdog_loop(rt))]
    try:
        grace_ms = int(rt.config.gateway.reconcile_after_seconds * 1000)
        await reconcile_pending(rt, before_ms=started_ms, grace_ms=grace_ms)
        await deliver_orphan_replies(rt, before_ms=started_ms, grace_ms=grace_ms)
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
