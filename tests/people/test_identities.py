"""D65: /link across Telegram and Discord, one DM session under per-peer, a wrong code, the
5-tries cap, /unlink, limits counted once, `person:` rules, the HTTP routes, config links and
`crosstalk identities list|unlink`."""

from __future__ import annotations

import json
import re
from functools import partial

from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.cli import crosstalk_at
from tests.conftest import RuntimeFactory

TG = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"], "streaming": "off"}
DC = {"token": "x", "allowFrom": ["77", "*"], "streaming": "off"}


async def say(chat: RecordingAdapter, sender: str, words: str, *, expect: int = 1) -> list[str]:
    before = len(chat.sent)
    await chat.say(words, chat_id=sender, sender=sender)
    if expect:
        await chat.wait_for("", before + expect, timeout=15)
    return [t for _, t in chat.sent[before:]]


async def _start(
    make_runtime: RuntimeFactory, **extra: object
) -> tuple[Runtime, RecordingAdapter, RecordingAdapter]:
    tg, dc = RecordingAdapter("telegram"), RecordingAdapter("discord")
    config = {"session": {"dmScope": "per-peer"}, "channels": {"telegram": TG, "discord": DC}}
    rt = await make_runtime({**config, **extra}, adapters=[tg, dc])
    return rt, tg, dc


async def _link(tg: RecordingAdapter, dc: RecordingAdapter) -> str:
    [offer] = await say(tg, "20", "/link")
    found = re.fullmatch(
        r"🔗 To link another account to this one, send /link ([A-HJ-NP-Z2-9]{8}) from it "
        r"within 10 minutes\.",
        offer,
    )
    assert found is not None, offer
    return found.group(1)


async def test_link_shares_one_dm_session_and_unlink_splits_it(
    make_runtime: RuntimeFactory,
) -> None:
    rt, tg, dc = await _start(make_runtime)
    code = await _link(tg, dc)
    assert await say(dc, "77", f"/link {code}") == [
        "🔗 Linked: telegram:20 and discord:77 are now one person."
    ]
    person = await rt.identities.person_of("telegram", "20")
    assert person is not None and person == await rt.identities.person_of("discord", "77")
    assert await say(dc, "77", "/whoami") == [
        f"⚙️ You are member on discord (77). Linked as {person}."
    ]
    assert await say(tg, "20", "from telegram") == ["echo: from telegram"]
    assert await say(dc, "77", "from discord") == ["echo: from discord"]
    entry = await rt.store.get_session(f"agent:main:dm:{person}")
    assert entry is not None
    texts = [m.plain_text() for m in await rt.store.history(entry.session_id) if m.role == "user"]
    assert texts == ["from telegram", "from discord"]
    assert await say(dc, "77", "/unlink") == ["🔗 Unlinked discord:77."]
    assert await rt.identities.person_of("discord", "77") is None
    assert await rt.identities.person_of("telegram", "20") is None  # a person of one dissolves


async def test_a_wrong_code_and_the_five_tries_cap(make_runtime: RuntimeFactory) -> None:
    _, tg, dc = await _start(make_runtime)
    for _ in range(5):
        assert await say(dc, "77", "/link ZZZZZZZZ") == ["🔗 No pending link with code ZZZZZZZZ."]
    code = await _link(tg, dc)
    assert await say(dc, "77", f"/link {code}", expect=0) == []  # past the cap: no answer


async def test_linked_accounts_count_once_against_limits(make_runtime: RuntimeFactory) -> None:
    rt, tg, dc = await _start(make_runtime, limits={"member": {"messagesPerMinute": 2}})
    rt.limits.clock = lambda: 1_795_000_000_000  # one minute throughout
    code = await _link(tg, dc)  # commands do not count
    await say(dc, "77", f"/link {code}")
    assert await say(tg, "20", "a") == ["echo: a"]
    assert await say(dc, "77", "b") == ["echo: b"]
    [refusal] = await say(dc, "77", "c")
    assert refusal.startswith("⏳ Limit reached: messages per minute (2/2).")


async def test_person_rules_and_the_http_routes(make_runtime: RuntimeFactory) -> None:
    rt, tg, dc = await _start(
        make_runtime, session={"dmScope": "per-peer", "identityLinks": {"ann": ["slack:U1"]}}
    )
    code = await _link(tg, dc)
    await say(dc, "77", f"/link {code}")
    person = await rt.identities.person_of("telegram", "20")
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as client:
        auth = {"Authorization": "Bearer test-token"}
        resp = await client.get("/api/identities", headers=auth)
        assert resp.status == 200
        body = await resp.json()
        by_person = {p["personId"]: p["identities"] for p in body["persons"]}
        assert {(i["channel"], i["userId"]) for i in by_person[person]} == {
            ("telegram", "20"),
            ("discord", "77"),
        }
        assert by_person["ann"] == [
            {"channel": "slack", "accountId": "default", "userId": "u1", "linkedAt": None}
        ]
        resp = await client.delete("/api/identities/discord/77", headers=auth)
        assert resp.status == 200
        resp = await client.delete("/api/identities/discord/77", headers=auth)
        assert resp.status == 404
        assert (await client.get("/api/identities")).status == 401
        spec = await (await client.get("/openapi.json")).json()
        assert {"/api/identities", "/api/identities/{channel}/{userId}"} <= set(spec["paths"])


async def test_the_identities_cli(make_runtime: RuntimeFactory) -> None:
    rt, tg, dc = await _start(make_runtime)
    async with TestServer(build_app(rt, "test-token", [])) as server:
        cli = partial(crosstalk_at, str(server.make_url("")), "test-token")
        assert await cli("identities", "list") == (0, "no linked identities\n", "")
        code = await _link(tg, dc)
        await say(dc, "77", f"/link {code}")
        person = await rt.identities.person_of("telegram", "20")
        rc, out, err = await cli("identities", "list")
        assert (rc, out) == (0, f"{person}  discord:77, telegram:20\n"), err  # one linkedAt
        rc, out, err = await cli("identities", "list", "--json")
        [listed] = json.loads(out)["persons"]
        assert listed["personId"] == person and len(listed["identities"]) == 2
        assert await cli("identities", "unlink", "discord", "77") == (
            0,
            "Unlinked discord:77.\n",
            "",
        )
        rc, out, err = await cli("identities", "unlink", "discord", "77")
        assert rc == 1 and out == "" and "Unknown identity: discord:77 is not linked." in err, err
    assert await rt.identities.person_of("telegram", "20") is None
