"""Inbound attachments end to end (Telegram, Discord, Slack): stored (D3), answered, never lost.

FakeTelegram ⇄ real PTB ⇄ router ⇄ fake model. What the model was asked is read from the fake
model's recorded requests; what is stored, from `sessions_history`.
"""

from __future__ import annotations

import base64

import pytest

from tests.adapters.discord.runtime import DiscordRuntime
from tests.adapters.received import last_user_content, user_rows
from tests.adapters.slack.runtime import SlackRuntime
from tests.adapters.telegram.runtime import TelegramRuntime
from tests.conftest import deep_merge
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

PHOTO = b"\xff\xd8\xff\xe0" + b"jpeg-bytes" * 12_300  # about 120 KB
VISION = {
    "models": {
        "providers": {"fake": {"models": [{"id": "fake-model", "input": ["text", "image"]}]}}
    }
}


async def test_photo_without_caption_is_stored_and_answered_with_a_placeholder(
    fake_telegram: FakeTelegram, fake_model: FakeModelServer, telegram_rt: TelegramRuntime
) -> None:
    rt = await telegram_rt()
    fake_telegram.user_media(42, "photo", PHOTO)
    [reply] = await fake_telegram.wait_for("sendMessage", timeout=15)
    assert last_user_content(fake_model) == "[image: photo.jpg, 120 KB]"  # text-only model
    assert reply.params["text"] == "echo: [image: photo.jpg, 120 KB]"
    [row] = await user_rows(rt)
    assert row["content"] == [
        {
            "type": "attachment",
            "kind": "image",
            "name": "photo.jpg",
            "mime": "image/jpeg",
            "size": len(PHOTO),
        }
    ]  # D3, no file id
    assert not fake_telegram.calls_for("getFile")  # nothing fetched for a text-only model


async def test_photo_reaches_a_vision_model_as_an_image(
    fake_telegram: FakeTelegram, fake_model: FakeModelServer, telegram_rt: TelegramRuntime
) -> None:
    rt = await telegram_rt(VISION)
    fake_telegram.user_media(42, "photo", PHOTO, caption="what is this?")
    await fake_telegram.wait_for("sendMessage", timeout=15)
    content = last_user_content(fake_model)
    assert content[0] == {"type": "text", "text": "what is this?"}
    image = content[1]["image_url"]["url"]
    assert image == "data:image/jpeg;base64," + base64.b64encode(PHOTO).decode()
    [get_file] = fake_telegram.calls_for("getFile")
    assert get_file.params["file_id"].endswith("1")  # the largest size, not the thumbnail
    [row] = await user_rows(rt)
    assert [p["type"] for p in row["content"]] == ["text", "attachment"]


async def test_oversized_image_gets_only_the_placeholder(
    fake_telegram: FakeTelegram, fake_model: FakeModelServer, telegram_rt: TelegramRuntime
) -> None:
    await telegram_rt(
        deep_merge(VISION, {"agents": {"defaults": {"media": {"maxImageBytes": 100_000}}}})
    )
    fake_telegram.user_media(42, "photo", PHOTO, caption="big one")
    await fake_telegram.wait_for("sendMessage", timeout=15)
    assert last_user_content(fake_model) == "big one\n[image: photo.jpg, 120 KB]"
    assert not fake_telegram.calls_for("getFile")


@pytest.mark.parametrize(
    ("kind", "name", "mime", "shown"),
    [
        ("voice", None, None, "[voice: voice.ogg, 3 KB]"),
        ("audio", "song.mp3", "audio/mpeg", "[audio: song.mp3, 3 KB]"),
        ("video", "clip.mp4", "video/mp4", "[video: clip.mp4, 3 KB]"),
        ("document", "report.pdf", "application/pdf", "[file: report.pdf, 3 KB]"),
        ("document", "scan.png", "image/png", "[image: scan.png, 3 KB]"),
    ],
)
async def test_other_attachments_are_placeholders(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    telegram_rt: TelegramRuntime,
    kind: str,
    name: str | None,
    mime: str | None,
    shown: str,
) -> None:
    rt = await telegram_rt()
    fake_telegram.user_media(42, kind, b"x" * 3000, name=name, mime=mime)
    [reply] = await fake_telegram.wait_for("sendMessage", timeout=15)
    assert last_user_content(fake_model) == shown
    assert reply.params["text"] == f"echo: {shown}"
    [row] = await user_rows(rt)
    assert row["content"][0]["kind"] == shown[1:].split(":")[0]


async def test_discord_image_upload_reaches_a_vision_model(
    fake_discord: FakeDiscord,
    fake_model: FakeModelServer,
    discord_rt: DiscordRuntime,
) -> None:
    await discord_rt(VISION)
    png = b"\x89PNG" + b"p" * 2000
    await fake_discord.user_message(
        fake_discord.DM_CHANNEL_ID, "", files=[("cat.png", "image/png", png)]
    )
    [post] = await fake_discord.wait_for("createMessage", timeout=15)
    content = last_user_content(fake_model)
    assert content == [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
        }
    ]
    assert post.params["content"].startswith("echo:")
    assert fake_discord.calls_for("cdn")  # fetched from the CDN URL Discord gave


async def test_discord_voice_and_files_are_placeholders(
    fake_discord: FakeDiscord,
    fake_model: FakeModelServer,
    discord_rt: DiscordRuntime,
) -> None:
    await discord_rt()
    await fake_discord.user_message(
        fake_discord.DM_CHANNEL_ID,
        "see attached",
        files=[("notes.txt", "text/plain", b"n" * 2048), ("cat.png", "image/png", b"p" * 10)],
    )
    [post] = await fake_discord.wait_for("createMessage", timeout=15)
    assert (
        post.params["content"]
        == "echo: see attached\n[file: notes.txt, 2 KB]\n[image: cat.png, 10 B]"
    )
    assert not fake_discord.calls_for("cdn")


async def test_slack_file_share_without_text_is_answered(
    fake_slack: FakeSlack,
    fake_model: FakeModelServer,
    slack_rt: SlackRuntime,
) -> None:
    rt, _ = await slack_rt()
    event = fake_slack.message_event("D0DM0009", "", subtype="file_share")
    event["files"] = [
        {
            "id": "F1",
            "name": "memo.m4a",
            "mimetype": "audio/mp4",
            "size": 5000,
            "subtype": "slack_audio",
            "url_private": "https://files.slack.com/F1/memo.m4a",
        }
    ]
    await fake_slack.push_event(event)
    [post] = await fake_slack.wait_for("chat.postMessage", timeout=15)
    assert post.params["text"] == "echo: [voice: memo.m4a, 5 KB]"
    [row] = await user_rows(rt)
    assert row["content"] == [
        {
            "type": "attachment",
            "kind": "voice",
            "name": "memo.m4a",
            "mime": "audio/mp4",
            "size": 5000,
        }
    ]


async def test_slack_image_reaches_a_vision_model_with_the_bot_token_only_to_slack(
    fake_slack: FakeSlack,
    fake_model: FakeModelServer,
    slack_rt: SlackRuntime,
) -> None:
    await slack_rt(VISION)
    png = b"\x89PNG" + b"s" * 500
    shared = fake_slack.add_file("shot.png", "image/png", png)
    stranger = {
        **shared,
        "id": "F999",
        "name": "evil.png",
        "url_private": "https://evil.example/steal.png",
    }  # must not get the token
    event = fake_slack.message_event("D0DM0010", "look", subtype="file_share")
    event["files"] = [shared, stranger]
    await fake_slack.push_event(event)
    await fake_slack.wait_for("chat.postMessage", timeout=15)
    content = last_user_content(fake_model)
    assert content[0] == {"type": "text", "text": "look\n[image: evil.png, 504 B]"}
    assert (
        content[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    )
    [download] = fake_slack.calls_for("files.download")
    assert download.token == fake_slack.bot_token
