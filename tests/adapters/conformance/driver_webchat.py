"""The web chat conformance driver: the real gateway app on a test server, the page played by
a real websocket client."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, ClassVar

import aiohttp
from aiohttp import WSMsgType
from aiohttp.test_utils import TestServer

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.adapters.conformance.drivers import (
    OWNER,
    Driver,
    Feature,
    Reply,
    SentMedia,
    Unsupported,
    User,
)
from tests.adapters.conformance.markdown_features import markdown_features


class WebchatDriver(Driver):
    """The built-in web chat: the real gateway app on a test server, a websocket client."""

    platform = "webchat"
    TOKEN = "test-token"  # make_config's gateway.auth.token
    unsupported: ClassVar[dict[str, str]] = {
        "group": "the web chat has no groups (only the owner's main session)",
        "mention": "the web chat has no groups, so nothing to mention the bot in",
        "thread": "the web chat has no threads",
        "self": "the web chat's socket only carries the user's messages; no bot authors",
        "strangers": "the web chat's only user is the owner (whoever holds the gateway token)",
        "rate_limit": "the web chat pushes to its own websocket; no platform API to limit it",
        "forbidden": "the web chat pushes to its own websocket; nothing can refuse a send",
        "server_error": "the web chat pushes to its own websocket; no platform API to fail",
        "preview": "the web chat streams deltas over its socket (tests/adapters/webchat)",
        "typing": "the web chat shows its own progress from the delta frames",
        "edit": "the web chat has no message edits",
    }

    def __init__(self) -> None:
        super().__init__()
        self.owner_id = "owner"  # the default ?chat= peer
        self._server: TestServer | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._replies: list[Reply] = []
        self._media: list[dict[str, Any]] = []  # "media" frames
        self._changed = asyncio.Event()

    def config(self) -> dict[str, Any]:
        return {}  # the web chat is on by default; its owners default to ["*"]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Each item the page was told to show, fetched as the page fetches it (D78)."""
        assert self._http is not None and self._server is not None
        out: list[SentMedia] = []
        for item in self._media:
            url = self._server.make_url(f"/webchat/media/{item['id']}")
            auth = {"Authorization": f"Bearer {self.TOKEN}"}
            async with self._http.get(url, headers=auth) as resp:
                assert resp.status == 200, resp.status
                out.append((str(item["kind"]), await resp.read()))
        return out

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.webchat.adapter import WebchatAdapter

        return [WebchatAdapter.for_gateway(rt.pages)]

    async def connected(self, rt: Runtime) -> None:
        from core.edge.http.server import build_app

        self._server = TestServer(build_app(rt, self.TOKEN, self.adapters))
        await self._server.start_server()
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(self._server.make_url(f"/ws?token={self.TOKEN}"))
        first = json.loads((await self._ws.receive(timeout=5)).data)
        assert first["type"] == "history", first
        self._reader = asyncio.create_task(self._read(self._ws))

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            if frame.get("type") == "message":  # "delta" frames are streaming previews
                self._replies.append(Reply(str(frame["text"]), self.owner_id))
                self._changed.set()
            elif frame.get("type") == "media":
                self._media.append(dict(frame["media"]))

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        await super().stop()
        if self._server is not None:
            await self._server.close()

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        if user != OWNER:
            raise Unsupported(self.unsupported["strangers"])
        assert self._ws is not None, "driver not started"
        self.last = {"type": "message", "text": text, "clientId": str(uuid.uuid4())}
        await self._ws.send_str(json.dumps(self.last))  # the page sends a clientId too
        return Reply(text, self.owner_id)

    async def redeliver_last(self) -> None:
        """The page sends the same frame again (e.g. after reconnecting)."""
        assert self._ws is not None, "driver not started"
        await self._ws.send_str(json.dumps(self.last))

    def replies(self) -> list[Reply]:
        return list(self._replies)

    async def wait_replies(self, count: int, timeout: float = 5.0) -> list[Reply]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self._replies) < count:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(
                    f"webchat: expected {count} replies within {timeout}s, got {self.replies()}"
                )
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass
        return self.replies()

    def address(self, reply: Reply) -> str:
        return reply.chat

    def features(self, index: int) -> set[Feature]:
        return markdown_features(self._replies[index].text)  # rendered by the page's marked
