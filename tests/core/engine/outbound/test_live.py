"""Live feedback (core.engine.outbound.live): preview pacing, typing renewal, and the gate's say.

A real runtime with a recording adapter at the network edge. Pacing is shown with an injected
clock: nothing here waits for wall time to pass.
"""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.engine.outbound.delivery import Outbound
from core.engine.outbound.live import LiveFeedback
from core.engine.runs import RunOutcome, RunRequest
from core.model.delivery_context import DeliveryContext
from core.runtime import Runtime
from core.store import RunRecord, now_ms
from tests.conftest import RuntimeFactory
from tests.polling import eventually

KEY = "agent:main:testchat:direct:u1"
TARGET = DeliveryContext(channel="testchat", to="u1", account_id="default")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _setup(
    make_runtime: RuntimeFactory, clock: Clock | None = None, **extra: object
) -> tuple[Runtime, RecordingAdapter, LiveFeedback, RunRecord, RunRequest]:
    adapter = RecordingAdapter()
    rt = await make_runtime(dict(extra) or None, adapters=[adapter])
    entry = await rt.services.ensure_session(KEY)
    live = LiveFeedback(
        rt.gate, rt.config, typing_interval=3600, **({"clock": clock} if clock else {})
    )
    run = RunRecord(
        id="run-1",
        session_key=KEY,
        status="running",
        lane="main",
        deliver=True,
        created_at=now_ms(),
    )
    request = RunRequest(
        session_key=KEY,
        message="hi",
        deliver=True,
        context=rt.services.context_for(entry, origin=TARGET),
    )
    return rt, adapter, live, run, request


async def test_first_text_at_once_then_at_most_one_update_per_interval(
    make_runtime: RuntimeFactory,
) -> None:
    clock = Clock()
    rt, adapter, live, run, request = await _setup(make_runtime, clock)
    sink = live.sink_for(run, request)
    assert sink is not None
    await sink("Hel")
    await eventually(lambda: _ready(adapter.previews), what="first preview")
    for text in ("Hello", "Hello wo", "Hello world"):  # within the interval: held back
        await sink(text)
    assert adapter.previews == [("run-1", "Hel")]
    clock.now += adapter.preview_interval  # one interval later the newest text goes out
    await sink("Hello world!")
    await eventually(lambda: _ready(len(adapter.previews) == 2), what="second preview")
    assert adapter.previews[1] == ("run-1", "Hello world!")
    await sink("Hello world! More")  # pending when the run ends: dropped, the reply replaces it
    await live.on_run_finished(run, request, RunOutcome(run.id, "ok", reply="Hello world! More"))
    assert len(adapter.previews) == 2
    await rt.gate.deliver(Outbound("Hello world! More", "reply", KEY, target=TARGET, run_id=run.id))
    assert adapter.texts() == ["Hello world! More"]


async def test_typing_renewed_while_running_and_stopped_at_the_end(
    make_runtime: RuntimeFactory,
) -> None:
    rt, adapter, live, run, request = await _setup(make_runtime)
    live.typing_interval = 0.01
    live.sink_for(run, request)
    await eventually(lambda: _ready(len(adapter.typing) >= 3), what="typing renewals")
    await live.on_run_finished(run, request, RunOutcome(run.id, "ok", reply="done"))
    count = len(adapter.typing)
    await rt.gate.deliver(Outbound("done", "reply", KEY, target=TARGET, run_id=run.id))
    assert len(adapter.typing) == count  # the renewal task has ended, not merely paused
    assert live.settled() is False  # until the router's delivery listener has run
    await live.on_run_settled(run, request, RunOutcome(run.id, "ok", reply="done"))
    assert live.settled()


async def test_denied_session_gets_neither_preview_nor_typing(make_runtime: RuntimeFactory) -> None:
    rt, adapter, live, run, request = await _setup(make_runtime)
    await rt.store.update_session(KEY, send_policy="deny")
    live.typing_interval = 0.01
    sink = live.sink_for(run, request)
    assert sink is not None
    await sink("secret")
    await eventually(lambda: _ready(live.refused >= 3), what="refusals")  # typing renewals too
    await live.on_run_finished(run, request, RunOutcome(run.id, "ok", reply="secret"))
    assert adapter.previews == [] and adapter.typing == []


async def test_streaming_off_means_typing_only(make_runtime: RuntimeFactory) -> None:
    rt, _adapter, live, run, request = await _setup(make_runtime)
    rt.config.channels.webchat.streaming = "off"
    webchat = DeliveryContext(channel="webchat", to="owner", account_id="default")
    request.context = rt.services.context_for((await rt.store.get_session(KEY)), origin=webchat)  # type: ignore[arg-type]
    assert live.sink_for(run, request) is None
    await live.on_run_finished(run, request, RunOutcome(run.id, "ok", reply="x"))


async def _ready(value: object) -> object:
    return value
