"""``voice``: speech to text and text to speech (D78).

``voice.stt`` is one provider or a list tried in order; ``voice.tts`` too, each with the voice
to use, and the first saying when replies are spoken (D155). ``openai`` means any server with
``/v1/audio/transcriptions`` and ``/v1/audio/speech`` (``baseUrl`` ending in ``/v1``, as for model
providers; ``apiKey`` sent as a bearer token); ``local`` means the offline engines whose models
ship with them (pocketsphinx in, ``crosstalk[voice]``; Debian's espeak-ng out).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, model_validator

from core.config.schema_base import BaseUrl, ConfigModel

VoiceProviderName = Literal["openai", "local"]
ReplyWithVoice = Literal["auto", "always", "never"]


class VoiceProviderConfig(ConfigModel):
    provider: VoiceProviderName
    model: str | None = None
    base_url: BaseUrl | None = None
    api_key: SecretStr | None = None
    timeout_seconds: float = Field(default=60.0, gt=0)


class TtsConfig(VoiceProviderConfig):
    voice: str | None = None
    reply_with_voice: ReplyWithVoice = "auto"
    """``auto``: a voice note answers a voice note; ``always``: every reply; the text is sent as
    well in both."""


class VoiceConfig(ConfigModel):
    stt: VoiceProviderConfig | list[VoiceProviderConfig] | None = None
    tts: TtsConfig | list[TtsConfig] | None = None
    """One provider or a list tried in order (D155); `replyWithVoice` is the first one's."""
    max_audio_bytes: int = Field(default=25 * 1024 * 1024, gt=0)
    """Longer audio is not transcribed (it still reaches the model as a placeholder)."""

    @model_validator(mode="after")
    def _one_reply_with_voice(self) -> VoiceConfig:
        """A fallback speaks when the first cannot; when to speak is one setting (D155)."""
        for n, cfg in enumerate(self.tts_chain()[1:], start=1):
            if "reply_with_voice" in cfg.model_fields_set:
                raise ValueError(
                    f"voice.tts[{n}].replyWithVoice: only the first provider's replyWithVoice "
                    "applies (the others are fallbacks); set it on voice.tts[0]"
                )
        if isinstance(self.tts, list) and not self.tts:
            raise ValueError("voice.tts: an empty list; leave voice.tts out to speak no replies")
        return self

    def stt_chain(self) -> list[VoiceProviderConfig]:
        if self.stt is None:
            return []
        return list(self.stt) if isinstance(self.stt, list) else [self.stt]

    def tts_chain(self) -> list[TtsConfig]:
        if self.tts is None:
            return []
        return list(self.tts) if isinstance(self.tts, list) else [self.tts]
