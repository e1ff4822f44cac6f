"""Live feedback while a chat-facing run is active: "typing…" and a streamed preview.

Both go through the outbound gate (`OutboundGate.typing` / `OutboundGate.preview`), which
resolves the session's send policy, so a denied session gets neither. Typing is renewed every
`typing_interval` seconds (Telegram's indicator lasts about 5 s) until the run ends. Previews
are paced per adapter (`ChannelAdapter.preview_interval`, about one edit a second on the chat
platforms): the first text goes out at once, later deltas coalesce into one edit per interval,
and whatever is still pending when the run ends is dropped, because the final reply (delivered
by the router through `OutboundGate.deliver`) replaces the preview anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.engine.runs.contract import DeltaSink, RunOutcome, RunRequest
from core.model.delivery_context import DeliveryContext
from core.store import RunRecord

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.outbound.gate import OutboundGate

log = logging.getLogger(__name__)

Clock = Callable[[], float]


@dataclass(slots=True)
class _Stream:
    run_id: str
    session_key: str
    target: DeliveryContext
    interval: float
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    latest: str = ""
    shown: str | None = None
    last_sent: float | None = None
    preview_task: asyncio.Task[None] | None = None
    typing_task: asyncio.Task[None] | None = None


class LiveFeedback:
    def __init__(
        self,
        gate: OutboundGate,
        config: CrosstalkConfig,
        *,
        typing_interval: float = 4.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self.gate = gate
        self.config = config
        self.typing_interval = typing_interval
        self.clock = clock
        self._streams: dict[str, _Stream] = {}
        self._inflight: set[str] = set()
        self.refused = 0
        """Previews and typing the gate did not pass (policy, no adapter, platform error)."""

    # ---- wiring (RunManager hooks) -------------------------------------------------------

    def sink_for(self, run: RunRecord, request: RunRequest) -> DeltaSink | None:
        """Delta-sink factory: called when a run starts; starts typing, returns the preview
        sink (or ``None`` when the run is not delivered to a chat)."""
        target = request.context.origin
        if not request.deliver or target is None or not target.channel:
            return None
        adapter = self.gate.channels.get(target.channel, target.account_id)
        stream = _Stream(
            run.id, run.session_key, target, adapter.preview_interval if adapter else 1.0
        )
        self._streams[run.id] = stream
        self._inflight.add(run.id)
        stream.typing_task = asyncio.create_task(self._typing(stream), name=f"typing:{run.id}")
        if not self._streaming_on(target.channel):
            return None

        async def sink(text: str) -> None:
            await self._push(stream, text)

        return sink

    async def on_run_finished(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        """Listener that runs *before* the router delivers: typing stops, previews settle."""
        stream = self._streams.pop(run.id, None)
        if stream is None:
            return
        stream.stop.set()
        for task in (stream.typing_task, stream.preview_task):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if outcome.status != "ok" or not outcome.reply:  # the partial stays, marked ended
            await self.gate.end_preview(stream.target, run.id, outcome.status)

    async def on_run_paused(self, run: RunRecord, request: RunRequest, _questions: object) -> None:
        """A run that paused for people (D72): typing stops and its preview settles now."""
        outcome = RunOutcome(run.id, run.status)
        await self.on_run_finished(run, request, outcome)
        await self.on_run_settled(run, request, outcome)

    async def on_run_settled(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        """Listener that runs *after* the router delivered the run's reply."""
        self._inflight.discard(run.id)

    def settled(self) -> bool:
        """True when no delivered run is between its start and its final delivery."""
        return not self._inflight

    # ---- internals -----------------------------------------------------------------------

    def _streaming_on(self, channel: str) -> bool:
        section = getattr(self.config.channels, channel, None)
        return getattr(section, "streaming", "edit") != "off"

    async def _typing(self, stream: _Stream) -> None:
        while not stream.stop.is_set():
            try:
                if not await self.gate.typing(stream.session_key, stream.target):
                    self.refused += 1
            except Exception:  # typing is cosmetic; never let it end the run
                log.exception("typing indicator failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stream.stop.wait(), self.typing_interval)

    async def _push(self, stream: _Stream, text: str) -> None:
        stream.latest = text
        if stream.stop.is_set():
            return
        if stream.preview_task is None or stream.preview_task.done():
            stream.preview_task = asyncio.create_task(
                self._flush(stream), name=f"preview:{stream.run_id}"
            )

    async def _flush(self, stream: _Stream) -> None:
        """Send the latest text, at most once per interval, until nothing new is pending."""
        while stream.latest != stream.shown and not stream.stop.is_set():
            if stream.last_sent is not None:
                wait = stream.last_sent + stream.interval - self.clock()
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stream.stop.wait(), wait)
                    if stream.stop.is_set():
                        return  # the final reply replaces whatever was pending
            text = stream.latest
            try:
                if not await self.gate.preview(
                    stream.session_key, stream.target, stream.run_id, text
                ):
                    self.refused += 1
            except Exception:
                log.exception("preview failed")
            stream.shown, stream.last_sent = text, self.clock()
