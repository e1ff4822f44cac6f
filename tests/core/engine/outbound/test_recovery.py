"""A reply whose turn finished just before a crash, but which never reached the gate, is
delivered by the next start (decision D16: no silent loss)."""

from __future__ import annotations

import uuid

from core.api.testing import RecordingAdapter
from core.model.delivery_context import DeliveryContext
from core.store import RunRecord, TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory


async def test_orphan_reply_is_delivered_after_a_restart(make_runtime: RuntimeFactory) -> None:
    first = RecordingAdapter()
    rt = await make_runtime(adapters=[first])
    entry = await rt.services.ensure_session("agent:main:testchat:direct:u9")
    origin = DeliveryContext(channel="testchat", to="u9", account_id="default")
    run = RunRecord(
        id=str(uuid.uuid4()),
        session_key=entry.key,
        status="ok",
        lane="main",
        deliver=True,
        created_at=now_ms(),  # after this start
        meta={"origin": origin.model_dump()},
    )
    await rt.store.create_run(run)
    await rt.store.update_run(run.id, status="ok", ended_at=now_ms())
    await rt.store.append_messages(
        entry,
        [
            TranscriptMessage.text("user", "hi", now_ms(), run_id=run.id),
            TranscriptMessage.text("assistant", "the answer", now_ms(), run_id=run.id),
        ],
    )
    # ...and here the process died: no delivery row for the run
    await rt.stop()
    again = RecordingAdapter()
    rt2 = await make_runtime({"gateway": {"reconcileAfterSeconds": 0}}, adapters=[again])
    [(target, _)] = await again.wait_for("the answer")
    assert target.to == "u9" and first.sent == []
    [row] = await rt2.store.list_deliveries()
    assert row.run_id == run.id and row.outcome == "delivered"
    await rt2.stop()
    third = RecordingAdapter()
    rt3 = await make_runtime(adapters=[third])  # delivered once: not again on the next start
    await third.say("barrier")  # answered after the start-up recovery has run
    await third.wait_for("echo: barrier", timeout=20)
    assert third.texts() == ["echo: barrier"]
    assert [d.text for d in await rt3.store.list_deliveries()] == ["echo: barrier", "the answer"]
