"""D12: after a crash each chat whose turn was aborted hears it once; the flag clears later."""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.engine.outbound.restart_notice import RESTART_NOTICE
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer, delay, text
from tests.polling import eventually


async def test_aborted_chat_gets_one_notice_and_the_flag_clears(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    config = make_config()
    first = RecordingAdapter()
    rt = Runtime(config)
    await rt.start(adapters=[first], probe_models=False)
    fake_model.script(delay(30, text("never")))
    await first.inject(first.message("in flight"))
    await first.inject(first.message("queued behind it"))
    await fake_model.wait_for_requests(1)
    key = rt.router.session_key_for(first.message("x"))
    await rt.store.close()  # the process "dies": nothing records the end of the runs
    started: list[Runtime] = []
    try:
        second = RecordingAdapter()
        rt2 = Runtime(config)
        started.append(rt2)
        await rt2.start(adapters=[second], probe_models=False)
        # one notice for the chat, though two of its turns were lost, through the gate
        assert await second.wait_sent(1, timeout=30) == [RESTART_NOTICE]
        deliveries = await rt2.store.list_deliveries(session_key=key)
        assert [(d.kind, d.outcome, d.text) for d in deliveries] == [
            ("notice", "delivered", RESTART_NOTICE)
        ]
        entry = await rt2.store.get_session(key)
        assert entry is not None and entry.aborted_last_run is True
        # nothing acknowledged is lost: both inputs are in the transcript
        assert [m.plain_text() for m in await rt2.store.history(entry.session_id)] == [
            "in flight",
            "queued behind it",
        ]
        await rt2.stop()

        third = RecordingAdapter()  # a second restart: no new notice
        rt3 = Runtime(config)
        started.append(rt3)
        await rt3.start(adapters=[third], probe_models=False)
        fake_model.script(text("answered"))
        await third.inject(third.message("again"))
        assert await third.wait_sent(1, timeout=30) == ["answered"]

        async def cleared() -> bool:
            e = await rt3.store.get_session(key)
            return e is not None and e.aborted_last_run is False

        await eventually(cleared, what="abortedLastRun cleared")
        assert third.texts() == ["answered"]
    finally:
        for r in started:
            if r.started:
                await r.stop()
        await rt.background.cancel_all()
        await rt.runs.close()
