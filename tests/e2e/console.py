"""The owner console (D79) driven in the browser: a gateway config with the fake model and the
fake Telegram, signing in through the form, opening a page, clicking."""

from __future__ import annotations

import json
from pathlib import Path

from tests.browser import Browser
from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess

OWNER = 4242


def telegram_config(
    tmp_path: Path,
    fake_model: FakeModelServer,
    fake_telegram: FakeTelegram,
    extra: str = "",
    streaming: str = "off",
) -> Path:
    """The fake model (priced, so costs show) and the fake Telegram with one owner."""
    path = tmp_path / "crosstalk.yaml"
    path.write_text(
        f"gateway:\n  stateDir: {tmp_path / 'state'}\n  auth:\n    token: e2e-token\n"
        f"models:\n  providers:\n    fake:\n      baseUrl: {fake_model.base_url}\n"
        "      apiKey: test\n      models:\n        - id: fake-model\n"
        "          cost: {input: 1000, output: 5000}\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        f"channels:\n  telegram:\n    botToken: '{fake_telegram.token}'\n"
        f"    apiBaseUrl: {fake_telegram.base_url}\n    owners: ['{OWNER}']\n"
        f"    streaming: '{streaming}'\n" + extra,
        encoding="utf-8",
    )
    return path


async def sign_in(browser: Browser, gw: GatewayProcess, token: str | None = None) -> None:
    """Open /console (the sign-in form) and submit the token through the form."""
    await browser.goto(f"{gw.url}/console")
    await browser.wait_for("document.getElementById('signin') !== null")
    await browser.evaluate(
        f"(() => {{ document.getElementById('token').value = {json.dumps(token or gw.token)};"
        " document.getElementById('signin').requestSubmit(); })()"
    )


async def open_page(browser: Browser, name: str) -> None:
    """Go to a page of the signed-in console and wait until it has rendered."""
    await browser.evaluate(f"location.hash = '#{name}'")
    await browser.wait_for(f"document.body.dataset.ready === {json.dumps(name)}")


async def click(browser: Browser, selector: str) -> None:
    await browser.wait_for(f"document.querySelector({json.dumps(selector)}) !== null")
    await browser.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
