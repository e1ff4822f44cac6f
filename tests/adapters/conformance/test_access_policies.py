"""Who may talk to the bot without pairing (D11), on every platform: DM allowlists and disabled
DMs, group allowlists and disabled groups; `config check` no longer warns about a shared main
session (D62). "No reply" is shown by the refusal counter, never by sleeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.conformance.access_helpers import no_trace, refused, require_strangers
from tests.adapters.conformance.drivers import OWNER, STRANGER, Driver
from tests.cli import crosstalk
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


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
        rc, _, err = await crosstalk("--config", str(path), "config", "check")
        assert rc == 0, err
        return err

    section = f"channels:\n  {platform}:\n    owners: ['1']\n" + MINIMAL.get(platform, "")
    # email's default is allowlist: only the owners may write (each key once, D135)
    pairing = section + ("    dmPolicy: pairing\n" if platform == "email" else "")
    # D62: a non-owner's DM never lands in the main session, so there is nothing to warn about
    assert warning not in await check(pairing)
    assert warning not in await check(section + "    dmPolicy: allowlist\n    allowFrom: ['2']\n")
