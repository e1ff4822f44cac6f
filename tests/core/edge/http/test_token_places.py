"""Where the gateway token may be (D81): the `Authorization` header everywhere, `?token=` only
on the web-chat socket (UTF-8, percent-encoded, D12); `/healthz` without a token shows status
and channel states and nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import PUBLIC_CHANNEL_FIELDS, build_app
from core.runtime import Runtime
from tests.conftest import Client, ConfigFactory

SECRET = "tést-token"
QUERY = "t%C3%A9st-token"  # percent-encoded UTF-8 (D12)
AUTH = {"Authorization": "Bearer tést-token"}


@pytest.fixture
async def client(make_config: ConfigFactory) -> AsyncIterator[Client]:
    rt = Runtime(make_config())
    webchat = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[webchat], probe_models=False)
    try:
        async with TestClient(TestServer(build_app(rt, SECRET, [webchat]))) as c:
            yield c
    finally:
        await rt.stop()


async def test_api_routes_take_the_token_in_the_header_only(client: Client) -> None:
    for path in ("/api/deliveries", "/api/cron", "/v1/models", "/webchat/info"):
        assert (await client.get(f"{path}?token={QUERY}")).status == 401, path
        assert (await client.get(path, headers=AUTH)).status == 200, path
    resp = await client.post(f"/tools/invoke?token={QUERY}", json={"tool": "sessions_list"})
    assert resp.status == 401


async def test_the_web_chat_socket_takes_the_token_in_the_query(client: Client) -> None:
    async with client.ws_connect(f"/ws?token={QUERY}") as ws:
        assert not ws.closed
    resp = await client.get("/ws?token=wrong")
    assert resp.status == 401


async def test_the_web_chat_socket_refuses_another_sites_page(client: Client) -> None:
    """D143: a page elsewhere cannot open the owner's chat with a token it got hold of."""
    host = f"{client.host}:{client.port}"
    async with client.ws_connect(f"/ws?token={QUERY}", headers={"Origin": f"http://{host}"}):
        pass
    resp = await client.get(
        f"/ws?token={QUERY}",
        headers={"Origin": "https://evil.example", "Connection": "Upgrade", "Upgrade": "websocket"},
    )
    assert resp.status == 403
    assert (await resp.json())["error"]["type"] == "forbidden"


async def test_healthz_without_a_token_names_no_model_process_or_host(client: Client) -> None:
    public = await (await client.get("/healthz")).json()
    assert set(public) == {"ok", "channels"} and public["ok"] is True
    assert public["channels"] and all(
        set(c) <= set(PUBLIC_CHANNEL_FIELDS) for c in public["channels"]
    )
    assert {"state", "refused", "duplicatesDropped"} <= set(public["channels"][0])
    full = await (await client.get("/healthz", headers=AUTH)).json()
    assert {"model", "process"} <= set(full) and "deliveriesFailed" in full["channels"][0]
