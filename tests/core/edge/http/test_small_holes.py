"""Small holes of issue 25: a control character is not "no channel" to `GET /api/pairing`."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from tests.conftest import RuntimeFactory

AUTH = {"Authorization": "Bearer test-token"}


async def test_a_control_character_channel_filter_is_400(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as client:
        for query in ("%1C", "%20", "nowhere"):
            resp = await client.get(f"/api/pairing?channel={query}", headers=AUTH)
            assert resp.status == 400, query
            assert (await resp.json())["error"]["message"].startswith("unknown channel")
        assert (await client.get("/api/pairing?channel=", headers=AUTH)).status == 200
        assert (await client.get("/api/pairing", headers=AUTH)).status == 200
