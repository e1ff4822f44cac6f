"""The offline voice round trip on each platform fake (D78): Debian's espeak-ng speaks a
sentence (with a little noise, as a microphone would), ffmpeg encodes it as OGG/Opus, it arrives
as the platform's voice message, the local engine (pocketsphinx) transcribes it, the fake model
receives text with the sentence's key words, and the reply arrives as text and as a voice note
that espeak-ng spoke (replyWithVoice: auto). Nothing here touches a network beyond loopback."""

from __future__ import annotations

from typing import Any

import pytest

from tests.adapters.test_attachments import Start, start  # noqa: F401  (Telegram fixture)
from tests.adapters.test_discord import DiscordRuntime, discord_rt  # noqa: F401  (fixture)
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram
from tests.speech import KEY_WORDS, spoken_ogg

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
VOICE: dict[str, Any] = {
    "voice": {"stt": {"provider": "local"}, "tts": {"provider": "local", "replyWithVoice": "auto"}}
}


def heard(fake_model: FakeModelServer) -> str:
    """What the model was asked, as text."""
    messages = fake_model.requests[-1]["messages"]
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else str(content)


async def test_telegram_voice_round_trip(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    start: Start,  # noqa: F811
) -> None:
    await start(VOICE)
    fake_telegram.user_media(42, "voice", spoken_ogg(), mime="audio/ogg")
    [note] = await fake_telegram.wait_for("sendVoice", timeout=90)
    asked = heard(fake_model)
    assert all(word in asked for word in KEY_WORDS), asked
    [text] = fake_telegram.calls_for("sendMessage")
    assert all(word in text.params["text"] for word in KEY_WORDS)  # the text comes too
    assert note.params["voice"].startswith(b"OggS") and len(note.params["voice"]) > 2000


async def test_discord_voice_round_trip(
    fake_discord: FakeDiscord,
    fake_model: FakeModelServer,
    discord_rt: DiscordRuntime,  # noqa: F811
) -> None:
    await discord_rt(VOICE)
    await fake_discord.user_message(
        fake_discord.DM_CHANNEL_ID,
        "",
        files=[("voice-message.ogg", "audio/ogg", spoken_ogg())],
        voice_message=True,
    )
    await fake_discord.wait_for("createMessage", count=2, timeout=90)
    asked = heard(fake_model)
    assert all(word in asked for word in KEY_WORDS), asked
    [upload] = fake_discord.uploads
    assert upload["filename"] == "reply.ogg" and bytes(upload["data"]).startswith(b"OggS")
    texts = [c.params.get("content") or "" for c in fake_discord.created_messages()]
    assert any(all(word in t for word in KEY_WORDS) for t in texts), texts
