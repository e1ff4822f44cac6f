"""`GET /webchat/media/{id}` serves an item whatever MIME type it was stored with (D78): a type
comes from an upload's frame or a platform's attachment as its sender wrote it, so one that is
not a plain `type/subtype` (a newline, a NUL, parameters, a comma list) is served as a download
of `application/octet-stream`, never a 500 nor a dropped connection; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from base64 import b64encode

import pytest

from core.model.media import MediaItem
from tests.adapters.webchat.steps import AUTH, Gateway
from tests.adapters.webchat.test_other_tabs import until

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


@pytest.mark.parametrize(
    ("mime", "served", "disposition"),
    [
        ("image/png", "image/png", "inline"),
        ("IMAGE/PNG", "image/png", "inline"),
        ("image/png; charset=utf-8", "image/png", "inline"),
        ("image/png\r\nX-Evil: 1", "application/octet-stream", "attachment"),
        ("image/png\x00", "application/octet-stream", "attachment"),
        ("image/png, text/html", "application/octet-stream", "attachment"),
        ("image/", "application/octet-stream", "attachment"),
        ("image/\u00e9", "application/octet-stream", "attachment"),
        ("text/html", "application/octet-stream", "attachment"),
    ],
)
async def test_an_item_is_served_whatever_type_it_was_stored_with(
    gateway: Gateway, mime: str, served: str, disposition: str
) -> None:
    [item] = await gateway.rt.store.save_media(
        [MediaItem(PNG, mime, "a.png")], run_id=None, session_key=None
    )
    url = gateway.server.make_url(f"/webchat/media/{item.id}")
    async with gateway.http.get(url, headers=AUTH) as resp:
        assert resp.status == 200, await resp.text()
        assert resp.content_type == served
        assert resp.headers["Content-Disposition"].startswith(disposition + ";")
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert "X-Evil" not in resp.headers
        assert await resp.read() == PNG


async def test_an_upload_whose_name_and_type_hold_a_nul_is_stored_and_answered(
    gateway: Gateway,
) -> None:
    """PostgreSQL refuses a NUL or a lone surrogate in text: the upload's name and type are
    cleaned before they are stored, so its message is answered like any other."""
    frame = (
        '{"type": "message", "text": "look", "clientId": "nul-1", "attachments": [{"name": '
        '"a\\u0000b\\ud800.png", "mime": "image/png\\u0000", "data": "'
        + b64encode(PNG).decode()
        + '"}]}'
    )
    async with gateway.ws() as ws:
        assert json.loads((await ws.receive(timeout=10)).data)["type"] == "history"
        await ws.send_str(frame)
        frames = await until(ws, lambda f: f["type"] in ("message", "error"))
    assert frames[-1]["type"] == "message" and frames[-1]["role"] == "assistant", frames[-1]
    assert frames[-1]["text"].startswith("echo: look")
