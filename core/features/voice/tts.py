"""Text to speech (D78, D153): a reply spoken as a voice note.

``openai``: ``POST <baseUrl>/audio/speech`` (``model`` default ``tts-1``, ``voice`` default
``alloy``, ``response_format: opus``); ``local``: Debian's espeak-ng (``voice`` is an espeak-ng
voice name, default ``en-us``). Whatever comes back is made an OGG/Opus voice note by ffmpeg,
unless it already is one. `voice.tts` may list providers: each is tried in order until one
makes a note (D155). `replyWithVoice` decides which replies are spoken (:func:`wants_voice`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from core.features.voice.audio import to_ogg_opus
from core.features.voice.stt import SpeechError, openai_post
from core.model.attachments import Attachment
from core.model.media import MediaItem

if TYPE_CHECKING:
    from core.config.schema_voice import TtsConfig

log = logging.getLogger(__name__)
OPENAI_TTS_MODEL = "tts-1"
OPENAI_TTS_VOICE = "alloy"
LOCAL_TTS_VOICE = "en-us"
MAX_SPOKEN = 4000
"""Characters of a reply that are spoken; the text is always sent whole."""
VOICE_NAME = "reply.ogg"


class Speak(Protocol):
    name: str

    async def speak(self, text: str) -> bytes: ...


class OpenAiTts:
    def __init__(self, cfg: TtsConfig) -> None:
        self.cfg = cfg
        self.base = cfg.base_url or "https://api.openai.com/v1"
        self.name = f"openai:{self.base}"

    async def speak(self, text: str) -> bytes:

        body = {
            "model": self.cfg.model or OPENAI_TTS_MODEL,
            "input": text,
            "voice": self.cfg.voice or OPENAI_TTS_VOICE,
            "response_format": "opus",
        }
        url = f"{self.base}/audio/speech"
        return await openai_post(self.cfg, self.name, url, json=body)


class LocalTts:
    name = "local:espeak-ng"

    def __init__(self, cfg: TtsConfig) -> None:
        self.cfg = cfg

    async def speak(self, text: str) -> bytes:
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise SpeechError("espeak-ng is not installed (apt-get install espeak-ng)")
        voice = self.cfg.voice or LOCAL_TTS_VOICE
        proc = await asyncio.create_subprocess_exec(
            exe,
            "-v",
            voice,
            "--stdout",
            "--stdin",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(
            proc.communicate(text.encode("utf-8")), self.cfg.timeout_seconds
        )
        if proc.returncode != 0 or not out:
            raise SpeechError(f"espeak-ng failed: {err.decode('utf-8', 'replace')[:200]}")
        return out


def spoken_text(markdown: str) -> str:
    """What is said: the reply without markdown marks, links as their text, code as is."""
    text = re.sub(r"```[^\n]*\n?", "", markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_`#>|~]+", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:MAX_SPOKEN]


def wants_voice(cfg: TtsConfig | None, attachment_parts: Sequence[Mapping[str, Any]]) -> bool:
    """`always`: every reply; `auto`: a reply to a voice note; `never`: none."""
    if cfg is None or cfg.reply_with_voice == "never":
        return False
    if cfg.reply_with_voice == "always":
        return True
    return any(Attachment.from_part(dict(p)).kind == "voice" for p in attachment_parts)


class TextToSpeech:
    """The configured chain (`voice.tts`): the first provider that makes a voice note wins."""

    def __init__(self, chain: TtsConfig | Sequence[TtsConfig]) -> None:
        self.chain = [chain] if not isinstance(chain, Sequence) else list(chain)
        self.engines: list[Speak] = [
            OpenAiTts(c) if c.provider == "openai" else LocalTts(c) for c in self.chain
        ]

    async def voice_note(self, reply: str) -> MediaItem | None:
        """The reply as an OGG/Opus voice note; None (logged) when no provider can make it."""
        text = spoken_text(reply)
        if not text:
            return None
        for engine in self.engines:
            try:
                audio = await engine.speak(text)
                ogg = audio if audio.startswith(b"OggS") else await to_ogg_opus(audio)
            except Exception as exc:  # any failure moves the chain on; the text still goes
                log.warning("text to speech by %s failed: %s", engine.name, exc)
                continue
            return MediaItem(data=ogg, mime="audio/ogg", name=VOICE_NAME, voice=True)
        return None
