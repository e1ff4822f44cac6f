"""Who may talk to the bot (D11), proven on every platform with strangers.

A stranger's DM gets one pairing code and nothing else (no session row, no model request);
the owner approves through the CLI, the HTTP API or `/pair approve`; allowlists, disabled DMs,
group allowlists, revocation, expiry (an injected clock), the pending cap (D81) and restarts.
"No reply" is shown by the refusal counter reaching its number, never by sleeping.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from core.edge.http.server import build_app
from core.features.access.pairing import APPROVED_TEXT, REQUEST_TTL_MS
from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.adapters.conformance.drivers import OWNER, STRANGER, STRANGERS, Driver
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

CODE_RE = re.compile(
    r"^🔐 This bot only talks to people its owner approved\. "
    r"Your pairing code: ([ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8})$"
)
TOKEN = "test-token"  # make_config's gateway token


def require_strangers(driver: Driver) -> None:
    if "strangers" not in driver.supports:
        pytest.skip(f"{driver.platform}: {driver.unsupported['strangers']}")


def code_of(text: str) -> str:
    match = CODE_RE.match(text)
    assert match is not None, text
    return match.group(1)


async def refused(driver: Driver, count: int) -> None:
    """Wait until the channel account has refused `count` messages (each fully handled)."""

    async def reached() -> bool:
        return driver.rt.access.refused(driver.channel, "default") >= count

    await eventually(reached, what=f"{count} refusals on {driver.channel}")
    assert driver.rt.access.refused(driver.channel, "default") == count


async def no_trace(rt: Runtime, fake_model: FakeModelServer) -> None:
    """Nothing was stored in any session and the model was never asked."""
    assert await rt.store.list_sessions(SessionQuery(include_reserved=True)) == []
    assert fake_model.requests == []


@asynccontextmanager
async def gateway_http(driver: Driver) -> AsyncIterator[TestServer]:
    """The real gateway app (HTTP API, /healthz) on the driver's runtime."""
    server = TestServer(build_app(driver.rt, TOKEN, driver.adapters))
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def call(server: TestServer, method: str, path: str) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(
            method, server.make_url(path), headers={"Authorization": f"Bearer {TOKEN}"}
        ) as r,
    ):
        return r.status, await r.json()


async def crosstalk(server: TestServer, *args: str) -> tuple[int, str, str]:
    """The real `crosstalk` CLI in a child process, against the test gateway."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.edge.cli.main",
        *args,
        "--url",
        str(server.make_url("")),
        "--token",
        TOKEN,
        env={**os.environ, "NO_PROXY": "127.0.0.1,localhost"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def pair_stranger(driver: Driver) -> str:
    """The stranger DMs once and holds a code; returns it."""
    before = len(driver.replies())
    sent = await driver.dm("hi, may I talk to you?", user=STRANGER)
    replies = await driver.wait_replies(before + 1)
    assert replies[before].chat == sent.chat
    return code_of(replies[before].text)


# -- tests ---------------------------------------------------------------------------------


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


@pytest.mark.parametrize("policy", ["allowlist", "disabled"])
async def test_allowlist_and_disabled(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer, policy: str
) -> None:
    require_strangers(driver)
    friend = driver.user_id("stranger2")
    rt = await driver.start(
        make_runtime, {"channels": {driver.channel: {"dmPolicy": policy, "allowFrom": [friend]}}}
    )
    await driver.dm("let me in", user=STRANGER)
    if policy == "disabled":
        await driver.dm("me, the owner", user=OWNER)
        await driver.dm("me, the friend", user="stranger2")
        await refused(driver, 3)
        assert driver.replies() == []
        await no_trace(rt, fake_model)
        return
    await refused(driver, 1)
    await driver.dm("friend here", user="stranger2")
    await driver.dm("owner here", user=OWNER)
    texts = sorted(r.text for r in await driver.wait_replies(2))
    assert texts == ["echo: friend here", "echo: owner here"]
    assert await rt.access.pairing.pending() == []  # no pairing under allowlist
    assert rt.access.refused(driver.channel, "default") == 1


@pytest.mark.parametrize("policy", ["allowlist", "disabled"])
async def test_group_policy(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer, policy: str
) -> None:
    require_strangers(driver)
    if "group" not in driver.supports:
        pytest.skip(f"{driver.platform}: {driver.unsupported['group']}")
    rt = await driver.start(
        make_runtime,
        {
            "channels": {
                driver.channel: {"groupPolicy": policy, "groups": {"allow": ["some-other-group"]}}
            }
        },
    )
    await driver.group("anyone?", mentioned=True)
    await refused(driver, 1)
    await no_trace(rt, fake_model)
    assert driver.replies() == []
    if policy == "disabled":
        return
    # the same group, allowed: a second runtime on its own config (same fake, same store)
    await driver.stop()
    driver.adapters.clear()
    rt2 = await driver.start(
        make_runtime,
        {
            "channels": {
                driver.channel: {"groupPolicy": "allowlist", "groups": {"allow": [driver.group_id]}}
            }
        },
    )
    loud = await driver.group("now?", mentioned=True, user=STRANGER)
    [reply] = await driver.wait_replies(1)
    assert reply.text == f"echo: {loud.text}" and reply.place == loud.place
    assert rt2.access.refused(driver.channel, "default") == 0


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


#: what a channel's section needs besides D11's fields to be valid (indented under it)
MINIMAL = {
    "matrix": "    homeserver: http://127.0.0.1:1\n    userId: '@bot:localhost'\n    password: x\n",
    "email": "    from: bot@example.org\n"
    "    imap: {host: 127.0.0.1, username: bot, password: x}\n"
    "    smtp: {host: 127.0.0.1, username: bot, password: x}\n",
}


async def test_config_check_no_longer_warns_about_a_shared_main_session(
    platform: str, tmp_path: Path
) -> None:
    if platform == "webchat":
        pytest.skip("webchat: the web chat's only user is the owner")
    warning = (
        f'warning: session.dmScope is "main", so everyone allowed to DM {platform} '
        f"shares one session; set session.dmScope: per-channel-peer"
    )

    async def check(body: str) -> str:
        path = tmp_path / "crosstalk.yaml"
        path.write_text(body, encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "core.edge.cli.main",
            "--config",
            str(path),
            "config",
            "check",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        return err.decode()

    section = f"channels:\n  {platform}:\n    owners: ['1']\n" + MINIMAL.get(platform, "")
    # email's default is allowlist: only the owners may write (each key once, D135)
    pairing = section + ("    dmPolicy: pairing\n" if platform == "email" else "")
    # D62: a non-owner's DM never lands in the main session, so there is nothing to warn about
    assert warning not in await check(pairing)
    assert warning not in await check(section + "    dmPolicy: allowlist\n    allowFrom: ['2']\n")
