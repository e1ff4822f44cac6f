"""Loopback fake of Discord's REST API (v10) and gateway for discord.py 2.7.1.

discord.py has no per-client endpoint setting: it reads two *process-global* class attributes,
``discord.http.Route.BASE`` and ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (a
``yarl.URL``). :func:`patch_discord_library` sets both (through ``monkeypatch`` when given, so
they are restored). The gateway speaks the real protocol: HELLO, heartbeats in any order,
IDENTIFY (bad token closes 4004), READY, GUILD_CREATE and MESSAGE_CREATE, zlib-stream compressed
when asked, and it enforces the intents the client sent (MESSAGE_CONTENT blanking included), which
is what catches a missing ``intents.message_content = True``. The gateway is in
:mod:`tests.fakes.discord_gateway`, REST in :mod:`tests.fakes.discord_rest`, commands and
interactions in :mod:`tests.fakes.discord_interactions`.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes.base import Call, EmulatorServer
from tests.fakes.discord_gateway import DiscordGateway, GatewayConn
from tests.fakes.discord_interactions import DiscordInteractions
from tests.fakes.discord_rest import DiscordRest


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


class FakeDiscord(DiscordInteractions, DiscordGateway, DiscordRest, EmulatorServer):
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
        self.connections: list[GatewayConn] = []
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

    def visible(self) -> list[dict[str, Any]]:
        """The bot's messages as users see them now (edits applied), oldest first."""
        return [self.shown[k] for k in sorted(self.shown, key=int)]
