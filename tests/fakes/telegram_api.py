"""The Bot API half of the Telegram fake: the token check, injected failures and stalls, the
methods (getMe, webhooks, sendMessage and editMessageText, the send methods of files, getFile,
setMyCommands) and getUpdates long polling, with the pollers counted (D36)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.base import Call, Failure, json_response

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

_MEDIA_METHODS = {
    "sendPhoto": "photo",
    "sendVoice": "voice",
    "sendAudio": "audio",
    "sendVideo": "video",
    "sendDocument": "document",
}


class TelegramBotApi:
    """Mixed into FakeTelegram (which provides the attributes and helpers declared here)."""

    harmless_methods: frozenset[str]
    token: str
    updates: list[dict[str, Any]]
    _replays: list[dict[str, Any]]
    _hang_polls: int
    webhook_url: str
    webhook_secret: str | None
    _message_ids: Iterator[int]
    _chats: dict[int, dict[str, Any]]
    menus: dict[str, list[str]]
    shown: dict[int, dict[str, Any]]
    files: dict[str, tuple[str, bytes]]
    media: list[dict[str, Any]]
    upload_names: dict[str, str]
    _polls: dict[int, web.Request]
    max_pollers: int
    _stalls: dict[str, int]
    _changed: asyncio.Event
    _stopping: asyncio.Event

    if TYPE_CHECKING:  # provided by FakeTelegram and EmulatorServer

        def record(self, call: Call) -> Call: ...
        async def _stall(self, method: str) -> bool: ...
        async def _hold(self, method: str) -> None: ...
        def _take_failure(self, method: str) -> Failure | None: ...
        def add_file(self, data: bytes, path: str) -> str: ...
        @property
        def bot_user(self) -> dict[str, Any]: ...

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
