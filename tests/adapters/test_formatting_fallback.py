"""A platform that refuses the formatting still gets the message, as plain text.

Telegram answers ``400 Bad Request: can't parse entities`` when it dislikes the entities; the
adapter sends the same chunk again without them. Discord replies cannot ping @everyone.
"""

from __future__ import annotations

import pytest

from tests.adapters.discord.runtime import DiscordRuntime
from tests.adapters.telegram.runtime import Start
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text
from tests.fakes.telegram import FakeTelegram
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def test_rejected_entities_resent_as_plain_text(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    start_tg: Start,
) -> None:
    rt, _ = await start_tg()
    fake_model.script(text("Some **bold** [link](https://example.com) text"))
    fake_telegram.fail_next(
        "sendMessage",
        400,
        {"description": "Bad Request: can't parse entities: unsupported start tag"},
    )
    fake_telegram.user_message(42, "hi")
    first, second = await fake_telegram.wait_for("sendMessage", 2)
    assert first.status == 400 and first.params["entities"]  # formatted, refused
    assert second.status == 200 and "entities" not in second.params
    assert second.params["text"] == "Some **bold** [link](https://example.com) text"

    async def delivered() -> bool:
        return bool(await rt.store.list_deliveries(outcome="delivered"))

    await eventually(delivered)


async def test_formatted_reply_carries_entities(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    start_tg: Start,
) -> None:
    await start_tg()
    fake_model.script(text("**Done**: `x = 1`"))
    fake_telegram.user_message(42, "hi")
    [sent] = await fake_telegram.wait_for("sendMessage")
    assert sent.params["text"] == "Done: x = 1"
    assert sent.params["entities"] == [
        {"type": "bold", "offset": 0, "length": 4},
        {"type": "code", "offset": 6, "length": 5},
    ]
    assert "parse_mode" not in sent.params  # entities, so no character is ever markup


async def test_discord_replies_cannot_ping_everyone(
    fake_discord: FakeDiscord,
    fake_model: FakeModelServer,
    discord_rt: DiscordRuntime,
) -> None:
    await discord_rt()
    fake_model.script(text("@everyone look"))
    await fake_discord.user_message(fake_discord.DM_CHANNEL_ID, "hi")
    [post] = await fake_discord.wait_for("createMessage")
    assert post.params["content"] == "@everyone look"
    assert post.params["allowed_mentions"]["parse"] == ["users"]


async def test_rejected_final_edit_is_redone_as_plain_text(
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    start_tg: Start,
) -> None:
    await start_tg(streaming="edit")
    fake_model.script(text("**bold** reply", chunks=["**bold** reply"]))  # one preview
    fake_telegram.fail_next(
        "editMessageText",
        400,
        {"description": "Bad Request: can't parse entities: character is reserved"},
    )
    fake_telegram.user_message(42, "hi")
    refused, plain = await fake_telegram.wait_for("editMessageText", 2, timeout=15)
    assert refused.status == 400 and refused.params["entities"]
    assert plain.status == 200 and "entities" not in plain.params
    [shown] = fake_telegram.visible()
    assert shown["text"] == "**bold** reply"  # every character the model wrote is there
