"""FakeTelegram driven by the real python-telegram-bot 22.8 (polling, errors, webhooks)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from telegram import Bot, Update
from telegram.error import Conflict, InvalidToken, RetryAfter
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters

from tests.fakes.telegram import FakeTelegram

# PTB 22 warns that RetryAfter.retry_after will become a timedelta; irrelevant here.
pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def _build(fake: FakeTelegram, token: str | None = None) -> Application:  # type: ignore[type-arg]
    return (
        ApplicationBuilder()
        .token(token or fake.token)
        .base_url(f"{fake.base_url}/bot")
        .base_file_url(f"{fake.base_url}/file/bot")
        .connect_timeout(2)
        .read_timeout(2)
        .get_updates_read_timeout(2)
        .build()
    )


async def _echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.message is not None
    await update.message.reply_text(f"echo: {update.message.text}")


@asynccontextmanager
async def _polling(fake: FakeTelegram) -> AsyncIterator[Application]:  # type: ignore[type-arg]
    app = _build(fake)
    app.add_handler(MessageHandler(filters.TEXT, _echo))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=1)
        try:
            yield app
        finally:  # client first, then (fixture) the fake
            await app.updater.stop()
            await app.stop()


async def test_polling_round_trip(fake_telegram: FakeTelegram) -> None:
    async with _polling(fake_telegram) as app:
        assert app.bot.username == fake_telegram.bot_username
        fake_telegram.user_message(42, "hi")
        [call] = await fake_telegram.wait_for("sendMessage")
        assert call.params["chat_id"] == 42
        assert call.params["text"] == "echo: hi"
        assert call.token == fake_telegram.token
        # offsets: the next poll confirms update 1, and a second message still arrives
        fake_telegram.user_message(42, "again")
        calls = await fake_telegram.wait_for("sendMessage", 2)
        assert calls[1].params["text"] == "echo: again"


async def test_forum_topic_reply_keeps_thread(fake_telegram: FakeTelegram) -> None:
    async with _polling(fake_telegram):
        fake_telegram.user_message(
            -1001, "in topic", chat_type="supergroup", thread_id=7, is_topic=True, title="Forum"
        )
        [call] = await fake_telegram.wait_for("sendMessage")
        assert call.params["message_thread_id"] == 7
        assert call.params["reply_parameters"]["message_id"] >= 1


async def test_rate_limit_surfaces_as_retry_after(fake_telegram: FakeTelegram) -> None:
    fake_telegram.fail_next("sendMessage", 429, retry_after=3)
    async with Bot(fake_telegram.token, base_url=f"{fake_telegram.base_url}/bot") as bot:
        with pytest.raises(RetryAfter, match="3"):
            await bot.send_message(42, "hello")
        msg = await bot.send_message(42, "hello")  # one-shot: next call succeeds
        assert msg.text == "hello" and msg.chat.id == 42
    assert [c.status for c in fake_telegram.calls_for("sendMessage")] == [429, 200]


async def test_wrong_token_and_webhook_conflict(fake_telegram: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with Bot("999:WRONG", base_url=f"{fake_telegram.base_url}/bot"):
            pass
    assert fake_telegram.calls[0].status == 401
    async with Bot(fake_telegram.token, base_url=f"{fake_telegram.base_url}/bot") as bot:
        assert await bot.set_webhook("http://127.0.0.1:1/hook", secret_token="s3cret")
        with pytest.raises(Conflict):
            await bot.get_updates(timeout=0)
        assert await bot.delete_webhook()
        fake_telegram.user_message(5, "/start@crosstalk_test_bot")
        [update] = await bot.get_updates(timeout=0)
        assert update.message is not None and update.message.text is not None
        assert update.message.entities[0].type == "bot_command"
        assert await bot.get_updates(offset=update.update_id + 1, timeout=0) == ()


async def test_webhook_delivery(fake_telegram: FakeTelegram, unused_tcp_port: int) -> None:
    app = _build(fake_telegram)
    app.add_handler(MessageHandler(filters.TEXT, _echo))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_webhook(
            listen="127.0.0.1",
            port=unused_tcp_port,
            url_path="hook",
            secret_token="s3cret",
            webhook_url=f"http://127.0.0.1:{unused_tcp_port}/hook",
        )
        try:
            assert fake_telegram.webhook_secret == "s3cret"
            update = fake_telegram.user_message(7, "via hook", push=False)
            assert await fake_telegram.deliver_webhook(update) == 200
            [call] = await fake_telegram.wait_for("sendMessage")
            assert call.params["text"] == "echo: via hook"
        finally:
            await app.updater.stop()
            await app.stop()
