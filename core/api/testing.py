"""Test doubles for plugin and channel authors (and our own tests, D91).

- :class:`RecordingAdapter`: a channel adapter that records what the outbound gate hands it and
  injects inbound messages as a platform would: the network edge, without a network.
- :class:`EchoTurns`: a turn executor that answers ``echo: <message>`` (stored like a model's
  reply), so a test needs no model server.
- :func:`test_gateway`: a started runtime (SQLite in a directory of yours, the installed
  plugins, both doubles above) to drive commands, tools and inbound steps through the real
  pipeline, runs and gate, as the runtime wires them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import validate_config
from core.model.approvals import Button
from core.model.channel import AdapterStatus, ChannelAdapter, ChunkRef, InboundSink, SendReceipt
from core.model.delivery_context import DeliveryContext
from core.model.errors import DeliveryError
from core.model.inbound import ChatType, InboundMessage
from core.model.media import MediaItem
from core.model.records import RunRecord, SessionEntry, TranscriptMessage
from core.runtime import Runtime
from core.store import Store, now_ms

if TYPE_CHECKING:
    from core.engine.runs import RunRequest
    from core.engine.runs.contract import DeltaSink, TurnResult
    from core.features.agent.env import TurnServices

__all__ = ["EchoTurns", "RecordingAdapter", "TestGateway", "test_gateway"]


class RecordingAdapter(ChannelAdapter):
    """Collects sent texts and media; `failures` are raised by the next sends, in order."""

    media_limit = 10 * 1024 * 1024

    def __init__(
        self, channel: str = "testchat", account_id: str = "default", text_limit: int = 4000
    ) -> None:
        self.channel = channel
        self.account_id = account_id
        self.text_limit = text_limit
        self.sent: list[tuple[DeliveryContext, str]] = []
        self.failures: list[DeliveryError] = []
        self.fail_text: dict[str, list[DeliveryError]] = {}  # raised when sending that text
        self.sink: InboundSink | None = None
        self.previews: list[tuple[str, str]] = []  # (run id, partial text)
        self.typing: list[DeliveryContext] = []
        self.buttons: dict[str, tuple[Button, ...]] = {}  # message id → its buttons (D72)
        self.edits: list[tuple[str, str]] = []  # (message id, new text)
        self.reactions: list[tuple[str, str | None]] = []  # (message id, emoji or None)
        self.media: list[tuple[DeliveryContext, MediaItem]] = []  # sent items (D78)
        self._changed = asyncio.Condition()

    async def start(self, sink: InboundSink) -> None:
        self.sink = sink

    async def stop(self) -> None:
        self.sink = None

    def status(self) -> AdapterStatus:
        return AdapterStatus(self.channel, self.account_id, "connected")

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        return await self._record(target, text)

    async def _record(self, target: DeliveryContext, text: str) -> SendReceipt:
        if self.failures:
            raise self.failures.pop(0)
        if self.fail_text.get(text):
            raise self.fail_text[text].pop(0)
        self.sent.append((target, text))
        async with self._changed:
            self._changed.notify_all()
        return SendReceipt(message_id=str(len(self.sent)))

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        if self.failures:
            raise self.failures.pop(0)
        self.media.append((target, media))
        async with self._changed:
            self._changed.notify_all()
        return SendReceipt(message_id=f"m{len(self.media)}")

    async def wait_media(self, count: int, timeout: float = 5.0) -> list[MediaItem]:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.media) >= count)
        return [m for _, m in self.media]

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        self.previews.append((run_id, text))

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        receipt = await self._record(target, text)
        self.buttons[receipt.message_id or ""] = buttons
        return receipt

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        self.edits.append((message_id, text))
        self.buttons.pop(message_id, None)
        async with self._changed:
            self._changed.notify_all()

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        self.reactions.append((message_id, emoji))

    async def press(
        self, message_id: str, label: str, *, sender_id: str, chat_id: str, press_id: str
    ) -> None:
        """Press a button under a sent message, as a platform's callback would (D72)."""
        command = next(b.command for b in self.buttons[message_id] if b.label == label)
        msg = self.message(command, chat_id=chat_id, sender_id=sender_id)
        await self.inject(
            msg.model_copy(
                update={"button": True, "identities": (f"{self.channel}:press:{press_id}",)}
            )
        )

    async def send_typing(self, target: DeliveryContext) -> None:
        self.typing.append(target)

    def texts(self, prefix: str = "") -> list[str]:
        return [t for _, t in self.sent if t.startswith(prefix)]

    async def wait_for(
        self, prefix: str = "", count: int = 1, timeout: float = 15.0
    ) -> list[tuple[DeliveryContext, str]]:
        """Wait (with a deadline) until `count` sent texts start with `prefix`."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.texts(prefix)) >= count)
        return [(c, t) for c, t in self.sent if t.startswith(prefix)]

    async def wait_sent(self, count: int, timeout: float = 15.0) -> list[str]:
        await self.wait_for("", count, timeout)
        return self.texts()

    def message(
        self,
        text: str,
        *,
        chat_id: str = "u1",
        sender_id: str | None = None,
        chat_type: ChatType = "direct",
        mentioned: bool = False,
        thread_id: str | None = None,
    ) -> InboundMessage:
        return InboundMessage(
            channel=self.channel,
            account_id=self.account_id,
            chat_type=chat_type,
            chat_id=chat_id,
            sender_id=sender_id or chat_id,
            text=text,
            mentioned=mentioned,
            thread_id=thread_id,
            reply_to=DeliveryContext(
                channel=self.channel, to=chat_id, account_id=self.account_id, thread_id=thread_id
            ),
        )

    async def inject(self, msg: InboundMessage) -> None:
        assert self.sink is not None, "adapter not started"
        await self.sink(msg)

    async def say(self, text: str, *, chat_id: str = "chat-1", sender: str = "owner-1") -> None:
        """A direct message from `sender` in chat `chat_id`, handed to the router."""
        await self.inject(self.message(text, chat_id=chat_id, sender_id=sender))


class EchoTurns:
    """Answers every turn with ``answer(message)`` (default ``echo: <message>``), stored in the
    transcript like a model's reply; `turns` lists the messages it answered."""

    def __init__(self, store: Store, answer: Callable[[str], str] | None = None) -> None:
        self.store = store
        self.answer = answer or (lambda message: f"echo: {message}")
        self.turns: list[str] = []

    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: DeltaSink | None
    ) -> TurnResult:
        from core.engine.runs.contract import TurnResult

        self.turns.append(request.message)
        reply = self.answer(request.message)
        await self.store.append_messages(
            entry, [TranscriptMessage.text("assistant", reply, now_ms(), run_id=run.id)]
        )
        return TurnResult(reply)


@dataclass(frozen=True, slots=True)
class TestGateway:
    """A started runtime, its recording channel and its echo turns."""

    runtime: Runtime
    adapter: RecordingAdapter
    turns: EchoTurns

    async def invoke(
        self, tool: str, args: Mapping[str, Any], *, session_key: str = "agent:main:main"
    ) -> dict[str, Any]:
        """Call a tool as the agent of `session_key` would (its context from the runtime)."""
        services = self.runtime.services
        entry = await services.ensure_session(session_key)
        return await self.runtime.tools.invoke(
            self.runtime.tool_env, tool, dict(args), services.context_for(entry)
        )


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


@asynccontextmanager
async def test_gateway(
    state_dir: Path,
    config: Mapping[str, Any] | None = None,
    *,
    channel: str = "testchat",
    answer: Callable[[str], str] | None = None,
) -> AsyncIterator[TestGateway]:
    """Start a gateway under `state_dir` (its SQLite database too) with `config` (the file's
    camelCase form), a :class:`RecordingAdapter` on `channel` and :class:`EchoTurns`."""
    base = {"gateway": {"stateDir": str(state_dir), "auth": {"token": "test"}}}
    raw = _merged(base, dict(config or {}))
    store = Store(f"sqlite+aiosqlite:///{state_dir}/gateway.db", state_dir)
    turns = EchoTurns(store, answer)

    def executor(env: TurnServices) -> EchoTurns:
        return turns

    runtime = Runtime(validate_config(raw), store=store, executor=executor)
    adapter = RecordingAdapter(channel=channel)
    await runtime.start(adapters=[adapter], probe_models=False)
    try:
        yield TestGateway(runtime, adapter, turns)
    finally:
        await runtime.stop()


test_gateway.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
TestGateway.__test__ = False  # type: ignore[attr-defined]
