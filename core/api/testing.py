"""Test doubles for plugin and channel authors (and our own tests).

:class:`RecordingAdapter` is a channel adapter that records what the outbound gate hands it
and injects inbound messages as a platform would: the network edge, without a network. Give it
to a runtime (``Runtime.start(adapters=[...])``) and drive a conversation through the real
router, runs, tools and gate.
"""

from __future__ import annotations

import asyncio

from core.model.channel import AdapterStatus, ChannelAdapter, InboundSink, SendReceipt
from core.model.delivery_context import DeliveryContext
from core.model.errors import DeliveryError
from core.model.inbound import ChatType, InboundMessage

__all__ = ["RecordingAdapter"]


class RecordingAdapter(ChannelAdapter):
    """Collects sent texts; `failures` are raised by the next sends, in order."""

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
        self._changed = asyncio.Condition()

    async def start(self, sink: InboundSink) -> None:
        self.sink = sink

    async def stop(self) -> None:
        self.sink = None

    def status(self) -> AdapterStatus:
        return AdapterStatus(self.channel, self.account_id, "connected")

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        if self.failures:
            raise self.failures.pop(0)
        if self.fail_text.get(text):
            raise self.fail_text[text].pop(0)
        self.sent.append((target, text))
        async with self._changed:
            self._changed.notify_all()
        return SendReceipt(message_id=str(len(self.sent)))

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        self.previews.append((run_id, text))

    async def send_typing(self, target: DeliveryContext) -> None:
        self.typing.append(target)

    def texts(self, prefix: str = "") -> list[str]:
        return [t for _, t in self.sent if t.startswith(prefix)]

    async def wait_for(
        self, prefix: str = "", count: int = 1, timeout: float = 10.0
    ) -> list[tuple[DeliveryContext, str]]:
        """Wait (with a deadline) until `count` sent texts start with `prefix`."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.texts(prefix)) >= count)
        return [(c, t) for c, t in self.sent if t.startswith(prefix)]

    async def wait_sent(self, count: int, timeout: float = 5.0) -> list[str]:
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
