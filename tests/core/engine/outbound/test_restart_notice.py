"""D12, D81: after a crash each aborted turn's chat hears it once, naming that turn's message;
a turn that was queued and never started runs after the restart (SQLite as PostgreSQL); the
flag clears later."""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.engine.outbound.restart_notice import first_words, restart_notice
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
    fake_model.script(delay(30, text("never")), text("answered late"))
    await first.inject(first.message("in flight"))
    await first.inject(first.message("queued behind it"))
    await fake_model.wait_for_requests(1, timeout=30)
    await rt.store.close()  # the process "dies": nothing records the end of the runs
    started: list[Runtime] = []
    try:
        second = RecordingAdapter()
        rt2 = Runtime(config)
        started.append(rt2)
        await rt2.start(adapters=[second], probe_models=False)
        # the aborted turn's notice names its message; the queued one runs now
        notice = '⚠️ I was restarted while answering "in flight". Please send it again.'
        assert restart_notice("in flight") == notice
        sent = await second.wait_sent(2, timeout=30)
        assert sorted(sent) == sorted([notice, "answered late"])
        deliveries = await rt2.store.list_deliveries()
        key = deliveries[0].session_key or ""
        assert sorted((d.kind, d.outcome, d.text) for d in deliveries) == [
            ("notice", "delivered", notice),
            ("reply", "delivered", "answered late"),
        ]
        entry = await rt2.store.get_session(key)
        assert entry is not None
        # nothing acknowledged is lost: both inputs are in the transcript, the answer after
        assert [m.plain_text() for m in await rt2.store.history(entry.session_id)] == [
            "in flight",
            "queued behind it",
            "answered late",
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


def test_first_words_are_forty_characters_and_an_ellipsis() -> None:
    assert first_words("  short one  ") == "short one"
    assert first_words("x" * 40) == "x" * 40
    assert first_words("Please summarise the whole thread from yesterday") == (
        "Please summarise the whole thread from y…"
    )


async def test_each_aborted_turn_gets_its_own_notice(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    """Two chats, a turn cut short in each: each chat hears about its own message."""
    config = make_config()
    first = RecordingAdapter()
    rt = Runtime(config)
    await rt.start(adapters=[first], probe_models=False)
    fake_model.script(delay(30, text("never")), delay(30, text("never")))
    long = "Please summarise the whole thread from yesterday and the day before"
    await first.inject(first.message(long, chat_id="a", chat_type="group", mentioned=True))
    await first.inject(
        first.message("what time is it?", chat_id="b", chat_type="group", mentioned=True)
    )
    await fake_model.wait_for_requests(2, timeout=30)
    await rt.store.close()
    rt2 = Runtime(config)
    try:
        second = RecordingAdapter()
        await rt2.start(adapters=[second], probe_models=False)
        await second.wait_sent(2, timeout=30)
        by_chat = {target.to: text for target, text in second.sent}
        assert by_chat == {
            "a": restart_notice(long),
            "b": '⚠️ I was restarted while answering "what time is it?". Please send it again.',
        }
        assert by_chat["a"] == (
            '⚠️ I was restarted while answering "Please summarise the whole thread from y…". '
            "Please send it again."
        )
    finally:
        if rt2.started:
            await rt2.stop()
        await rt.background.cancel_all()
        await rt.runs.close()
