"""Loopback fake of the Telegram Bot API for python-telegram-bot 22.8.

Point PTB at it with ``ApplicationBuilder().token(fake.token).base_url(f"{url}/bot")
.base_file_url(f"{url}/file/bot")``; every call then arrives as ``POST /bot{token}/{method}``.
The fake mirrors the behaviour PTB depends on: form fields whose non-string values are JSON,
error bodies with the *same* HTTP status (PTB maps the status, not ``error_code``), long polling
with offsets that can be released on :meth:`stop`, and 409 on ``getUpdates`` while a webhook is
set.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.base import Call, EmulatorServer, Failure, json_response

_DESCRIPTIONS = {
    400: "Bad Request: chat not found",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request",
    429: "Too Many Requests: retry after {retry_after}",
}
# Fields that are strings in the Bot API; kept raw so that text="123" stays a str.
_STRING_FIELDS = {"text", "caption", "parse_mode", "url", "secret_token", "title", "description"}
_ENTITY_RE = re.compile(r"(?P<cmd>^/\w+(@\w+)?)|(?P<mention>@\w+)")


_MEDIA_METHODS = {
    "sendPhoto": "photo",
    "sendVoice": "voice",
    "sendAudio": "audio",
    "sendVideo": "video",
    "sendDocument": "document",
}


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class FakeTelegram(EmulatorServer):
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

    # -- HTTP side --------------------------------------------------------------------------

    async def _decode(self, request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            return dict(await request.json()) if request.can_read_body else {}
        params: dict[str, Any] = {}
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):  # multipart upload
                params[key] = value.file.read()
                self.upload_names[key] = value.filename
            elif not isinstance(value, str):
                params[key] = bytes(value)
            elif key in _STRING_FIELDS:
                params[key] = value
            else:
                try:
                    params[key] = json.loads(value)
                except ValueError:
                    params[key] = value
        params.update({k: v for k, v in request.query.items() if k not in params})
        return params

    def _error(self, status: int, failure: Failure | None = None) -> web.Response:
        retry_after = failure.retry_after if failure else None
        if status == 429 and retry_after is None:
            retry_after = 1
        body: dict[str, Any] = {
            "ok": False,
            "error_code": status,
            "description": _DESCRIPTIONS.get(status, "Error").format(retry_after=retry_after),
        }
        if retry_after is not None:
            body["parameters"] = {"retry_after": int(retry_after)}
        if failure and failure.body:
            body.update(failure.body)
        return json_response(body, status, failure.headers if failure else None)

    async def _handle(self, request: web.Request) -> web.Response:
        method, token = request.match_info["method"], request.match_info["token"]
        params = await self._decode(request)
        call = Call(method, params, token, request.path, request.method)
        if token != self.token:
            call.status = 401
            self.record(call)
            return self._error(401)
        if self._stalls.get(method, 0) > 0:  # stall_next: no effect, no answer while it runs
            call.status = 504
            self.record(call)
            await self._stall(method)
            return self._error(504)
        failure = self._take_failure(method)
        if failure is not None:
            call.status = failure.status
            self.record(call)
            return self._error(failure.status, failure)
        if method == "getUpdates" and self.webhook_url:
            call.status = 409
            self.record(call)
            return json_response(
                {
                    "ok": False,
                    "error_code": 409,
                    "description": (
                        "Conflict: can't use getUpdates method while webhook is active; "
                        "use deleteWebhook to delete the webhook first"
                    ),
                },
                409,
            )
        self.record(call)
        if method == "getUpdates":
            return await self._counted_poll(request, params)
        result = self._result(method, params)
        if result is None:
            call.status = 404
            return self._error(404)
        if isinstance(result, web.Response):
            call.status = result.status
            return result
        await self._hold(method)
        return json_response({"ok": True, "result": result})

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return self.bot_user
        if method == "setWebhook":
            self.webhook_url = str(params.get("url", ""))
            self.webhook_secret = params.get("secret_token")
            return True
        if method == "deleteWebhook":
            self.webhook_url, self.webhook_secret = "", None
            if params.get("drop_pending_updates"):
                self.updates.clear()
            return True
        if method == "getWebhookInfo":
            return {
                "url": self.webhook_url,
                "has_custom_certificate": False,
                "pending_update_count": 0 if self.webhook_url else len(self.updates),
            }
        if method == "editMessageText" and int(params.get("message_id") or 0) not in self.shown:
            return self._error(
                400, Failure(400, {"description": "Bad Request: message to edit not found"})
            )
        if method in ("sendMessage", "editMessageText"):
            if not str(params.get("text", "")).strip():
                return self._error(
                    400, Failure(400, {"description": "Bad Request: message text is empty"})
                )
            return self._message(params)
        if method in _MEDIA_METHODS:
            return self._media_message(method, params)
        if method == "getFile":
            found = self.files.get(str(params.get("file_id")))
            if found is None:
                return self._error(
                    400, Failure(400, {"description": "Bad Request: invalid file_id"})
                )
            return {
                "file_id": params["file_id"],
                "file_unique_id": f"U{params['file_id']}",
                "file_size": len(found[1]),
                "file_path": found[0],
            }
        if method == "setMyCommands":  # D74: a chat scope needs a chat that wrote to the bot
            scope = params.get("scope") or {"type": "default"}
            chat_id = scope.get("chat_id")
            if scope.get("type") == "chat" and chat_id not in self._chats:
                return self._error(
                    400, Failure(400, {"description": "Bad Request: chat not found"})
                )
            key = "default" if chat_id is None else str(chat_id)
            self.menus[key] = [c["command"] for c in params.get("commands") or []]
            return True
        if method in self.harmless_methods:
            return True
        return None

    def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        chat = self._chats.get(chat_id) if isinstance(chat_id, int) else None
        if chat is None:
            private = isinstance(chat_id, int) and chat_id > 0
            chat = {"id": chat_id, "type": "private" if private else "supergroup"}
        message_id = params.get("message_id") or next(self._message_ids)
        msg: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat,
            "from": self.bot_user,
            "text": params["text"],
        }
        if params.get("entities"):
            msg["entities"] = params["entities"]
        shown = self.shown.setdefault(
            int(message_id),
            {"chat_id": chat_id, "thread_id": params.get("message_thread_id"), "edits": 0},
        )
        if "message_id" in params:
            shown["edits"] += 1
        shown.update(text=params["text"], entities=list(params.get("entities") or []))
        shown["reply_markup"] = params.get("reply_markup")  # an edit without one removes it
        if params.get("message_thread_id") is not None:
            msg["message_thread_id"] = params["message_thread_id"]
            msg["is_topic_message"] = True
        reply = params.get("reply_parameters")
        if isinstance(reply, dict) and "message_id" in reply:
            msg["reply_to_message"] = {
                "message_id": reply["message_id"],
                "date": int(time.time()),
                "chat": chat,
            }
        return msg

    def _media_message(self, method: str, params: dict[str, Any]) -> Any:
        """sendPhoto/sendVoice/sendAudio/sendVideo/sendDocument with an uploaded file (D78):
        the message carries it as Telegram does, and `media` keeps what was uploaded."""
        field = _MEDIA_METHODS[method]
        data = params.get(field)
        if not isinstance(data, bytes) or not data:
            return self._error(
                400,
                Failure(400, {"description": f"Bad Request: there is no {field} in the request"}),
            )
        limit = 10 * 1024 * 1024 if field == "photo" else 50 * 1024 * 1024
        if len(data) > limit:
            return self._error(400, Failure(400, {"description": "Bad Request: file is too big"}))
        caption = str(params.get("caption") or "")
        msg = self._message({**params, "text": caption})
        del msg["text"]
        if caption:
            msg["caption"] = caption
        file_id = self.add_file(data, f"sent/{field}{len(self.files) + 1}")
        info = {"file_id": file_id, "file_unique_id": f"U{file_id}", "file_size": len(data)}
        if field == "photo":
            msg[field] = [{**info, "width": 1, "height": 1}]
        elif field in ("voice", "audio"):
            msg[field] = {**info, "duration": 1}
        elif field == "video":
            msg[field] = {**info, "duration": 1, "width": 1, "height": 1}
        else:
            msg[field] = info
        shown = self.shown[int(msg["message_id"])]
        shown["media"] = {"kind": field, "data": data, "name": self.upload_names.get(field)}
        self.media.append({"method": method, "chat_id": params.get("chat_id"), "data": data})
        return msg

    def visible(self) -> list[dict[str, Any]]:
        """The bot's messages as users see them now (edits applied), oldest first."""
        return [self.shown[k] for k in sorted(self.shown)]

    def pollers(self) -> int:
        """getUpdates calls held open now by clients still connected (a killed process's
        poll is not counted once its socket closed)."""
        return sum(
            1
            for r in self._polls.values()
            if r.transport is not None and not r.transport.is_closing()
        )

    async def _counted_poll(self, request: web.Request, params: dict[str, Any]) -> web.Response:
        self._polls[id(request)] = request
        self.max_pollers = max(self.max_pollers, self.pollers())
        try:
            return await self._get_updates(params)
        finally:
            self._polls.pop(id(request), None)

    async def _get_updates(self, params: dict[str, Any]) -> web.Response:
        """Long poll: answer as soon as updates exist, else hold up to ``timeout`` seconds."""
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        if self._hang_polls > 0:
            self._hang_polls -= 1
            await self._stopping.wait()
            return json_response({"ok": True, "result": []})
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        if self._replays:
            replays, self._replays = self._replays, []
            return json_response({"ok": True, "result": replays + self.updates[:limit]})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.updates and not self._replays and not self._stopping.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                break
        return json_response({"ok": True, "result": self.updates[:limit]})
