"""Text to speech (D78, D153): `openai` against a loopback fake of `/v1/audio/speech`, `local`
with espeak-ng; both become OGG/Opus voice notes; a failing provider falls back to the next
(D155); `replyWithVoice` picks the replies."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.config.schema_voice import TtsConfig, VoiceConfig
from core.features.voice.tts import TextToSpeech, spoken_text, wants_voice
from tests.fakes.audio import FakeAudioServer


async def test_openai_speech_becomes_an_ogg_voice_note() -> None:
    fake = FakeAudioServer(api_key="sk-audio")
    await fake.start()
    try:
        cfg = TtsConfig.model_validate(
            {"provider": "openai", "baseUrl": fake.v1, "apiKey": "sk-audio", "voice": "nova"}
        )
        note = await TextToSpeech(cfg).voice_note("**Hello** there, see [the docs](http://x).")
        assert note is not None and note.voice and note.mime == "audio/ogg"
        assert note.data.startswith(b"OggS") and note.name == "reply.ogg"
        [call] = fake.calls_for("speech")
        assert call.params == {
            "model": "tts-1",
            "input": "Hello there, see the docs.",
            "voice": "nova",
            "response_format": "opus",
        }
        fake.fail_next("speech", 500)
        assert await TextToSpeech(cfg).voice_note("again") is None  # the text still goes
    finally:
        await fake.stop()


async def test_local_espeak_speaks_an_ogg_voice_note() -> None:
    note = await TextToSpeech(TtsConfig(provider="local")).voice_note("Good morning.")
    assert note is not None and note.data.startswith(b"OggS") and note.size > 1000


def test_which_replies_are_spoken() -> None:
    voice = [{"type": "attachment", "kind": "voice", "name": "v.ogg"}]
    photo = [{"type": "attachment", "kind": "image", "name": "p.jpg"}]
    auto, always = (
        TtsConfig(provider="local"),
        TtsConfig(provider="local", reply_with_voice="always"),
    )
    never = TtsConfig(provider="local", reply_with_voice="never")
    assert [wants_voice(auto, a) for a in ([], voice, photo)] == [False, True, False]
    assert [wants_voice(always, a) for a in ([], voice)] == [True, True]
    assert not wants_voice(never, voice) and not wants_voice(None, voice)
    assert spoken_text("# Title\n```py\nx = 1\n```\n- *a* `b`") == "Title x = 1 - a b"


async def test_a_failing_primary_falls_back_to_the_next_provider() -> None:
    """`voice.tts` as a list (D155): the first provider that makes a note wins, in order."""
    primary, backup = FakeAudioServer(), FakeAudioServer()
    await primary.start()
    await backup.start()
    try:
        chain = [
            TtsConfig.model_validate({"provider": "openai", "baseUrl": f.v1, "voice": v})
            for f, v in ((primary, "nova"), (backup, "echo"))
        ]
        tts = TextToSpeech(chain)
        primary.fail_next("speech", 500)
        note = await tts.voice_note("Fallback works.")
        assert note is not None and note.data.startswith(b"OggS")
        [spoken] = backup.calls_for("speech")
        assert (spoken.params["input"], spoken.params["voice"]) == ("Fallback works.", "echo")
        assert await tts.voice_note("again") is not None  # the primary is back
        assert len(primary.calls_for("speech")) == 2 and len(backup.calls_for("speech")) == 1
        primary.fail_next("speech", 500)
        backup.fail_next("speech", 503)
        assert await tts.voice_note("nobody speaks") is None
        local = TextToSpeech([chain[0], TtsConfig(provider="local")])  # offline as the last
        primary.fail_next("speech", 500)
        offline = await local.voice_note("Good night.")
        assert offline is not None and offline.size > 1000
    finally:
        await primary.stop()
        await backup.stop()


def test_only_the_first_provider_says_when_to_speak() -> None:
    ok = VoiceConfig.model_validate(
        {"tts": [{"provider": "openai", "replyWithVoice": "always"}, {"provider": "local"}]}
    )
    assert [c.provider for c in ok.tts_chain()] == ["openai", "local"]
    assert ok.tts_chain()[0].reply_with_voice == "always"
    with pytest.raises(ValidationError, match=r"voice.tts\[1\].replyWithVoice: only the first"):
        VoiceConfig.model_validate(
            {"tts": [{"provider": "openai"}, {"provider": "local", "replyWithVoice": "never"}]}
        )
    with pytest.raises(ValidationError, match=r"voice\.tts: an empty list"):
        VoiceConfig.model_validate({"tts": []})
