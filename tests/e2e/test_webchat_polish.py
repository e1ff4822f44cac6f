"""The web chat's polish, in a real headless Chromium against the real gateway process.

Markdown rendered safely, the first-run empty state, token problems, bubbles tied to run ids
(streaming, /stop, commands mid-stream), "stored, not answered", /new, reloads, mobile width
and the dark theme. Screenshots go to docs/img/ (checked in, shown in the README) when
CROSSTALK_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser import MSGS, Browser
from tests.e2e.screens import mobile, screenshot
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text
from tests.gateway_process import GatewayProcess, write_config

pytestmark = pytest.mark.browser


async def say(browser: Browser, said: str) -> None:
    await browser.evaluate(
        f"(() => {{ const i = document.getElementById('text'); i.value = {json.dumps(said)};"
        " document.getElementById('send').click(); })()"
    )


async def bubbles(browser: Browser) -> list[dict[str, Any]]:
    value = await browser.evaluate(
        MSGS + ".map(e => ({role: e.dataset.role, text: e.dataset.text,"
        " shown: e.textContent, cls: e.className, run: e.dataset.runId || null}))"
    )
    assert isinstance(value, list)
    return value


def no_model_config(path: Path, state: Path) -> Path:
    path.write_text(
        f"gateway:\n  stateDir: {state}\n  auth:\n    token: e2e-token\n", encoding="utf-8"
    )
    return path


async def test_first_run_empty_state_on_a_phone_in_dark_mode(tmp_path: Path) -> None:
    config = no_model_config(tmp_path / "crosstalk.yaml", tmp_path / "state")
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await mobile(browser, dark=True)
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for("document.getElementById('empty') !== null")
        empty = await browser.evaluate("document.getElementById('empty').textContent")
        assert "Crosstalk web chat" in empty
        assert "No model is connected yet" in empty and "models.providers" in empty
        assert "/help" in empty and "/send" in empty  # the commands are listed
        assert await browser.evaluate("location.search") == ""  # the token left the URL bar
        # 390 px: nothing overflows sideways; the page is exactly the dynamic viewport high
        assert await browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert await browser.evaluate(
            "Math.abs(document.body.getBoundingClientRect().height - innerHeight) < 1"
        )
        assert (
            await browser.evaluate("getComputedStyle(document.body).backgroundColor")
            == "rgb(15, 23, 42)"
        )  # dark
        assert await browser.evaluate(
            "document.querySelector('link[rel=icon]').href.startsWith('data:image/svg')"
        )
        await screenshot(browser, "webchat-empty-mobile-dark.png")
        await say(browser, "/help")  # the commands answer even without a model
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.role === 'assistant')")
        assert await browser.evaluate("document.getElementById('empty')") is None


async def test_wrong_token_says_so_and_never_replaces_a_good_one(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{gw.url}/?token=wrong")
        await browser.wait_for("document.getElementById('status').textContent === 'invalid token'")
        problem = await browser.evaluate("document.getElementById('problem').textContent")
        assert "Invalid token" in problem and "crosstalk gateway" in problem
        await screenshot(browser, "webchat-invalid-token.png")
        assert await browser.evaluate("localStorage.getItem('crosstalk-token')") is None
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(
            "document.getElementById('status').textContent.startsWith('connected')"
        )
        await browser.goto(f"{gw.url}/?token=stale-link")  # an old link: the saved token wins
        await browser.wait_for(
            "document.getElementById('status').textContent.startsWith('connected')"
        )
        assert await browser.evaluate("localStorage.getItem('crosstalk-token')") == gw.token


async def test_conversation_markdown_runs_commands_and_reload(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(
            "document.getElementById('status').textContent"
            ".startsWith('connected · fake/fake-model')"
        )
        assert "fake/fake-model" in await browser.evaluate(
            "document.getElementById('empty').textContent"
        )

        # markdown, safely: formatting, a code block with a copy button, links in a new tab,
        # raw HTML as text
        fake_model.script(
            text(
                "**Bold** and `code`, see [docs](https://example.com).\n\n"
                "```python\nprint('hi')\n```\n\n<img src=x onerror=alert(1)> <b>raw</b>"
            )
        )
        await say(browser, "show me markdown")
        await browser.wait_for("document.querySelector('.msg.assistant pre') !== null")
        last = "[...document.querySelectorAll('.msg.assistant')].pop()"
        assert await browser.evaluate(f"{last}.querySelector('strong').textContent") == "Bold"
        assert await browser.evaluate(f"{last}.querySelector('pre button.copy') !== null")
        assert await browser.evaluate(f"{last}.querySelector('a').target") == "_blank"
        assert await browser.evaluate(f"{last}.querySelector('img, b')") is None
        assert "<img src=x onerror=alert(1)> <b>raw</b>" in await browser.evaluate(
            f"{last}.textContent"
        )

        # a command sent mid-stream answers below the streaming bubble, which keeps its place
        fake_model.script(text("first part, then the rest", pause_after=2))
        await say(browser, "stream something")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        await say(browser, "/send")
        await browser.wait_for(
            f"{MSGS}.some(e => (e.dataset.text || '').startsWith('⚙️ Send policy'))"
        )
        fake_model.resume()
        await browser.wait_for(f"!{MSGS}.some(e => e.classList.contains('pending'))")
        tail = [(b["role"], b["text"]) for b in (await bubbles(browser))[-4:]]
        assert tail == [
            ("user", "stream something"),
            ("assistant", "first part, then the rest"),
            ("user", "/send"),
            ("assistant", "⚙️ Send policy: on (default)"),
        ]
        await screenshot(browser, "webchat-conversation.png")

        # /stop keeps the partial reply, marked as stopped
        fake_model.script(text("partial words that never finish", pause_after=2))
        await say(browser, "go on and on")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        await say(browser, "/stop")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('stopped'))")
        stopped = [b for b in await bubbles(browser) if "stopped" in b["cls"]]
        assert len(stopped) == 1 and stopped[0]["text"].startswith("partial")
        assert "Stopped" in stopped[0]["shown"]
        fake_model.resume()

        # after /send off a message says it was stored but not answered
        await say(browser, "/send off")
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === '⚙️ Send policy set to off.')")
        await say(browser, "anyone?")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('unanswered'))")
        [unanswered] = [b for b in await bubbles(browser) if "unanswered" in b["cls"]]
        assert unanswered["text"] == "anyone?" and "Stored, not answered" in unanswered["shown"]

        # a reload keeps the command exchanges and the unanswered mark, in order
        before = [(b["role"], b["text"]) for b in await bubbles(browser)]
        await browser.goto(f"{gw.url}/")
        await browser.wait_for(
            "document.getElementById('status').textContent.startsWith('connected')"
        )
        after = await bubbles(browser)
        assert ("user", "/send off") in [(b["role"], b["text"]) for b in after]
        assert [(b["role"], b["text"]) for b in after if b["role"] == "user"] == [
            (r, t) for r, t in before if r == "user"
        ]
        assert any("unanswered" in b["cls"] for b in after)

        # /new clears the screen
        await say(browser, "/send on")
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === '⚙️ Send policy set to on.')")
        await say(browser, "/new")
        await browser.wait_for(f"{MSGS}.length >= 1 && {MSGS}[0].dataset.text === '/new'")
        await browser.wait_for(f"{MSGS}.length === 2")
        assert (await bubbles(browser))[0]["text"] == "/new"
