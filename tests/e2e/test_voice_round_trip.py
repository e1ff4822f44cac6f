"""The offline voice round trip on each platform fake with media (D78; Telegram, Discord,
Slack, the web chat, WhatsApp, Signal, Matrix in tests/adapters/matrix/test_matrix_media.py; email,
which has no voice notes, with an audio attachment): Debian's espeak-ng speaks a
sentence (with a little noise, as a microphone would), ffmpeg encodes it as OGG/Opus, it arrives
as the platform's voice message, the local engine (pocketsphinx) transcribes it, the fake model
receives text with the sentence's key words, and the reply arrives as text and as a voice note
that espeak-ng spoke (replyWithVoice: auto). Nothing here touches a network beyond loopback."""

from __future__ import annotations

import base64
import json
from email.message import EmailMessage
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from adapters.email.adapter import EmailAdapter
from adapters.webchat.adapter import WebchatAdapter
from adapters.whatsapp.adapter import WhatsAppAdapter
from core.api.channels import ChannelEnv
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.adapters.discord.runtime import DiscordRuntime
from tests.adapters.email.mail import bot_mail as email_bot_mail
from tests.adapters.email.mail import deliver as email_deliver
from tests.adapters.email.mail import mail_from as email_from
from tests.adapters.email.mail import section as email_section
from tests.adapters.email.mail import text_of as email_text
from tests.adapters.signal.runtime import signal_runtime
from tests.adapters.slack.runtime import SlackRuntime
from tests.adapters.telegram.runtime import TelegramRuntime
from tests.adapters.whatsapp.helpers import gateway as whatsapp_gateway
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.discord import FakeDiscord
from tests.fakes.mailserver import MailServer
from tests.fakes.model import FakeModelServer
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp
from tests.polling import eventually
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
    telegram_rt: TelegramRuntime,
) -> None:
    await telegram_rt(VOICE)
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
    discord_rt: DiscordRuntime,
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


async def test_slack_voice_round_trip(
    fake_slack: FakeSlack,
    fake_model: FakeModelServer,
    slack_rt: SlackRuntime,
) -> None:
    await slack_rt(VOICE)
    clip = {**fake_slack.add_file("audio_message.ogg", "audio/ogg", spoken_ogg())}
    clip["subtype"] = "slack_audio"  # a clip recorded in Slack: a voice note
    event = fake_slack.message_event("D0DM0009", "", subtype="file_share")
    event["files"] = [clip]
    await fake_slack.push_event(event)
    await fake_slack.wait_for("files.completeUploadExternal", timeout=90)
    asked = heard(fake_model)
    assert all(word in asked for word in KEY_WORDS), asked
    [upload] = fake_slack.uploads
    assert upload["filename"] == "reply.ogg" and bytes(upload["data"]).startswith(b"OggS")
    [text] = fake_slack.calls_for("chat.postMessage")
    assert all(word in text.params["text"] for word in KEY_WORDS)


async def test_webchat_voice_round_trip(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    """A recording from the page (D154) is heard and answered with text and an audio player."""
    rt = Runtime(make_config(VOICE))
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(server.make_url("/ws?token=test-token")) as ws,
        ):
            await ws.receive(timeout=5)  # history
            data = base64.b64encode(spoken_ogg()).decode()
            voice = {"name": "voice.ogg", "mime": "audio/ogg", "data": data, "voice": True}
            await ws.send_str(json.dumps({"type": "message", "text": "", "attachments": [voice]}))
            frames: dict[str, dict[str, Any]] = {}
            while "media" not in frames:
                frame = json.loads((await ws.receive(timeout=90)).data)
                frames.setdefault(frame["type"], frame)
            note = frames["media"]["media"]
            assert note["kind"] == "voice" and note["mime"] == "audio/ogg"
            assert all(word in frames["message"]["text"] for word in KEY_WORDS)
            auth = {"Authorization": "Bearer test-token"}
            async with http.get(server.make_url(f"/webchat/media/{note['id']}"), headers=auth) as r:
                assert (await r.read()).startswith(b"OggS")
        asked = heard(fake_model)
        assert all(word in asked for word in KEY_WORDS), asked
    finally:
        await server.close()
        await rt.stop()


async def test_whatsapp_voice_round_trip(
    fake_whatsapp: FakeWhatsApp, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    """A WhatsApp voice note (audio marked `voice`) is heard; the spoken reply goes as an
    uploaded OGG/Opus audio message marked `voice` (D156)."""
    rt = await make_runtime(
        {
            **VOICE,
            "channels": {"whatsapp": {**fake_whatsapp.config(), "dmPolicy": "open"}},
        }
    )
    [(account_id, acc)] = rt.config.channels.whatsapp.iter_accounts()
    adapter = WhatsAppAdapter(acc, account_id)
    await rt.add_adapter(adapter)
    server = await whatsapp_gateway(rt, fake_whatsapp, adapter)
    try:
        media_id = fake_whatsapp.add_media(spoken_ogg(), "audio/ogg; codecs=opus")
        fake_whatsapp.user_message(
            "4915100000001",
            None,  # type: ignore[arg-type]
            kind="audio",
            media={"id": media_id, "mime_type": "audio/ogg; codecs=opus", "voice": True},
        )
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent_media) == 1, 90)
        asked = heard(fake_model)
        assert all(word in asked for word in KEY_WORDS), asked
        [note] = fake_whatsapp.sent_media
        assert (note["kind"], note["voice"]) == ("audio", True)
        assert bytes(note["data"]).startswith(b"OggS") and len(note["data"]) > 2000
        [reply] = fake_whatsapp.sent
        assert all(word in reply["text"] for word in KEY_WORDS)
    finally:
        await adapter.stop()
        await server.close()


async def test_signal_voice_round_trip(
    fake_signal: FakeSignal, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    """A Signal voice note (audio without a file name) is heard; the spoken reply goes as an
    OGG/Opus attachment without a file name, as Signal's apps send a voice note (D157)."""
    _rt, adapter = await signal_runtime(make_runtime, fake_signal, VOICE)
    try:
        note = fake_signal.add_attachment(spoken_ogg(), "audio/ogg")
        fake_signal.user_message("+15550000001", None, attachments=[note])
        await fake_signal.wait_until(lambda: len(fake_signal.sent_media) == 1, 90)
        asked = heard(fake_model)
        assert all(word in asked for word in KEY_WORDS), asked
        [spoken] = fake_signal.sent_media
        assert (spoken["mime"], spoken["filename"]) == ("audio/ogg", None)
        assert bytes(spoken["data"]).startswith(b"OggS") and len(spoken["data"]) > 2000
        [reply] = fake_signal.sent
        assert all(word in reply["text"] for word in KEY_WORDS)
    finally:
        await adapter.stop()


async def test_email_voice_round_trip(
    fake_email: MailServer, fake_model: FakeModelServer, make_runtime: RuntimeFactory
) -> None:
    """Email has no voice notes: an audio attachment is heard like one (D152), and under
    `replyWithVoice: always` the spoken reply is attached to a mail in the thread (D159)."""
    always = {"voice": {**VOICE["voice"], "tts": {"provider": "local", "replyWithVoice": "always"}}}
    rt = await make_runtime({**email_section(fake_email), **always})
    assert rt.config.channels.email is not None
    adapter = EmailAdapter(rt.config.channels.email, "default", ChannelEnv(rt.state_dir))
    await rt.add_adapter(adapter)
    try:
        mail = email_from("alice@example.org", "", subject="A voice memo")
        mail.add_attachment(spoken_ogg(), maintype="audio", subtype="ogg", filename="memo.ogg")
        await email_deliver(fake_email, mail)

        async def two_mails() -> list[EmailMessage] | None:
            found = email_bot_mail(fake_email)
            return found if len(found) >= 2 else None

        reply, spoken = await eventually(two_mails, 90, "the reply and its voice note")
        asked = heard(fake_model)
        assert all(word in asked for word in KEY_WORDS), asked
        assert all(word in email_text(reply) for word in KEY_WORDS)
        [note] = list(spoken.iter_attachments())
        assert (note.get_content_type(), note.get_filename()) == ("audio/ogg", "reply.ogg")
        assert bytes(note.get_payload(decode=True)).startswith(b"OggS")
    finally:
        await adapter.stop()
