"""Loopback fake of the Telegram Bot API for python-telegram-bot 22.8.

Point PTB at it with ``ApplicationBuilder().token(fake.token).base_url(f"{url}/bot")
.base_file_url(f"{url}/file/bot")``; every call then arrives as ``POST /bot{token}/{method}``.
The fake mirrors the behaviour PTB depends on: form fields whose non-string values are JSON,
error bodies with the *same* HTTP status (PTB maps the status, not ``error_code``), long polling
with offsets that can be released on :meth:`stop`, and 409 on ``getUpdates`` while a webhook is
set. The Bot API side (its methods, long polling) is in :mod:`tests.fakes.telegram_api`.
"""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.base import Call, EmulatorServer
from tests.fakes.telegram_api import TelegramBotApi

_ENTITY_RE = re.compile(r"(?P<cmd>^/\w+(@\w+)?)|(?P<mention>@\w+)")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class FakeTelegram(TelegramBotApi, EmulatorServer):
    """Bot API fake: getMe, getUpdates, sendMessage, the send methods of files, webhooks and
    harmless no-op methods."""

    #: Methods answered with ``true`` (PTB only needs the call to succeed).
    harmless_methods = frozenset(
        {
            "sendChatAction",
            "deleteMessage",
            "setMyCommands",
            "deleteMyCommands",
            "answerCallbackQuery",
            "setMessageReaction",
            "pinChatMessage",
            "close",
            "logOut",
        }
    )

    client_max_size = 51 * 1024 * 1024  # the Bot API takes files up to 50 MB

    def __init__(
        self,
        token: str = "123456789:TEST-fake-telegram-token",
        *,
        bot_username: str = "crosstalk_test_bot",
        bot_first_name: str = "Crosstalk",
    ) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.bot_first_name = bot_first_name
        self.updates: list[dict[str, Any]] = []
        self._replays: list[dict[str, Any]] = []  # sent by the next poll whatever its offset
        self._hang_polls = 0
        self.webhook_url: str = ""
        self.webhook_secret: str | None = None
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self._chats: dict[int, dict[str, Any]] = {}
        self.menus: dict[str, list[str]] = {}
        """setMyCommands per scope: ``default`` or a chat id, the command names (D74)."""
        #: What users see: every message the bot sent, by id, with its latest text/entities.
        self.shown: dict[int, dict[str, Any]] = {}
        self.files: dict[str, tuple[str, bytes]] = {}  # file_id → (file_path, bytes)
        #: Every file the bot sent (sendPhoto, sendVoice, ...), in order (D78).
        self.media: list[dict[str, Any]] = []
        self.upload_names: dict[str, str] = {}  # form field → the last uploaded file's name
        self._session: aiohttp.ClientSession | None = None
        self._polls: dict[int, web.Request] = {}
        #: The most getUpdates long polls ever held open at once by live clients (a second
        #: poller is a conflict on real Telegram: exactly one process may poll, D36).
        self.max_pollers = 0
        super().__init__()

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.*}", self._download)

    @property
    def bot_user(self) -> dict[str, Any]:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.bot_first_name,
            "username": self.bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    # -- inbound side (what users "send") ---------------------------------------------------

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an Update for getUpdates (``update_id`` is assigned when missing)."""
        update.setdefault("update_id", next(self._update_ids))
        self.updates.append(update)
        self._notify()
        return update

    def redeliver(self, update: dict[str, Any]) -> None:
        """Send an update again, as Telegram does when the offset past it was never confirmed
        (the bot crashed after receiving it); the next getUpdates returns it whatever offset
        it asks for."""
        self._replays.append(update)
        self._notify()

    def hang_next_poll(self, count: int = 1) -> None:
        """The next `count` getUpdates calls never answer (until the client gives up or the
        fake stops): a long poll that hangs without an error."""
        self._hang_polls += count

    def edit_message(self, update: dict[str, Any], text: str) -> dict[str, Any]:
        """Queue an ``edited_message`` update for a message sent earlier."""
        edited = {**update["message"], "text": text, "edit_date": int(time.time())}
        return self.push_update({"update_id": next(self._update_ids), "edited_message": edited})

    def user_message(
        self,
        chat_id: int,
        text: str,
        *,
        chat_type: str = "private",
        user_id: int | None = None,
        thread_id: int | None = None,
        is_topic: bool = False,
        title: str | None = None,
        reply_to_bot: bool = False,
        username: str = "alice",
        push: bool = True,
    ) -> dict[str, Any]:
        """Build a realistic message Update (entities for /commands and @mentions included).

        It is queued for getUpdates unless ``push=False``. Topic replies only carry
        ``message_thread_id`` in PTB when ``is_topic=True`` (as with real forum topics).
        """
        uid = user_id if user_id is not None else (chat_id if chat_type == "private" else 1001)
        sender = {
            "id": uid,
            "is_bot": False,
            "first_name": username.title(),
            "username": username,
            "language_code": "en",
        }
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat.update(first_name=sender["first_name"], username=username)
        else:
            chat["title"] = title or f"Chat {chat_id}"
            if is_topic:
                chat["is_forum"] = True
        self._chats[chat_id] = chat
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": sender,
            "text": text,
        }
        entities = [
            {
                "type": "bot_command" if m.group("cmd") else "mention",
                "offset": _utf16_len(text[: m.start()]),
                "length": _utf16_len(m.group(0)),
            }
            for m in _ENTITY_RE.finditer(text)
        ]
        if entities:
            message["entities"] = entities
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            if is_topic:
                message["is_topic_message"] = True
        if reply_to_bot:
            message["reply_to_message"] = {
                "message_id": next(self._message_ids),
                "date": int(time.time()) - 60,
                "chat": chat,
                "from": self.bot_user,
                "text": "earlier bot reply",
            }
        update = {"update_id": next(self._update_ids), "message": message}
        return self.push_update(update) if push else update

    def press(
        self, message_id: int, label: str, *, user_id: int, username: str = "alice"
    ) -> dict[str, Any]:
        """Press the inline-keyboard button `label` under the bot's message `message_id`, as
        Telegram delivers it: a ``callback_query`` update with the button's callback data."""
        shown = self.shown[message_id]
        data = next(
            b["callback_data"]
            for row in shown["reply_markup"]["inline_keyboard"]
            for b in row
            if b["text"] == label
        )
        chat_id = shown["chat_id"]
        chat = self._chats.get(chat_id) or {"id": chat_id, "type": "private"}
        sender = {"id": user_id, "is_bot": False, "first_name": username.title()}
        query = {
            "id": f"cq{next(self._update_ids)}",
            "from": sender,
            "chat_instance": str(chat_id),
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": chat,
                "from": self.bot_user,
                "text": shown["text"],
            },
        }
        return self.push_update({"update_id": next(self._update_ids), "callback_query": query})

    def add_file(self, data: bytes, path: str) -> str:
        """Store a file users sent; returns its ``file_id`` (served by getFile + download)."""
        file_id = f"FILE{len(self.files) + 1:04d}"
        self.files[file_id] = (path, data)
        return file_id

    def user_media(
        self,
        chat_id: int,
        kind: str,
        data: bytes,
        *,
        caption: str | None = None,
        name: str | None = None,
        mime: str | None = None,
    ) -> dict[str, Any]:
        """A private message carrying a ``photo``, ``voice``, ``audio``, ``video`` or
        ``document`` (with an optional caption), queued for getUpdates."""
        update = self.user_message(chat_id, caption or "", push=False)
        message = update["message"]
        del message["text"]
        message.pop("entities", None)
        if caption:
            message["caption"] = caption
        file_id = self.add_file(data, f"{kind}s/{name or kind}")
        common = {"file_id": file_id, "file_unique_id": f"U{file_id}", "file_size": len(data)}
        if kind == "photo":
            small = {
                **common,
                "file_id": file_id + "s",
                "width": 90,
                "height": 90,
                "file_size": 100,
            }
            message["photo"] = [small, {**common, "width": 1280, "height": 960}]
        elif kind == "voice":
            message["voice"] = {**common, "duration": 3, "mime_type": mime or "audio/ogg"}
        else:
            message[kind] = {
                **common,
                "file_name": name,
                "mime_type": mime,
                **(
                    {"duration": 5, "width": 640, "height": 480}
                    if kind == "video"
                    else {"duration": 5}
                    if kind == "audio"
                    else {}
                ),
            }
        return self.push_update(update)

    async def _download(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        call = self.record(
            Call("download", {"path": path}, request.match_info["token"], request.path, "GET")
        )
        if call.token != self.token:
            call.status = 401
            return web.Response(status=401)
        for file_path, data in self.files.values():
            if file_path == path:
                return web.Response(body=data, content_type="application/octet-stream")
        call.status = 404
        return web.Response(status=404)

    async def deliver_webhook(self, update: dict[str, Any]) -> int:
        """POST an Update to the registered webhook like Telegram does; returns the status."""
        assert self.webhook_url, "no webhook set"
        update.setdefault("update_id", next(self._update_ids))
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.webhook_secret or ""}
        async with self._session.post(self.webhook_url, json=update, headers=headers) as resp:
            return resp.status

    async def _on_stop(self) -> None:
        if self._session is not None:
            await self._session.close()

    def visible(self) -> list[dict[str, Any]]:
        """The bot's messages as users see them now (edits applied), oldest first."""
        return [self.shown[k] for k in sorted(self.shown)]
