"""Voice notes are heard when they arrive (D78): a Telegram voice update is fetched, transcribed
by the `voice.stt` chain (the `openai` provider against a loopback fake), stored with its
transcript, shown in `sessions_history`, and the model reads the words as the message."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.adapters.received import last_user_content, user_rows
from tests.adapters.telegram.runtime import TelegramRuntime
from tests.fakes.audio import FakeAudioServer
from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
VOICE = b"OggS" + b"\x00" * 3000


@pytest.fixture
async def audio() -> AsyncIterator[FakeAudioServer]:
    fake = FakeAudioServer(transcript="please call my mother tomorrow")
    await fake.start()
    yield fake
    await fake.stop()


async def test_a_voice_note_reaches_the_model_as_its_words(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    audio: FakeAudioServer,
    telegram_rt: TelegramRuntime,
) -> None:
    rt = await telegram_rt({"voice": {"stt": [{"provider": "openai", "baseUrl": audio.v1}]}})
    fake_telegram.user_media(42, "voice", VOICE)
    [reply] = await fake_telegram.wait_for("sendMessage", timeout=30)
    [call] = audio.calls_for("transcriptions")
    assert call.params["file"] == VOICE  # the bytes Telegram served, fetched by the adapter
    prompt = last_user_content(fake_model)
    assert prompt == "please call my mother tomorrow\n[voice: voice.ogg, 3 KB, transcribed above]"
    assert reply.params["text"].startswith("echo: please call my mother tomorrow")
    [row] = await user_rows(rt)
    assert row["content"][0] == {"type": "text", "text": "please call my mother tomorrow"}
    assert row["content"][1]["transcript"] == "please call my mother tomorrow"
    assert row["content"][1]["kind"] == "voice"


async def test_when_every_provider_fails_the_placeholder_remains(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    audio: FakeAudioServer,
    telegram_rt: TelegramRuntime,
) -> None:
    await telegram_rt({"voice": {"stt": {"provider": "openai", "baseUrl": audio.v1}}})
    audio.fail_next("transcriptions", 500)
    fake_telegram.user_media(42, "voice", VOICE)
    await fake_telegram.wait_for("sendMessage", timeout=30)
    assert last_user_content(fake_model) == "[voice: voice.ogg, 3 KB]"


async def test_a_voice_note_is_answered_with_text_and_a_voice_note(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    audio: FakeAudioServer,
    telegram_rt: TelegramRuntime,
) -> None:
    """`replyWithVoice: auto` (D78): the reply's text, then its `sendVoice` (OGG/Opus)."""
    voice = {"stt": {"provider": "openai", "baseUrl": audio.v1}}
    await telegram_rt({"voice": {**voice, "tts": {"provider": "openai", "baseUrl": audio.v1}}})
    fake_telegram.user_media(42, "voice", VOICE)
    [note] = await fake_telegram.wait_for("sendVoice", timeout=30)
    [reply] = fake_telegram.calls_for("sendMessage")
    assert reply.params["text"].startswith("echo: please call my mother tomorrow")
    assert note.params["voice"].startswith(b"OggS")
    [spoken] = audio.calls_for("speech")
    assert spoken.params["input"].startswith("echo: please call my mother tomorrow")
    fake_telegram.user_message(42, "and in text?")  # auto: a text message gets text only
    await fake_telegram.wait_for("sendMessage", count=2, timeout=30)
    assert len(fake_telegram.calls_for("sendVoice")) == 1


async def test_both_audio_routes_fall_back_to_the_second_server(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    audio: FakeAudioServer,
    telegram_rt: TelegramRuntime,
) -> None:
    """`voice.stt` and `voice.tts` as lists (D78, D155): the primary server answers 500 on both
    `/v1/audio/transcriptions` and `/v1/audio/speech`; the second one hears and speaks."""
    primary = FakeAudioServer(transcript="never heard")
    await primary.start()
    try:
        servers = [{"provider": "openai", "baseUrl": s.v1} for s in (primary, audio)]
        await telegram_rt({"voice": {"stt": servers, "tts": servers}})
        primary.fail_next("transcriptions", 500)
        primary.fail_next("speech", 500)
        fake_telegram.user_media(42, "voice", VOICE)
        [note] = await fake_telegram.wait_for("sendVoice", timeout=30)
        assert note.params["voice"].startswith(b"OggS")
        [reply] = fake_telegram.calls_for("sendMessage")
        assert reply.params["text"].startswith("echo: please call my mother tomorrow")
        assert [len(primary.calls_for(r)) for r in ("transcriptions", "speech")] == [1, 1]
        [spoken] = audio.calls_for("speech")
        assert spoken.params["input"].startswith("echo: please call my mother tomorrow")
    finally:
        await primary.stop()
