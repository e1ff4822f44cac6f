"""The inbound pipeline's `transcribe` step (D78, D152): voice notes and audio are heard when
they arrive, after admission (a refused stranger's audio is never fetched) and before anything
reads the text (commands, the stored message, the run).

The adapter that received the message fetches the bytes; the `voice.stt` chain transcribes
them; the attachment part gains `transcript`, and a message with no text of its own takes the
first transcript as its text, so commands, search and the model all see words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.features.inbound.pipeline import Inbound, InboundStep, Proceed
from core.model.attachments import Attachment

if TYPE_CHECKING:
    from core.engine.outbound.channels import ChannelRegistry
    from core.features.voice.stt import SpeechToText
    from core.model.inbound import InboundMessage

AUDIO_KINDS = frozenset({"voice", "audio"})


class Transcription:
    def __init__(self, stt: SpeechToText, channels: ChannelRegistry, max_bytes: int) -> None:
        self.stt = stt
        self.channels = channels
        self.max_bytes = max_bytes

    def step(self) -> InboundStep:
        return InboundStep("transcribe", self.run)

    async def run(self, inbound: Inbound, proceed: Proceed) -> None:
        msg = inbound.message
        if any(a.kind in AUDIO_KINDS and a.transcript is None for a in msg.attachments):
            inbound.message = await self.heard(msg)
        await proceed()

    async def heard(self, msg: InboundMessage) -> InboundMessage:
        attachments = [await self._transcribed(msg, a) for a in msg.attachments]
        text = msg.text
        if not text.strip():
            text = next((a.transcript for a in attachments if a.transcript), text)
        return msg.model_copy(update={"attachments": tuple(attachments), "text": text})

    async def _transcribed(self, msg: InboundMessage, attachment: Attachment) -> Attachment:
        if attachment.kind not in AUDIO_KINDS or attachment.transcript is not None:
            return attachment
        data = await self.channels.fetch(msg.channel, msg.account_id, attachment, self.max_bytes)
        if not data:
            return attachment
        text = await self.stt.transcribe(data, attachment.mime, attachment.name)
        if text is None:
            return attachment
        return attachment.model_copy(update={"transcript": text})
