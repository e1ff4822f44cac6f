"""D72 from the owner console (D79) in a real headless Chromium against the gateway process:
an agent's call to a tool under `tools.approvals.require` waits; the console's Access page lists
it and its Approve button resumes the run; the request in the owner's Telegram chat is edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import Browser
from tests.e2e.console import OWNER, click, open_page, sign_in, telegram_config
from tests.e2e.screens import desktop
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text, tool_call
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess

pytestmark = [
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]


async def test_an_approval_decided_in_the_console(
    tmp_path: Path, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    config = telegram_config(
        tmp_path, fake_model, fake_telegram, "tools:\n  approvals:\n    require: [agents_list]\n"
    )
    fake_model.script(tool_call("agents_list", {}), text("the agents are listed"))
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await desktop(browser)
        await sign_in(browser, gw)
        await browser.wait_for("document.body.dataset.ready === 'overview'")
        fake_telegram.user_message(OWNER, "which agents are there?")
        [request] = await fake_telegram.wait_for("sendMessage", timeout=30)
        assert request.params["text"].startswith("🛡️ Approval needed: agents_list {}")
        status, body = await gw.request("GET", "/api/approvals")
        assert status == 200
        [approval] = body["approvals"]
        await open_page(browser, "access")
        row = f'#approvals tr[data-id="{approval["id"]}"]'
        await browser.wait_for(f"document.querySelector('{row}') !== null", 15)
        await click(browser, f"button.approve-tool[data-id='{approval['id']}']")
        sent = await fake_telegram.wait_for("sendMessage", 2, timeout=30)
        assert sent[1].params["text"] == "the agents are listed"
        edits = await fake_telegram.wait_for("editMessageText", 1, timeout=15)
        assert edits[0].params["text"] == "🛡️ Approved by the owner: agents_list"
        await browser.wait_for(f"document.querySelector('{row}') === null", 15)
