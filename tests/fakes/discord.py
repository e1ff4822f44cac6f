"""Loopback fake of Discord's REST API (v10) and gateway for discord.py 2.7.1.

discord.py has no per-client endpoint setting: it reads two *process-global* class attributes,
``discord.http.Route.BASE`` and ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (a
``yarl.URL``). :func:`patch_discord_library` sets both (through ``monkeypatch`` when given, so
they are restored). The gateway speaks the real protocol: HELLO, heartbeats in any order,
IDENTIFY (bad token closes 4004), READY, GUILD_CREATE and MESSAGE_CREATE, zlib-stream compressed
when asked, and it enforces the intents the client sent (MESSAGE_CONTENT blanking included), which
is what catches a missing ``intents.message_content = True``.
"""

from __future__ import annotations

import itertools
import json
import time
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.base import Call, EmulatorServer, Failure, json_response
from tests.fakes.discord_interactions import DiscordInteractions

GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT = 1 << 9, 1 << 12, 1 << 15
_ERRORS = {
    401: (0, "401: Unauthorized"),
    403: (50013, "Missing Permissions"),
    404: (10003, "Unknown Channel"),
    400: (50035, "Invalid Form Body"),
}


def patch_discord_library(monkeypatch: Any, api_base: str, gateway_url: str) -> None:
    """Point discord.py at a fake. Pass pytest's ``monkeypatch`` (or ``None`` to set for good)."""
    import discord.gateway
    import discord.http
    import yarl

    targets = [
        (discord.http.Route, "BASE", api_base),
        (discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(gateway_url)),
    ]
    for owner, name, value in targets:
        if monkeypatch is None:
            setattr(owner, name, value)
        else:
            monkeypatch.setattr(owner, name, value)


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class _Conn:
    """One gateway connection: its compressor, sequence number and identify state."""

    ws: web.WebSocketResponse
    zlib_ctx: Any = None
    seq: int = 0
    intents: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class FakeDiscord(DiscordInteractions, EmulatorServer):
    """Discord REST + gateway fake with one guild (text channel + thread) by default."""

    GUILD_ID, CHANNEL_ID, THREAD_ID, DM_CHANNEL_ID = 1000000001, 1000000002, 1000000003, 2000000001

    def __init__(
        self,
        token: str = "fake-discord-token",
        *,
        bot_id: int = 900000000001,
        bot_name: str = "crosstalk",
        application_id: int = 900000000002,
        echo_own_messages: bool = True,
        heartbeat_interval_ms: int = 41250,
    ) -> None:
        self.token, self.bot_id, self.bot_name = token, bot_id, bot_name
        self.application_id = application_id
        self.echo_own_messages = echo_own_messages
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.guilds: dict[int, dict[str, Any]] = {}
        #: What users see: the bot's messages by id with their latest content (edits applied).
        self.shown: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}  # CDN path → bytes of files users uploaded
        self.connections: list[_Conn] = []
        #: messages created with a nonce, and the createMessage calls that were answered with
        #: an earlier message because their nonce was enforced and known (as Discord does)
        self.nonces: dict[str, dict[str, Any]] = {}
        self.nonce_replays: list[Call] = []
        #: files the bot uploaded with a message (D78): channel, filename, data, content type
        self.uploads: list[dict[str, Any]] = []
        self._ids = itertools.count(int(time.time() * 1000 - 1420070400000) << 22)
        self._init_interactions()  # commands and interactions (tests/fakes/discord_interactions)
        super().__init__()
        self.add_guild(
            self.GUILD_ID,
            "Test Guild",
            {self.CHANNEL_ID: "general"},
            threads={self.THREAD_ID: (self.CHANNEL_ID, "a-thread")},
        )

    def _setup_routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/", self._gateway)
        r.add_get("/api/v10/users/@me", self._rest("getCurrentUser"))
        r.add_get("/api/v10/oauth2/applications/@me", self._rest("getApplication"))
        r.add_get("/api/v10/gateway", self._rest("getGateway"))
        r.add_get("/api/v10/gateway/bot", self._rest("getGatewayBot"))
        r.add_post("/api/v10/channels/{channel_id}/messages", self._rest("createMessage"))
        r.add_patch(
            "/api/v10/channels/{channel_id}/messages/{message_id}", self._rest("editMessage")
        )
        r.add_delete(
            "/api/v10/channels/{channel_id}/messages/{message_id}", self._rest("deleteMessage")
        )
        r.add_post("/api/v10/channels/{channel_id}/typing", self._rest("triggerTyping"))
        reaction = "/api/v10/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
        r.add_put(reaction, self._rest("createReaction"))
        r.add_delete(reaction, self._rest("deleteOwnReaction"))
        self._setup_interaction_routes(app)
        r.add_route("*", "/api/v10/{tail:.*}", self._rest("unknown"))
        r.add_get("/attachments/{channel_id}/{file_id}/{name}", self._cdn)

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"{self.ws_url}/"

    @property
    def bot_user(self) -> dict[str, Any]:
        return {
            "id": str(self.bot_id),
            "username": self.bot_name,
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": True,
            "flags": 0,
            "verified": True,
            "mfa_enabled": False,
        }

    def add_guild(
        self,
        guild_id: int,
        name: str,
        channels: dict[int, str],
        threads: dict[int, tuple[int, str]] | None = None,
    ) -> None:
        """Configure a guild (before the client connects): text channels and public threads."""
        chans: list[dict[str, Any]] = [
            {
                "id": str(cid),
                "type": 0,
                "name": cname,
                "position": i,
                "guild_id": str(guild_id),
                "permission_overwrites": [],
                "parent_id": None,
                "nsfw": False,
                "topic": None,
                "last_message_id": None,
                "rate_limit_per_user": 0,
            }
            for i, (cid, cname) in enumerate(channels.items())
        ]
        self.guilds[guild_id] = {
            "id": str(guild_id),
            "name": name,
            "owner_id": "1",
            "unavailable": False,
            "member_count": 2,
            "large": False,
            "features": [],
            "emojis": [],
            "stickers": [],
            "roles": [
                {
                    "id": str(guild_id),
                    "name": "@everyone",
                    "permissions": "1071698660929",
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "members": [
                {
                    "user": self.bot_user,
                    "roles": [],
                    "joined_at": _now(),
                    "deaf": False,
                    "mute": False,
                    "flags": 0,
                }
            ],
            "channels": chans,
            "threads": [],
            "voice_states": [],
            "presences": [],
            "joined_at": _now(),
            "premium_tier": 0,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "preferred_locale": "en-US",
            "system_channel_flags": 0,
        }
        for tid, (parent, tname) in (threads or {}).items():
            self.guilds[guild_id]["threads"].append(self._thread(guild_id, tid, parent, tname))

    def _thread(self, guild_id: int, tid: int, parent: int, name: str) -> dict[str, Any]:
        return {
            "id": str(tid),
            "type": 11,
            "name": name,
            "guild_id": str(guild_id),
            "parent_id": str(parent),
            "owner_id": "1",
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": _now(),
                "locked": False,
            },
        }

    def _guild_of(self, channel_id: int) -> int | None:
        for gid, guild in self.guilds.items():
            if any(c["id"] == str(channel_id) for c in guild["channels"] + guild["threads"]):
                return gid
        return None

    # -- gateway ----------------------------------------------------------------------------

    async def _send(self, conn: _Conn, payload: dict[str, Any]) -> None:
        data = json.dumps(payload)
        if conn.zlib_ctx is not None:
            ctx = conn.zlib_ctx
            await conn.ws.send_bytes(ctx.compress(data.encode()) + ctx.flush(zlib.Z_SYNC_FLUSH))
        else:  # uncompressed or zstd-stream: discord.py only decompresses binary frames
            await conn.ws.send_str(data)

    async def _dispatch(self, conn: _Conn, event: str, data: dict[str, Any]) -> None:
        conn.seq += 1
        await self._send(conn, {"op": 0, "t": event, "s": conn.seq, "d": data})

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = await self._open_ws(request)
        conn = _Conn(
            ws, zlib.compressobj() if request.query.get("compress") == "zlib-stream" else None
        )
        self.record(Call("CONNECT", dict(request.query), None, request.path_qs, "GET", None))
        await self._send(conn, {"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
        try:
            async for msg in ws:
                if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    break
                await self._on_op(conn, json.loads(msg.data))
        finally:
            self._forget_ws(ws)
            if conn in self.connections:
                self.connections.remove(conn)
        return ws

    async def _on_op(self, conn: _Conn, payload: dict[str, Any]) -> None:
        op: int = payload.get("op", -1)
        d = payload.get("d")
        names = {
            1: "HEARTBEAT",
            2: "IDENTIFY",
            3: "PRESENCE_UPDATE",
            6: "RESUME",
            8: "REQUEST_GUILD_MEMBERS",
        }
        params: dict[str, Any] = d if isinstance(d, dict) else {"d": d}
        token = params.get("token")
        self.record(Call(names.get(op, f"OP{op}"), params, token, "/", "WS", None))
        if op == 1:
            await self._send(conn, {"op": 11})
        elif op in (2, 6) and token != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
        elif op == 2:
            conn.intents = int(params.get("intents", 0))
            ready = {
                "v": 10,
                "user": self.bot_user,
                "session_id": "fake-session",
                "guilds": [{"id": str(g), "unavailable": True} for g in self.guilds],
                "resume_gateway_url": self.gateway_url,
                "private_channels": [],
                "relationships": [],
                "application": {"id": str(self.application_id), "flags": 0},
            }
            if "shard" in params:
                ready["shard"] = params["shard"]
            self.connections.append(conn)
            await self._dispatch(conn, "READY", ready)
            for guild in self.guilds.values():
                await self._dispatch(conn, "GUILD_CREATE", guild)
        elif op == 6:
            conn.intents = conn.intents or 0
            self.connections.append(conn)
            await self._dispatch(conn, "RESUMED", {})
        elif op == 8 and isinstance(d, dict):
            await self._dispatch(
                conn,
                "GUILD_MEMBERS_CHUNK",
                {
                    "guild_id": d.get("guild_id"),
                    "members": [],
                    "chunk_index": 0,
                    "chunk_count": 1,
                    "nonce": d.get("nonce"),
                },
            )

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a raw DISPATCH event to every identified connection."""
        for conn in list(self.connections):
            await self._dispatch(conn, event, data)

    def _author(self, author_id: int, bot: bool, username: str) -> dict[str, Any]:
        return {
            "id": str(author_id),
            "username": username,
            "discriminator": "0",
            "global_name": username.title(),
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def message_payload(
        self,
        channel_id: int,
        content: str,
        *,
        guild_id: int | None,
        author: dict[str, Any],
        mentions: list[dict[str, Any]] | None = None,
        reference: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A full Message object, as returned by REST and sent in MESSAGE_CREATE."""
        msg: dict[str, Any] = {
            "id": str(next(self._ids)),
            "channel_id": str(channel_id),
            "type": 0,
            "content": content,
            "author": author,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": mentions or [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": [],
            "pinned": False,
            "flags": 0,
        }
        if guild_id is not None:
            msg["guild_id"] = str(guild_id)
            msg["member"] = {
                "roles": [],
                "joined_at": _now(),
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
        if reference:
            msg["message_reference"] = reference
            msg["type"] = 19
        return msg

    async def user_message(
        self,
        channel_id: int,
        content: str,
        *,
        guild_id: int | None = None,
        author_id: int = 800000000001,
        username: str = "alice",
        mentions_bot: bool = False,
        thread: bool = False,
        bot_author: bool = False,
        files: list[tuple[str, str, bytes]] | None = None,
        voice_message: bool = False,
    ) -> dict[str, Any]:
        """Inject MESSAGE_CREATE. ``voice_message``: the first file is a voice message (the
        IS_VOICE_MESSAGE flag with its duration and waveform, as Discord's apps send one).
        ``guild_id`` is inferred from configured channels; a channel
        not in any guild is a DM. ``thread=True`` with an unknown channel creates a thread under
        the first channel (THREAD_CREATE is dispatched first). Returns the full payload."""
        guild_id = guild_id or self._guild_of(channel_id)
        if thread and guild_id is None:
            guild_id = self.GUILD_ID
        if thread and self._guild_of(channel_id) is None and guild_id is not None:
            parent = int(self.guilds[guild_id]["channels"][0]["id"])
            data = self._thread(guild_id, channel_id, parent, f"thread-{channel_id}")
            self.guilds[guild_id]["threads"].append(data)
            await self.dispatch("THREAD_CREATE", {**data, "newly_created": True})
        mentions = []
        if mentions_bot:
            mentions.append(self.bot_user)
            if f"<@{self.bot_id}>" not in content:
                content = f"<@{self.bot_id}> {content}"
        msg = self.message_payload(
            channel_id,
            content,
            guild_id=guild_id,
            author=self._author(author_id, bot_author, username),
            mentions=mentions,
        )
        for name, mime, blob in files or []:  # (filename, content type, bytes)
            file_id = str(next(self._ids))
            path = f"/attachments/{channel_id}/{file_id}/{name}"
            self.files[path] = blob
            msg["attachments"].append(
                {
                    "id": file_id,
                    "filename": name,
                    "size": len(blob),
                    "content_type": mime,
                    "url": f"{self.base_url}{path}",
                    "proxy_url": f"{self.base_url}{path}",
                }
            )
        if voice_message and msg["attachments"]:
            msg["flags"] = 1 << 13  # IS_VOICE_MESSAGE
            msg["attachments"][0].update(duration_secs=3.0, waveform="AAAA", flags=0)
        await self._deliver(msg)
        return msg

    async def _cdn(self, request: web.Request) -> web.Response:
        self.record(Call("cdn", dict(request.match_info), None, request.path, "GET"))
        data = self.files.get(request.path)
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _deliver(self, msg: dict[str, Any]) -> None:
        """MESSAGE_CREATE with intent filtering: GUILD_/DIRECT_MESSAGES gate delivery, and
        without MESSAGE_CONTENT the content is blanked (not for DMs, mentions, own messages)."""
        is_dm = "guild_id" not in msg
        own = msg["author"]["id"] == str(self.bot_id)
        exempt = is_dm or own or any(m["id"] == str(self.bot_id) for m in msg["mentions"])
        for conn in list(self.connections):
            intents = conn.intents or 0
            if not intents & (DIRECT_MESSAGES if is_dm else GUILD_MESSAGES):
                continue
            data = msg
            if not exempt and not intents & MESSAGE_CONTENT:
                data = {**msg, "content": "", "embeds": [], "attachments": [], "components": []}
            await self._dispatch(conn, "MESSAGE_CREATE", data)

    def visible(self) -> list[dict[str, Any]]:
        """The bot's messages as users see them now (edits applied), oldest first."""
        return [self.shown[k] for k in sorted(self.shown, key=int)]

    # -- REST -------------------------------------------------------------------------------

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

    async def message_update(self, original: dict[str, Any], content: str) -> dict[str, Any]:
        """Inject MESSAGE_UPDATE: a user edited ``original`` (as returned by user_message)."""
        edited = {**original, "content": content, "edited_timestamp": _now()}
        for conn in list(self.connections):
            await self._dispatch(conn, "MESSAGE_UPDATE", edited)
        return edited

    async def redeliver(self, msg: dict[str, Any]) -> None:
        """Send a MESSAGE_CREATE again, as Discord replays events after a RESUME."""
        await self._deliver(msg)
