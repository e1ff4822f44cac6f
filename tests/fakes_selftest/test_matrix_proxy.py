"""The Matrix tests' homeserver and its recording proxy (tests/fakes/synapse.py,
tests/fakes/matrix_proxy.py): a real Synapse answers through the proxy, which names each
request, injects errors the way Synapse shapes them, and replays an earlier sync answer."""

from __future__ import annotations

import aiohttp

from tests.fakes.matrix_proxy import MatrixProxy, method_of
from tests.fakes.synapse import Homeserver


def test_method_names() -> None:
    assert method_of("/_matrix/client/v3/rooms/!a:b/send/m.room.message/t1") == "send"
    assert method_of("/_matrix/client/v3/rooms/!a:b/typing/@u:b") == "typing"
    assert method_of("/_matrix/client/v3/sync") == "sync"
    assert method_of("/_matrix/client/v3/rooms/!a:b/joined_members") == "joined_members"


async def test_passes_through_registers_and_injects(
    fake_matrix: MatrixProxy, synapse: Homeserver
) -> None:
    user = synapse.register("selftest")
    login = {
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": user.localpart},
        "password": user.password,
    }
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{fake_matrix.base_url}/_matrix/client/v3/login", json=login) as r:
            assert r.status == 200 and (await r.json())["user_id"] == user.user_id
        fake_matrix.fail_next("login", 429, retry_after=0.5)
        async with http.post(f"{fake_matrix.base_url}/_matrix/client/v3/login", json=login) as r:
            assert r.status == 429
            assert await r.json() == {
                "errcode": "M_LIMIT_EXCEEDED",
                "error": "injected by the test",
                "retry_after_ms": 500,
            }
    assert [(c.method, c.status) for c in fake_matrix.calls] == [("login", 200), ("login", 429)]


async def test_replays_an_earlier_sync_answer(
    fake_matrix: MatrixProxy, synapse: Homeserver
) -> None:
    user = synapse.register("replay")
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{synapse.base_url}/_matrix/client/v3/login",
            json={
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user.localpart},
                "password": user.password,
            },
        ) as r:
            token = (await r.json())["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        url = f"{fake_matrix.base_url}/_matrix/client/v3/sync"
        async with http.get(url, headers=auth) as r:
            since = (await r.json())["next_batch"]
        async with http.post(
            f"{synapse.base_url}/_matrix/client/v3/createRoom", headers=auth, json={"name": "x"}
        ) as r:
            room = (await r.json())["room_id"]
        async with http.get(url, params={"since": since}, headers=auth) as r:
            first = await r.read()
        assert room.encode() in first
        fake_matrix.redeliver(room)  # an answer that carried the room
        async with http.get(url, params={"since": "anything"}, headers=auth) as r:
            assert await r.read() == first
