"""The web chat page in a real headless Chromium against the real gateway process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import Browser
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually

pytestmark = pytest.mark.browser


async def test_owner_chats_and_toggles_send_policy_in_the_page(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(
            "document.getElementById('status').textContent.startsWith('connected')"
        )

        async def say(text: str) -> None:
            await browser.evaluate(
                f"(() => {{ const i = document.getElementById('text'); i.value = {text!r};"
                " document.getElementById('send').click(); })()"
            )

        def assistant_count() -> str:
            return "document.querySelectorAll('.msg.assistant:not(.pending)').length"

        await say("hi from chromium")
        await browser.wait_for(f"{assistant_count()} >= 1")
        last = "[...document.querySelectorAll('.msg.assistant')].pop().textContent"
        assert await browser.evaluate(last) == "echo: hi from chromium"

        await say("/send off")
        await browser.wait_for(f"{assistant_count()} >= 2")
        assert await browser.evaluate(last) == "⚙️ Send policy set to off."

        await say("/send")
        await browser.wait_for(f"{assistant_count()} >= 3")
        assert await browser.evaluate(last) == "⚙️ Send policy: off (session override)"

        # Reload: the history shown comes from the store, including the unanswered message.
        await say("stored but not answered")

        async def stored() -> bool:
            hist = await gw.invoke("sessions_history", {"sessionKey": "main"})
            return any(
                m["content"][0]["text"] == "stored but not answered" for m in hist["messages"]
            )

        await eventually(stored, what="the unanswered message stored")
        status, body = await gw.request("GET", "/api/sessions/main")
        assert status == 200 and body["entry"]["sendPolicy"] == "deny"
        await browser.goto(f"{gw.url}/")
        await browser.wait_for(
            "[...document.querySelectorAll('.msg.user')].some("
            "e => e.dataset.text === 'stored but not answered')"
        )
