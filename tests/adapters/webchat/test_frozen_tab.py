"""A tab that takes no frame (a suspended laptop, a client that never reads) must not hold the
chat's other tabs (D178): once its socket's buffers are full, the frame it cannot take ends it,
and every reply still reaches the tab that reads; on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket

from adapters.webchat.adapter import WebchatAdapter
from tests.adapters.webchat.steps import WS, Gateway
from tests.adapters.webchat.test_other_tabs import Frame, opened, until

BIG = "x" * 30_000


def a_reply(frame: Frame) -> bool:
    return frame["type"] == "message" and frame.get("role") == "assistant"


async def frozen_tab(gateway: Gateway) -> socket.socket:
    """A web-chat socket opened by hand with a 4 KB receive buffer, never read after that."""
    loop = asyncio.get_running_loop()
    url = gateway.server.make_url(WS)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, (url.host or "127.0.0.1", url.port or 80))
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {url.path_qs} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    await loop.sock_sendall(sock, request.encode())
    assert (await asyncio.wait_for(loop.sock_recv(sock, 12), 10)) == b"HTTP/1.1 101"
    return sock


async def test_a_tab_that_never_reads_does_not_hold_the_others(gateway: Gateway) -> None:
    adapter = gateway.rt.channels.get("webchat", "default")
    assert isinstance(adapter, WebchatAdapter)
    adapter.send_timeout = 0.5  # the test's patience; the frozen tab is ended at its first stall
    frozen = await frozen_tab(gateway)
    try:
        ws = await opened(gateway)
        # ~100 KB to the frozen tab per message (its user frame, previews and reply): 150 of
        # them are 15 MB, beyond any loopback buffer, so its writes stall well before the end
        for i in range(150):
            text = f"{i} {BIG}"
            await ws.send_str(json.dumps({"type": "message", "text": text, "clientId": f"c{i}"}))
            await until(ws, a_reply)  # each within until()'s 10 s, never held longer
        assert adapter.status().extra["clients"] == 1  # the frozen tab was ended
        await ws.close()
    finally:
        frozen.close()
