"""Speech to text (D78): the `openai` provider against a loopback fake of
`/v1/audio/transcriptions`, a failing primary falling back, and the `local` engine
(pocketsphinx) hearing a sentence espeak-ng said."""

from __future__ import annotations

from core.config.schema_voice import VoiceProviderConfig
from core.features.voice.stt import LocalStt, OpenAiStt, SpeechToText
from tests.fakes.audio import FakeAudioServer
from tests.speech import KEY_WORDS, spoken_ogg


def _openai(fake: FakeAudioServer, **kw: object) -> VoiceProviderConfig:
    return VoiceProviderConfig.model_validate({"provider": "openai", "baseUrl": fake.v1, **kw})


async def test_openai_transcribes_with_model_file_and_key() -> None:
    fake = FakeAudioServer(transcript="call me later", api_key="sk-audio")
    await fake.start()
    try:
        stt = OpenAiStt(_openai(fake, apiKey="sk-audio", model="whisper-large"))
        assert await stt.transcribe(b"OggS...", "audio/ogg", "voice.ogg") == "call me later"
        [call] = fake.calls_for("transcriptions")
        assert call.params["model"] == "whisper-large"
        assert (call.params["file"], call.params["filename"]) == (b"OggS...", "voice.ogg")
    finally:
        await fake.stop()


async def test_a_failing_primary_falls_back_and_all_failing_is_none() -> None:
    primary, backup = FakeAudioServer(transcript="one"), FakeAudioServer(transcript="two")
    await primary.start()
    await backup.start()
    try:
        chain = SpeechToText.from_config([_openai(primary), _openai(backup)])
        primary.fail_next("transcriptions", 500)
        assert await chain.transcribe(b"x", "audio/ogg", "v.ogg") == "two"
        assert await chain.transcribe(b"x", "audio/ogg", "v.ogg") == "one"  # primary is back
        primary.fail_next("transcriptions", 500)
        backup.fail_next("transcriptions", 503)
        assert await chain.transcribe(b"x", "audio/ogg", "v.ogg") is None
    finally:
        await primary.stop()
        await backup.stop()


async def test_local_pocketsphinx_hears_an_espeak_sentence() -> None:
    stt = LocalStt(VoiceProviderConfig(provider="local"))
    heard = await stt.transcribe(spoken_ogg(), "audio/ogg", "voice.ogg")
    assert all(word in heard.split() for word in KEY_WORDS), heard
