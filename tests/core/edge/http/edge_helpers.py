"""What the HTTP edge tests share: the token header, the error shape of a bad request, and raw
bytes on a socket for what the aiohttp client will not send."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import Client

AUTH = {"Authorization": "Bearer test-token"}


def is_invalid_request(body: Any, starts: str = "") -> bool:
    err = body["error"]
    return (
        err["type"] == "invalid_request_error"
        and err["message"].startswith(starts)
        and set(body) == {"error"}
    )


async def raw_request(c: Client, head: bytes, body: bytes = b"") -> bytes:
    """Send raw bytes (non-ASCII header values, half bodies) and return the answer."""
    assert c.server.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", c.server.port)
    try:
        writer.write(head + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])
