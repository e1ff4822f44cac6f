"""The REST half of the Discord fake: bot-token checks, injected failures and stalls, and the
message endpoints (create with nonces and uploads, edit, delete, typing, reactions)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.base import Call, Failure, json_response

_ERRORS = {
    401: (0, "401: Unauthorized"),
    403: (50013, "Missing Permissions"),
    404: (10003, "Unknown Channel"),
    400: (50035, "Invalid Form Body"),
}


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DiscordRest:
    """Mixed into FakeDiscord (which provides the attributes and helpers declared here)."""

    token: str
    application_id: int
    bot_name: str
    echo_own_messages: bool
    base_url: str
    shown: dict[str, dict[str, Any]]
    nonces: dict[str, dict[str, Any]]
    nonce_replays: list[Call]
    uploads: list[dict[str, Any]]

    if TYPE_CHECKING:  # provided by FakeDiscord, DiscordGateway and EmulatorServer

        def record(self, call: Call) -> Call: ...
        def calls_for(self, method: str) -> list[Call]: ...
        async def _stall(self, method: str) -> bool: ...
        async def _hold(self, method: str) -> None: ...
        def _take_failure(self, method: str) -> Failure | None: ...
        def _guild_of(self, channel_id: int) -> int | None: ...
        def _author(self, author_id: int, bot: bool, username: str) -> dict[str, Any]: ...
        def message_payload(
            self,
            channel_id: int,
            content: str,
            *,
            guild_id: int | None,
            author: dict[str, Any],
            mentions: list[dict[str, Any]] | None = None,
            reference: dict[str, Any] | None = None,
        ) -> dict[str, Any]: ...
        async def _deliver(self, msg: dict[str, Any]) -> None: ...
        @property
        def bot_user(self) -> dict[str, Any]: ...
        @property
        def gateway_url(self) -> str: ...

    def _rest(self, name: str) -> Any:
        async def handler(request: web.Request) -> web.Response:
            return await self._handle(name, request)

        return handler

    def _error(self, status: int, failure: Failure | None = None) -> web.Response:
        code, message = _ERRORS.get(status, (0, f"{status}: Error"))
        body: dict[str, Any] = {"message": message, "code": code}
        headers: dict[str, str] = {}
        if status == 429:
            retry = failure.retry_after if failure and failure.retry_after is not None else 1.0
            body = {"message": "You are being rate limited.", "retry_after": retry, "global": False}
            # discord.py treats a 429 without "Via" as a Cloudflare ban (plain HTTPException).
            headers = {
                "Retry-After": str(max(1, int(retry))),
                "X-RateLimit-Scope": "user",
                "Via": "1.1 google",
            }
        if failure is not None:
            body.update(failure.body or {})
            headers.update(failure.headers)
        return json_response(body, status, headers)

    async def _handle(self, name: str, request: web.Request) -> web.Response:
        params: dict[str, Any] = dict(request.match_info)
        params.pop("tail", None)
        if request.can_read_body:
            if request.content_type == "application/json":
                params.update(await request.json())
            else:
                form = await request.post()
                if "payload_json" in form:
                    params.update(json.loads(str(form["payload_json"])))
                files = [v for k, v in form.items() if k.startswith("files[")]
                params["files"] = [
                    {"filename": f.filename, "data": f.file.read(), "content_type": f.content_type}
                    for f in files
                    if isinstance(f, web.FileField)
                ]
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bot ")
        call = self.record(Call(name, params, token, request.path, request.method))
        if token != self.token:
            call.status = 401
            return self._error(401)
        if await self._stall(name):  # stall_next: no effect, no answer while the fake runs
            call.status = 504
            return self._error(504)
        failure = self._take_failure(name)
        if failure is not None:
            call.status = failure.status
            return self._error(failure.status, failure)
        if name == "getCurrentUser":
            return json_response(self.bot_user)
        if name == "getApplication":
            return json_response(
                {
                    "id": str(self.application_id),
                    "name": self.bot_name,
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "owner": self._author(1, False, "owner"),
                    "verify_key": "0" * 64,
                    "flags": 0,
                    "team": None,
                    "summary": "",
                    "bot": self.bot_user,
                }
            )
        if name in ("getGateway", "getGatewayBot"):
            return json_response(
                {
                    "url": self.gateway_url,
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 999,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                }
            )
        if name in (
            "deleteMessage",
            "triggerTyping",
            "createReaction",
            "deleteOwnReaction",
        ):
            return web.Response(status=204)
        if name == "unknown":
            call.status = 404
            return json_response({"message": "404: Not Found", "code": 0}, 404)
        channel_id = int(params["channel_id"])
        nonce = params.get("nonce")
        if name == "createMessage" and nonce is not None:
            if len(str(nonce)) > 25:
                call.status = 400
                return json_response(
                    {
                        "message": "Invalid Form Body",
                        "code": 50035,
                        "errors": {
                            "nonce": {
                                "_errors": [
                                    {
                                        "code": "BASE_TYPE_MAX_LENGTH",
                                        "message": "Must be 25 or fewer in length.",
                                    }
                                ]
                            }
                        },
                    },
                    400,
                )
            if params.get("enforce_nonce") and str(nonce) in self.nonces:
                self.nonce_replays.append(call)  # no new message: the first one comes back
                return json_response(self.nonces[str(nonce)])
        if not params.get("content") and not params.get("embeds") and not params.get("files"):
            call.status = 400
            return json_response({"message": "Cannot send an empty message", "code": 50006}, 400)
        msg = self.message_payload(
            channel_id,
            params.get("content", ""),
            guild_id=self._guild_of(channel_id),
            author=self.bot_user,
            reference=params.get("message_reference"),
        )
        msg["author"] = {**self.bot_user, "public_flags": 0}
        if name == "editMessage":
            if str(params["message_id"]) not in self.shown:
                call.status = 404
                return json_response({"message": "Unknown Message", "code": 10008}, 404)
            msg["id"], msg["edited_timestamp"] = params["message_id"], _now()
            self.shown[str(msg["id"])]["content"] = msg["content"]
            self.shown[str(msg["id"])]["edits"] += 1
            if "components" in params:
                self.shown[str(msg["id"])]["components"] = params["components"]
        else:
            self.shown[str(msg["id"])] = {
                "channel_id": channel_id,
                "content": msg["content"],
                "edits": 0,
                "components": params.get("components") or [],
            }
            for n, f in enumerate(params.get("files") or []):  # uploads (D78)
                where = f"{self.base_url}/attachments/{channel_id}/{msg['id']}"
                msg["attachments"].append(
                    {
                        "id": f"{msg['id']}{n}",
                        "filename": f["filename"],
                        "size": len(f["data"]),
                        "url": f"{where}/{f['filename']}",
                        "proxy_url": f"{where}/{f['filename']}",
                        "content_type": f["content_type"],
                    }
                )
                self.uploads.append({"channel_id": channel_id, **f})
            if nonce is not None:
                msg["nonce"] = str(nonce)
                self.nonces[str(nonce)] = msg
            if self.echo_own_messages:
                await self._deliver(msg)
        await self._hold("upload" if params.get("files") else name)  # hold_next("upload")
        return json_response(msg)

    def created_messages(self) -> list[Call]:
        """createMessage calls that created a message (not refused, not a nonce replay)."""
        return [
            c
            for c in self.calls_for("createMessage")
            if c.status == 200 and not any(c is r for r in self.nonce_replays)
        ]
