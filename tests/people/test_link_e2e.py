"""Linked identities (D65) across the real Telegram and Discord adapters on their fakes, one
gateway: wrong codes and the 5-tries cap (an injected clock ends the hour), `/link` from
Telegram completed on Discord, `/whoami`, one DM session under `per-peer`, the person counted
once against limits (D64), `/unlink`; and `session.identityLinks` people matched by `person:`
rules (D63) on both platforms."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from core.features.access.limits import windows
from core.runtime import Runtime
from tests.adapters.conformance.driver_discord import DiscordDriver
from tests.adapters.conformance.driver_telegram import TelegramDriver
from tests.adapters.conformance.drivers import STRANGER, Driver, User
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import tool_names
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

OFFER = re.compile(
    r"🔗 To link another account to this one, send /link ([A-HJ-NP-Z2-9]{8}) from it "
    r"within 10 minutes\."
)
HOUR_MS = 3_600_000


@asynccontextmanager
async def one_gateway(
    make_runtime: RuntimeFactory,
    fake_telegram: FakeTelegram,
    fake_discord: FakeDiscord,
    extra: dict[str, Any],
) -> AsyncIterator[tuple[Runtime, TelegramDriver, DiscordDriver]]:
    """Both platforms on one runtime; the stranger of each is a member (allowFrom)."""
    tg, dc = TelegramDriver(fake_telegram), DiscordDriver(fake_discord)
    config = deep_merge(tg.config(), dc.config())
    for d in (tg, dc):
        config["channels"][d.channel].update(
            {"allowFrom": [d.user_id(STRANGER)], "streaming": "off"}
        )
    rt = await make_runtime(deep_merge(config, extra))
    try:
        await tg.attach(rt)
        await dc.attach(rt)
        yield rt, tg, dc
    finally:
        await dc.stop()
        await tg.stop()


async def ask(driver: Driver, words: str, user: User = STRANGER) -> str:
    before = len(driver.replies())
    await driver.dm(words, user=user)
    return (await driver.wait_replies(before + 1, timeout=20))[before].text


async def test_link_across_telegram_and_discord(
    make_runtime: RuntimeFactory, fake_telegram: FakeTelegram, fake_discord: FakeDiscord
) -> None:
    extra = {"session": {"dmScope": "per-peer"}, "limits": {"member": {"messagesPerMinute": 3}}}
    async with one_gateway(make_runtime, fake_telegram, fake_discord, extra) as (rt, tg, dc):
        t0 = 1_795_000_000_000 - 1_795_000_000_000 % HOUR_MS
        rt.identities.clock = rt.limits.clock = lambda: t0
        tg_id, dc_id = tg.user_id(STRANGER), dc.user_id(STRANGER)
        for _ in range(5):
            assert await ask(dc, "/link ZZZZ2222") == "🔗 No pending link with code ZZZZ2222."
        found = OFFER.fullmatch(await ask(tg, "/link"))
        assert found is not None
        before = len(dc.replies())
        await dc.dm(
            f"/link {found.group(1)}", user=STRANGER
        )  # a sixth try within the hour: no answer
        assert await ask(dc, "/whoami") == f"⚙️ You are member on discord ({dc_id})."
        assert len(dc.replies()) == before + 1
        assert await rt.identities.person_of("discord", dc_id) is None

        rt.identities.clock = rt.limits.clock = lambda: t0 + HOUR_MS  # the next hour
        found = OFFER.fullmatch(await ask(tg, "/link"))
        assert found is not None
        assert await ask(dc, f"/link {found.group(1)}") == (
            f"🔗 Linked: telegram:{tg_id} and discord:{dc_id} are now one person."
        )
        person = await rt.identities.person_of("telegram", tg_id)
        assert person is not None and person == await rt.identities.person_of("discord", dc_id)
        assert await ask(dc, "/whoami") == (
            f"⚙️ You are member on discord ({dc_id}). Linked as {person}."
        )
        assert await ask(tg, "/whoami") == (
            f"⚙️ You are member on telegram ({tg_id}). Linked as {person}."
        )
        assert await ask(tg, "from telegram") == "echo: from telegram"
        assert await ask(dc, "from discord") == "echo: from discord"
        entry = await rt.store.get_session(f"agent:main:dm:{person}")
        assert entry is not None  # one DM session for the person, whichever app it writes from
        said = [
            m.plain_text() for m in await rt.store.history(entry.session_id) if m.role == "user"
        ]
        assert said == ["from telegram", "from discord"]
        assert await ask(tg, "third") == "echo: third"
        _, resets = windows(t0 + HOUR_MS)["messages per minute"]
        assert await ask(dc, "fourth") == (  # counted once: 3 a minute across both apps
            f"⏳ Limit reached: messages per minute (3/3). It resets at {resets}."
        )

        assert await ask(dc, "/unlink") == f"🔗 Unlinked discord:{dc_id}."
        assert await rt.identities.person_of("discord", dc_id) is None
        assert await rt.identities.person_of("telegram", tg_id) is None  # one account: dissolved


async def test_a_person_rule_follows_the_person_to_both_apps(
    make_runtime: RuntimeFactory,
    fake_telegram: FakeTelegram,
    fake_discord: FakeDiscord,
    fake_model: FakeModelServer,
) -> None:
    ids = {"tg": TelegramDriver.USERS[STRANGER][0], "dc": DiscordDriver.USERS[STRANGER][0]}
    extra = {
        "session": {
            "dmScope": "per-peer",
            "identityLinks": {"ann": [f"telegram:{ids['tg']}", f"discord:{ids['dc']}"]},
        },
        "tools": {"bySender": [{"match": "person:ann", "deny": ["sessions_*"]}]},
    }
    async with one_gateway(make_runtime, fake_telegram, fake_discord, extra) as (rt, tg, dc):
        for driver in (tg, dc):
            assert await ask(driver, "hello") == "echo: hello"
            offered = tool_names(fake_model.requests[-1])
            assert offered and not [t for t in offered if t.startswith("sessions_")], offered
            assert (await ask(driver, "/whoami")).endswith(" Linked as ann.")
        assert await ask(tg, "hello", user="owner") == "echo: hello"
        assert "sessions_list" in tool_names(fake_model.requests[-1])  # the rule is the person's
        entry = await rt.store.get_session("agent:main:dm:ann")
        assert entry is not None
