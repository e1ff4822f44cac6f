"""The gateway half of the Discord fake: the websocket protocol (HELLO, heartbeats, IDENTIFY,
RESUME, READY, GUILD_CREATE) and dispatching events to identified connections, with the intents
each connection sent applied to MESSAGE_CREATE."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes.base import Call

GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT = 1 << 9, 1 << 12, 1 << 15


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class GatewayConn:
    """One gateway connection: its compressor, sequence number and identify state."""

    ws: web.WebSocketResponse
    zlib_ctx: Any = None
    seq: int = 0
    intents: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class DiscordGateway:
    """Mixed into FakeDiscord (which provides the attributes and helpers declared here)."""

    token: str
    bot_id: int
    application_id: int
    heartbeat_interval_ms: int
    guilds: dict[int, dict[str, Any]]
    connections: list[GatewayConn]

    if TYPE_CHECKING:  # provided by FakeDiscord and EmulatorServer

        def record(self, call: Call) -> Call: ...
        async def _open_ws(self, request: web.Request, **kwargs: Any) -> web.WebSocketResponse: ...
        def _forget_ws(self, ws: web.WebSocketResponse) -> None: ...
        @property
        def bot_user(self) -> dict[str, Any]: ...
        @property
        def gateway_url(self) -> str: ...

    async def _send(self, conn: GatewayConn, payload: dict[str, Any]) -> None:
        data = json.dumps(payload)
        if conn.zlib_ctx is not None:
            ctx = conn.zlib_ctx
            await conn.ws.send_bytes(ctx.compress(data.encode()) + ctx.flush(zlib.Z_SYNC_FLUSH))
        else:  # uncompressed or zstd-stream: discord.py only decompresses binary frames
            await conn.ws.send_str(data)

    async def _dispatch(self, conn: GatewayConn, event: str, data: dict[str, Any]) -> None:
        conn.seq += 1
        await self._send(conn, {"op": 0, "t": event, "s": conn.seq, "d": data})

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = await self._open_ws(request)
        conn = GatewayConn(
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

    async def _on_op(self, conn: GatewayConn, payload: dict[str, Any]) -> None:
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

    async def message_update(self, original: dict[str, Any], content: str) -> dict[str, Any]:
        """Inject MESSAGE_UPDATE: a user edited ``original`` (as returned by user_message)."""
        edited = {**original, "content": content, "edited_timestamp": _now()}
        for conn in list(self.connections):
            await self._dispatch(conn, "MESSAGE_UPDATE", edited)
        return edited

    async def redeliver(self, msg: dict[str, Any]) -> None:
        """Send a MESSAGE_CREATE again, as Discord replays events after a RESUME."""
        await self._deliver(msg)
