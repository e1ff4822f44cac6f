"""The owner console (D79) in a real headless Chromium against the real gateway process.

Sign-in (a wrong token, then the right one), a stranger's pairing code approved from the page
and the stranger answered on the fake Telegram, the send policy turned off from the page while
a reply is being made (suppressed, listed under Deliveries with its reason; later messages
stored, not answered: D5), a cron job run now, the token in no URL, the Content-Security-Policy
obeyed, and every page at 390 px without sideways scrolling, light and dark. Screenshots go to
docs/img/ when CROSSTALK_UPDATE_SCREENSHOTS=1 (as the web chat's do).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.browser import Browser
from tests.e2e.console import OWNER, click, open_page, sign_in, telegram_config
from tests.e2e.screens import desktop, mobile, screenshot
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text, tool_call
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess
from tests.polling import eventually

pytestmark = [
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]

STRANGER = 7
PAGES = ("overview", "sessions", "deliveries", "access", "cron", "usage", "config")
CODE = re.compile(r"Your pairing code: ([A-HJ-NP-Z2-9]{8})")


async def shot(browser: Browser, name: str) -> None:
    """`screenshot` without a passing notice over the page."""
    await browser.evaluate(
        "document.getElementById('toast') && (document.getElementById('toast').hidden = true)"
    )
    await screenshot(browser, name)


async def texts(browser: Browser, selector: str) -> list[str]:
    value = await browser.evaluate(
        f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)"
    )
    assert isinstance(value, list)
    return value


def urls_seen(browser: Browser) -> list[str]:
    """Every URL the browser requested (pages, scripts, fetches, the event stream)."""
    return [e["request"]["url"] for e in browser.events_named("Network.requestWillBeSent")]


def csp_violations(browser: Browser) -> list[Any]:
    return [
        e
        for e in browser.events_named("Log.entryAdded")
        if "Content Security Policy" in e.get("entry", {}).get("text", "")
    ]


async def test_sign_in_then_approve_a_stranger_from_the_console(
    tmp_path: Path, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    config = telegram_config(tmp_path, fake_model, fake_telegram)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.send("Network.enable")
        await browser.send("Log.enable")
        await desktop(browser)
        await sign_in(browser, gw, "not-the-token")
        await browser.wait_for("document.getElementById('problem') !== null")
        assert (
            await browser.evaluate("document.getElementById('problem').textContent")
            == "That token is not this gateway's token."
        )
        await shot(browser, "console-sign-in.png")
        await sign_in(browser, gw)
        await browser.wait_for("document.body.dataset.ready === 'overview'")
        await browser.wait_for("document.body.dataset.live === 'on'")
        assert await browser.evaluate("location.pathname + location.search") == "/console"
        assert await browser.evaluate("document.cookie") == ""  # HttpOnly: scripts never see it

        # a stranger asks; the request appears on the Access page without a reload
        await open_page(browser, "access")
        assert await browser.evaluate("document.querySelector('#pairing .empty') !== null")
        fake_telegram.user_message(STRANGER, "hello, may I talk to your bot?", username="mallory")
        [pairing] = await fake_telegram.wait_for("sendMessage", timeout=15)
        match = CODE.search(pairing.params["text"])
        assert match is not None, pairing.params["text"]
        code = match.group(1)
        await browser.wait_for(
            f"document.querySelector('#pairing tr[data-code=\"{code}\"]') !== null", 15
        )
        row = await texts(browser, f"#pairing tr[data-code='{code}'] td")
        assert "Mallory (7)" in row and "hello, may I talk to your bot?" in row
        assert await browser.evaluate("document.getElementById('pending-count').textContent") == "1"
        await shot(browser, "console-access.png")
        # linked identities (D65) and tool approvals (D72) show where the gateway serves them
        _, spec = await gw.request("GET", "/openapi.json")
        for section, path in (("identities", "/api/identities"), ("approvals", "/api/approvals")):
            shown = await browser.evaluate(f"document.getElementById('{section}') !== null")
            assert shown == (path in spec["paths"]), section
        await click(browser, f"button.approve[data-code='{code}']")
        sent = await fake_telegram.wait_for("sendMessage", 2, timeout=15)
        assert str(sent[1].params["chat_id"]) == str(STRANGER)  # told once, in their chat
        await browser.wait_for(
            f"document.querySelector('#approved tr[data-user=\"{STRANGER}\"]') !== null"
        )
        assert await browser.evaluate("document.querySelector('#pairing .empty') !== null")
        fake_telegram.user_message(STRANGER, "thanks!", username="mallory")
        answered = await fake_telegram.wait_for("sendMessage", 3, timeout=15)
        assert answered[2].params["text"] == "echo: thanks!"
        assert str(answered[2].params["chat_id"]) == str(STRANGER)

        # the token was in no URL the browser asked for, and the page obeyed its CSP
        seen = urls_seen(browser)
        assert any(u.endswith("/api/pairing") for u in seen), seen
        assert any("/api/events" in u for u in seen), seen
        assert not [u for u in seen if gw.token in u]
        assert csp_violations(browser) == []
        async with aiohttp.ClientSession() as http, http.get(f"{gw.url}/console") as resp:
            assert resp.headers["Content-Security-Policy"].startswith("default-src 'none'")
            assert "script-src 'self'" in resp.headers["Content-Security-Policy"]

        # sign out: the form again, and the old cookie no longer opens the API
        cookies = (await browser.send("Network.getCookies"))["cookies"]
        [cookie] = [c for c in cookies if c["name"] == "crosstalk_console"]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        await click(browser, "#sign-out")
        await browser.wait_for("document.getElementById('signin') !== null")
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                f"{gw.url}/api/pairing", headers={"Cookie": f"crosstalk_console={cookie['value']}"}
            ) as resp,
        ):
            assert resp.status == 401


async def test_send_policy_off_while_a_reply_is_made(
    tmp_path: Path, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    # streamed replies: the fake model can hold one before its first word (no preview yet)
    config = telegram_config(tmp_path, fake_model, fake_telegram, streaming="edit")
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await desktop(browser)
        fake_telegram.user_message(OWNER, "hello")
        await fake_telegram.wait_for("sendMessage", timeout=15)
        await sign_in(browser, gw)
        await browser.wait_for("document.body.dataset.ready === 'overview'")
        await open_page(browser, "sessions")
        await browser.wait_for(
            "document.querySelector('tr[data-key=\"agent:main:main\"]') !== null"
        )
        await shot(browser, "console-sessions.png")
        await browser.evaluate("location.hash = '#session/agent%3Amain%3Amain'")
        await browser.wait_for("document.body.dataset.ready === 'session'")
        assert (
            await browser.evaluate("document.getElementById('policy-text').textContent")
            == "Send policy: on (default)"
        )

        fake_model.script(text("a reply nobody should see", pause_after=0))
        fake_telegram.user_message(OWNER, "tell me a secret")
        await asyncio.wait_for(fake_model.paused.wait(), 15)  # the reply is being made
        await click(browser, "#send-policy button[data-choice='off']")
        await browser.wait_for(
            "document.getElementById('policy-text').textContent"
            " === 'Send policy: off (session override)'"
        )
        status, body = await gw.request("GET", "/api/sessions/main")
        assert status == 200 and body["entry"]["sendPolicy"] == "deny"
        await shot(browser, "console-session.png")
        await open_page(browser, "deliveries")
        fake_model.resume()
        row = "#delivery-list tr[data-outcome='suppressed_by_policy']"
        await browser.wait_for(f"document.querySelector({json.dumps(row)}) !== null", 15)
        cells = await texts(browser, f"{row} td")
        assert "session override" in cells and "reply" in cells
        await shot(browser, "console-deliveries.png")
        assert len(fake_telegram.calls_for("sendMessage")) == 1  # only the first "echo: hello"

        # D5: later messages are stored, not answered
        requests = len(fake_model.requests)
        fake_telegram.user_message(OWNER, "are you there?")

        async def stored() -> bool:
            history = await gw.invoke("sessions_history", {"sessionKey": "main"})
            return any(m["content"][0].get("text") == "are you there?" for m in history["messages"])

        await eventually(stored, 15, "the later message stored")
        assert len(fake_model.requests) == requests
        assert len(fake_telegram.calls_for("sendMessage")) == 1
        await browser.evaluate("location.hash = '#session/agent%3Amain%3Amain'")
        await browser.wait_for("document.body.dataset.ready === 'session'")
        await browser.wait_for(
            "[...document.querySelectorAll('#transcript .msg.user')]"
            ".some(e => e.textContent.includes('are you there?'))"
        )


async def test_cron_run_now_and_every_page_on_a_phone(
    tmp_path: Path, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    extra = (
        "cron:\n  jobs:\n    - id: morning-brief\n      every: 1h\n"
        "      message: Say good morning\n"
        "hooks:\n  mappings:\n    - id: github\n      path: github\n"
        "      token: hook-secret-token\n"
    )
    config = telegram_config(tmp_path, fake_model, fake_telegram, extra)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.send("Log.enable")
        await desktop(browser)
        fake_model.script(
            tool_call("sessions_list", {"limit": 5}), text("You have one session: this one.")
        )
        fake_telegram.user_message(OWNER, "which sessions do I have?")
        await fake_telegram.wait_for("sendMessage", timeout=15)
        await sign_in(browser, gw)
        await browser.wait_for("document.body.dataset.ready === 'overview'")
        await shot(browser, "console-overview.png")

        # the transcript folds the tool call and its result
        await browser.evaluate("location.hash = '#session/agent%3Amain%3Amain'")
        await browser.wait_for("document.body.dataset.ready === 'session'")
        assert await texts(browser, "#transcript details.tool summary") == [
            "Tool call: sessions_list",
            "Tool result: sessions_list",
        ]
        assert await browser.evaluate(
            "[...document.querySelectorAll('#transcript details.tool')].every(d => !d.open)"
        )
        assert await browser.evaluate(
            "[...document.querySelectorAll('#transcript .msg')]"
            ".map(e => e.dataset.role + ': ' + e.lastChild.textContent)"
        ) == ["user: which sessions do I have?", "assistant: You have one session: this one."]

        await open_page(browser, "cron")
        assert await texts(browser, "tr[data-hook='github'] .token") == ["***"]
        assert "hook-secret-token" not in await browser.evaluate("document.body.textContent")
        requests = len(fake_model.requests)
        await click(browser, "button[data-action='run-now'][data-job='morning-brief']")
        await fake_model.wait_for_requests(requests + 1, timeout=15)
        await browser.wait_for(
            "[...document.querySelectorAll('tr[data-job=\"morning-brief\"] td')]"
            ".some(td => td.dataset.label === 'Last status'"
            " && td.textContent.startsWith('ok'))",
            15,
        )
        status, jobs = await gw.request("GET", "/api/cron")
        [job] = jobs["jobs"]
        assert status == 200 and job["lastStatus"] == "ok" and job["lastRunAt"]
        await shot(browser, "console-cron.png")
        await click(browser, "button[data-action='disable'][data-job='morning-brief']")
        await browser.wait_for(
            "document.querySelector(\"button[data-action='enable']"
            "[data-job='morning-brief']\") !== null"
        )
        assert (await gw.request("GET", "/api/cron/morning-brief"))[1]["enabled"] is False
        await click(browser, "button[data-action='enable'][data-job='morning-brief']")
        await browser.wait_for(
            "document.querySelector(\"button[data-action='disable']"
            "[data-job='morning-brief']\") !== null"
        )
        assert (await gw.request("GET", "/api/cron/morning-brief"))[1]["enabled"] is True
        # jobs from the config file are removed there, not from the page
        assert (
            await browser.evaluate("document.querySelector(\"button[data-action='remove']\")")
            is None
        )
        for name in ("usage", "config"):
            await open_page(browser, name)
            await shot(browser, f"console-{name}.png")
        assert "***" in await browser.evaluate("document.getElementById('config').textContent")

        for dark in (False, True):
            await mobile(browser, dark)
            for name in PAGES:
                await open_page(browser, name)
                width = await browser.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"{name} is {width} px wide at 390 px ({dark=})"
            await browser.evaluate("location.hash = '#session/agent%3Amain%3Amain'")
            await browser.wait_for("document.body.dataset.ready === 'session'")
            assert await browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert (
            await browser.evaluate("getComputedStyle(document.body).backgroundColor")
            == "rgb(15, 23, 42)"
        )  # dark
        await shot(browser, "console-session-mobile-dark.png")
        await mobile(browser, False)
        await open_page(browser, "overview")
        await shot(browser, "console-overview-mobile.png")
        assert csp_violations(browser) == []
