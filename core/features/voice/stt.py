"""Speech to text as providers with fallbacks, like models (D78).

``openai``: ``POST <baseUrl>/audio/transcriptions`` (multipart: the file and the model, default
``whisper-1``) on any compatible server. ``local``: pocketsphinx with the US English model that
ships in its package (``pip install 'crosstalk[voice]'``), fed 16 kHz PCM that ffmpeg makes. The
chain tries each provider in order; a failure is logged and the next one tried, and when all
fail the voice note still reaches the model as its placeholder.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, Protocol

from core.config import secret_value
from core.features.voice.audio import to_pcm16k
from core.model.errors import CrosstalkError

if TYPE_CHECKING:
    from core.config.schema_voice import VoiceProviderConfig

log = logging.getLogger(__name__)
OPENAI_STT_MODEL = "whisper-1"
MISSING_POCKETSPHINX = "the local speech recogniser needs pip install 'crosstalk[voice]'"


class SpeechError(CrosstalkError):
    """A speech provider failed (the chain moves on)."""


async def openai_post(cfg: VoiceProviderConfig, name: str, url: str, **body: Any) -> bytes:
    """One speech request (in or out) with the bearer key; a non-200 answer fails it."""
    import aiohttp

    headers = {}
    if cfg.api_key is not None:
        headers["Authorization"] = f"Bearer {secret_value(cfg.api_key)}"
    timeout = aiohttp.ClientTimeout(total=cfg.timeout_seconds)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        http.post(url, headers=headers, **body) as resp,
    ):
        data = await resp.read()
        if resp.status != 200:
            raise SpeechError(
                f"{name} answered {resp.status}: {data[:200].decode(errors='replace')}"
            )
    return data


class Transcribe(Protocol):
    name: str

    async def transcribe(self, data: bytes, mime: str | None, filename: str) -> str: ...


class OpenAiStt:
    def __init__(self, cfg: VoiceProviderConfig) -> None:
        self.cfg = cfg
        self.base = cfg.base_url or "https://api.openai.com/v1"
        self.name = f"openai:{self.base}"

    async def transcribe(self, data: bytes, mime: str | None, filename: str) -> str:
        import aiohttp

        form = aiohttp.FormData()
        form.add_field(
            "file", data, filename=filename, content_type=mime or "application/octet-stream"
        )
        form.add_field("model", self.cfg.model or OPENAI_STT_MODEL)
        form.add_field("response_format", "json")
        url = f"{self.base}/audio/transcriptions"
        body = (await openai_post(self.cfg, self.name, url, data=form)).decode(errors="replace")
        try:
            text = json.loads(body).get("text")
        except ValueError:
            text = body  # response_format text
        if not isinstance(text, str):
            raise SpeechError(f"{self.name} sent no text")
        return text.strip()


class LocalStt:
    """pocketsphinx; one decoder, built on first use and used one utterance at a time."""

    name = "local:pocketsphinx"

    def __init__(self, cfg: VoiceProviderConfig) -> None:
        self.cfg = cfg
        self._decoder: Any = None
        self._lock = asyncio.Lock()

    def _decode(self, pcm: bytes) -> str:
        if self._decoder is None:
            try:
                from pocketsphinx import Decoder
            except ImportError:
                raise SpeechError(MISSING_POCKETSPHINX) from None
            self._decoder = Decoder(samprate=16000, loglevel="FATAL")
        decoder = self._decoder
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        hyp = decoder.hyp()
        return str(hyp.hypstr).strip() if hyp is not None else ""

    async def transcribe(self, data: bytes, mime: str | None, filename: str) -> str:
        pcm = await to_pcm16k(data)
        async with self._lock:
            return await asyncio.to_thread(self._decode, pcm)


def stt_provider(cfg: VoiceProviderConfig) -> Transcribe:
    return OpenAiStt(cfg) if cfg.provider == "openai" else LocalStt(cfg)


class SpeechToText:
    """The configured chain (`voice.stt`)."""

    def __init__(self, providers: list[Transcribe]) -> None:
        self.providers = providers

    @classmethod
    def from_config(cls, chain: list[VoiceProviderConfig]) -> SpeechToText:
        return cls([stt_provider(c) for c in chain])

    async def transcribe(self, data: bytes, mime: str | None, filename: str) -> str | None:
        """The first provider's transcript that works; None when every one failed."""
        for provider in self.providers:
            try:
                return await provider.transcribe(data, mime, filename)
            except Exception as exc:  # any failure moves the chain on (D78)
                log.warning("speech to text by %s failed: %s", provider.name, exc)
        return None
