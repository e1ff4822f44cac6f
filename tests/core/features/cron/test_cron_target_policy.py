"""An agent-made cron job cannot speak into a chat the owner muted (D140): the job's turn runs
(D15: `ok`), its delivery is suppressed and logged, nothing reaches the chat. On SQLite and
PostgreSQL: the muted chat is found in the store."""

from __future__ import annotations

import asyncio
from typing import Any

from core.config.schema_cron import CronJobConfig
from tests.core.features.cron.helpers import ClockedRuntime
from tests.fakes.clock import ManualClock

GROUP = "agent:main:testchat:group:room-1"


async def test_a_cron_job_into_a_muted_group_is_suppressed(
    db: dict[str, Any], clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, chat = await clocked_runtime(db)
    await rt.services.ensure_session(GROUP, chat_type="group")
    await rt.store.update_session(
        GROUP, last_channel="testchat", last_to="room-1", last_account_id="default"
    )
    await rt.store.update_session(GROUP, send_policy="deny")  # `/send off` in the group
    deliver = {"channel": "testchat", "to": "room-1"}
    spec = CronJobConfig.model_validate(
        {"id": "spam", "every": "10m", "message": "post", "deliver": deliver}
    )
    await rt.cron.add(spec, source="agent", owner_session=GROUP)
    _, task = await rt.cron.run_now("spam")
    await asyncio.wait_for(task, 30)
    assert chat.sent == []
    wire = rt.cron.wire(await rt.cron.get("spam"), runs=True)
    assert wire["lastStatus"] == "ok" and wire["runs"][0]["delivery"] == "suppressed_by_policy"
    [row] = await rt.store.list_deliveries(session_key="agent:main:cron:spam")
    assert (
        row.outcome == "suppressed_by_policy" and row.reason == f"target {GROUP}: session override"
    )
