"""Pairing (D11), proven on every platform with strangers.

A stranger's DM gets one pairing code and nothing else (no session row, no model request);
the owner approves through the CLI, the HTTP API or `/pair approve`; denial and unknown codes,
expiry (an injected clock), the pending cap (D81), revocation and restarts.
"No reply" is shown by the refusal counter reaching its number, never by sleeping.
"""

from __future__ import annotations

import pytest

from core.features.access.pairing import APPROVED_TEXT, REQUEST_TTL_MS
from tests.adapters.conformance.access_helpers import (
    call,
    code_of,
    crosstalk,
    gateway_http,
    no_trace,
    pair_stranger,
    refused,
    require_strangers,
)
from tests.adapters.conformance.drivers import OWNER, STRANGER, STRANGERS, Driver
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def test_stranger_gets_one_pairing_code_and_nothing_else(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    require_strangers(driver)
    rt = await driver.start(make_runtime)
    first = "x" * 150 + " and then some more words to go past two hundred chars " + "y" * 50
    sent = await driver.dm(first, user=STRANGER)
    [reply] = await driver.wait_replies(1)
    code = code_of(reply.text)
    assert reply.place == (sent.chat, None)
    await driver.dm("hello?? anyone?", user=STRANGER)
    await refused(driver, 2)
    assert driver.replies() == [reply]  # the repeat got nothing
    await no_trace(rt, fake_model)
    [req] = await rt.access.pairing.pending()
    assert (req.code, req.channel, req.account_id, req.user_id) == (
        code,
        driver.channel,
        "default",
        driver.user_id(STRANGER),
    )
    assert req.preview == first[:200] and len(first) > 200
    assert req.expires_at - req.created_at == 3600 * 1000
    [log] = await rt.store.list_deliveries()
    assert (log.outcome, log.session_key, log.text) == ("delivered", None, reply.text)
    async with gateway_http(driver) as server:
        status, health = await call(server, "GET", "/healthz")
        assert status == 200
        [entry] = [c for c in health["channels"] if c["channel"] == driver.channel]
        assert entry["refused"] == 2
        status, listed = await call(server, "GET", "/api/pairing")
        assert status == 200
        assert listed["approved"] == []
        [wire] = listed["requests"]
        assert set(wire) == {
            "channel",
            "accountId",
            "code",
            "userId",
            "userName",
            "chatId",
            "createdAt",
            "expiresAt",
            "preview",
        }
        assert wire["code"] == code and wire["chatId"] == req.chat_id
        code_, out, err = await crosstalk(server, "channels", "status")
        assert code_ == 0, err
        assert f"{driver.channel}/default: connected" in out and "refused=2" in out


@pytest.mark.parametrize("how", ["cli", "http", "chat"])
async def test_owner_approves_and_the_stranger_is_answered(
    driver: Driver, make_runtime: RuntimeFactory, how: str
) -> None:
    require_strangers(driver)
    rt = await driver.start(make_runtime, {"session": {"dmScope": "per-channel-peer"}})
    code = await pair_stranger(driver)
    stranger_id = driver.user_id(STRANGER)
    async with gateway_http(driver) as server:
        if how == "http":
            status, body = await call(
                server, "POST", f"/api/pairing/{driver.channel}/{code}/approve"
            )
            assert (status, body) == (200, {"ok": True, "userId": stranger_id})
            status, body = await call(
                server, "POST", f"/api/pairing/{driver.channel}/{code}/approve"
            )
            assert status == 404 and "No pending pairing request" in body["error"]["message"]
        elif how == "cli":
            rc, out, err = await crosstalk(server, "pairing", "list", "--json")
            assert rc == 0, err
            assert '"code": "' + code + '"' in out
            rc, out, err = await crosstalk(server, "pairing", "approve", driver.channel, code)
            assert rc == 0, err
            assert out.strip() == f"Approved {stranger_id} on {driver.channel}."
            rc, out, err = await crosstalk(server, "pairing", "list")
            assert rc == 0, err
            assert out.splitlines() == [
                "no pending pairing requests",
                f"approved  {driver.channel}/default  {stranger_id}",
            ]
        else:
            await driver.dm(f"/pair approve {code}", user=OWNER)
    texts = [r.text for r in await driver.wait_replies(3 if how == "chat" else 2)]
    if how == "chat":
        assert f"⚙️ Approved {stranger_id} on {driver.channel}." in texts
    assert texts.count(APPROVED_TEXT) == 1
    n = len(texts)
    sent = await driver.dm("now can we talk?", user=STRANGER)
    # the process's first turn imports the model stack (D54): slow on a loaded machine
    replies = await driver.wait_replies(n + 1, timeout=30)
    assert replies[n].text == "echo: now can we talk?" and replies[n].chat == sent.chat
    [approval] = await rt.access.pairing.approved()
    assert (approval.channel, approval.user_id) == (driver.channel, stranger_id)
    assert await rt.access.pairing.pending() == []


async def test_deny_and_unknown_codes(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    require_strangers(driver)
    rt = await driver.start(make_runtime)
    code = await pair_stranger(driver)
    await driver.dm("/pair approve ZZZZ2222", user=OWNER)
    await driver.dm(f"/pair deny {code.lower()}", user=OWNER)
    texts = [r.text for r in await driver.wait_replies(3)]
    assert "⚙️ No pending pairing request with code ZZZZ2222." in texts
    assert f"⚙️ Denied {driver.user_id(STRANGER)} on {driver.channel}." in texts
    await driver.dm("please?", user=STRANGER)  # denied: silence, no new code
    await refused(driver, 2)
    assert len(driver.replies()) == 3
    assert await rt.access.pairing.pending() == []
    async with gateway_http(driver) as server:
        status, _ = await call(server, "POST", f"/api/pairing/{driver.channel}/{code}/deny")
        assert status == 404
        status, _ = await call(server, "POST", f"/api/pairing/nochannel/{code}/approve")
        assert status == 404
    assert fake_model.requests == []  # the owner's commands start no run either


async def test_non_owner_cannot_pair(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require_strangers(driver)
    await driver.start(
        make_runtime, {"channels": {driver.channel: {"allowFrom": [driver.user_id("stranger2")]}}}
    )
    code = await pair_stranger(driver)
    await driver.dm(f"/pair approve {code}", user="stranger2")
    replies = await driver.wait_replies(2)
    assert replies[1].text == "⚙️ /pair is owner-only."
    assert len(await driver.rt.access.pairing.pending()) == 1


async def test_request_expires_after_an_hour(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require_strangers(driver)
    rt = await driver.start(make_runtime)
    start = 1_900_000_000_000
    rt.access.pairing.clock = lambda: start
    old = await pair_stranger(driver)
    rt.access.pairing.clock = lambda: start + REQUEST_TTL_MS - 1
    await driver.dm("still waiting", user=STRANGER)
    await refused(driver, 2)
    assert len(driver.replies()) == 1
    rt.access.pairing.clock = lambda: start + REQUEST_TTL_MS
    new = await pair_stranger(driver)  # expired: a fresh request with a fresh code
    assert new != old
    await driver.dm(f"/pair approve {old}", user=OWNER)
    replies = await driver.wait_replies(3)
    assert replies[2].text == f"⚙️ No pending pairing request with code {old}."
    assert [r.code for r in await rt.access.pairing.pending()] == [new]


async def test_a_full_pairing_queue_drops_its_oldest_request(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D81: at the cap (50; 3 here) a newcomer still gets a code; the oldest request goes."""
    require_strangers(driver)
    rt = await driver.start(make_runtime)
    rt.access.pairing.max_pending = 3
    for i, user in enumerate(STRANGERS[:4]):
        await driver.dm(f"hello from {user}", user=user)
        await driver.wait_replies(i + 1)
    codes = [code_of(r.text) for r in driver.replies()]
    assert len(codes) == 4 == len(set(codes))
    pending = await rt.access.pairing.pending()
    assert sorted(r.user_id for r in pending) == sorted(driver.user_id(u) for u in STRANGERS[1:4])
    await no_trace(rt, fake_model)


async def test_revoke_and_restart(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require_strangers(driver)
    extra = {"session": {"dmScope": "per-channel-peer"}}
    await driver.start(make_runtime, extra)
    code = await pair_stranger(driver)
    await driver.dm(f"/pair approve {code}", user=OWNER)
    await driver.wait_replies(3)
    # restart: a new runtime on the same store keeps the approval
    await driver.stop()
    driver.adapters.clear()
    rt = await driver.start(make_runtime, extra)
    before = len(driver.replies())
    await driver.dm("after the restart", user=STRANGER)
    replies = await driver.wait_replies(before + 1)
    assert replies[before].text == "echo: after the restart"
    stranger = driver.user_id(STRANGER)
    async with gateway_http(driver) as server:
        rc, out, err = await crosstalk(server, "pairing", "revoke", driver.channel, stranger)
        assert rc == 0, err
        assert out.strip() == f"Revoked {stranger} on {driver.channel}."
        rc, _, err = await crosstalk(server, "pairing", "revoke", driver.channel, stranger)
        assert rc == 1 and "is not approved" in err
    assert await rt.access.pairing.approved() == []
    await driver.dm("still there?", user=STRANGER)  # revoked: back to pairing
    replies = await driver.wait_replies(before + 2)
    code_of(replies[before + 1].text)
    # `/pair revoke` in chat, after a new approval
    await driver.dm(f"/pair approve {code_of(replies[before + 1].text)}", user=OWNER)
    await driver.wait_replies(before + 4)
    await driver.dm(f"/pair revoke {stranger}", user=OWNER)
    replies = await driver.wait_replies(before + 5)
    assert replies[-1].text == f"⚙️ Revoked {stranger} on {driver.channel}."
    assert await rt.access.pairing.approved() == []
