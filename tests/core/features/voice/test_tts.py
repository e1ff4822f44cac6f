"""Text to speech (D78, D153): `openai` against a loopback fake of `/v1/audio/speech`, `local`
with espeak-ng; both become OGG/Opus voice notes; `replyWithVoice` picks the replies."""

from __future__ import annotations

from core.config.schema_voice import TtsConfig
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
