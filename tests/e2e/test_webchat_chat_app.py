"""The web chat on par with chat apps (D133), in headless Chromium against the real gateway:
multi-line input, a typing indicator, the Stop button, following the stream unless scrolled up,
tool calls folded, provider errors as errors, failed and stopped turns after a reload, and a
"No token" screen that says where the token is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CONNECTED, MSGS, Browser
from tests.e2e.screens import screenshot
from tests.fakes.model import FakeModelServer, error, last_user_text
from tests.fakes.model_script import text, tool_call
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually

pytestmark = pytest.mark.browser


async def key(browser: Browser, name: str, shift: bool = False) -> None:
    """A real key press (not a synthetic event): Enter sends, Shift+Enter is a new line."""
    code = {"Enter": 13}[name]
    for kind in ("keyDown", "keyUp"):
        await browser.send(
            "Input.dispatchKeyEvent",
            {
                "type": kind,
                "key": name,
                "code": name,
                "windowsVirtualKeyCode": code,
                "modifiers": 8 if shift else 0,
                **({"text": "\r"} if kind == "keyDown" else {}),
            },
        )


async def type_in(browser: Browser, said: str) -> None:
    await browser.evaluate("document.getElementById('text').focus()")
    await browser.send("Input.insertText", {"text": said})  # as typed or pasted


async def bubbles(browser: Browser) -> list[dict[str, Any]]:
    value = await browser.evaluate(
        MSGS + ".map(e => ({role: e.dataset.role, text: e.dataset.text,"
        " shown: e.textContent, cls: e.className}))"
    )
    assert isinstance(value, list)
    return value


async def test_input_typing_stop_tools_errors_and_reload(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(CONNECTED)

        # multi-line: Shift+Enter adds a line, pasted lines stay, Enter sends; a typing
        # indicator until the first word, with the Stop button
        fake_model.script(text("first word then more", pause_after=0))
        await type_in(browser, "line one")
        await key(browser, "Enter", shift=True)
        await type_in(browser, "pasted\nlines")
        assert await browser.evaluate(MSGS + ".length") == 0  # nothing sent yet
        await key(browser, "Enter")
        await browser.wait_for("document.getElementById('typing') !== null")
        assert await browser.evaluate("document.getElementById('stop').hidden") is False
        assert await browser.evaluate("document.getElementById('text').value") == ""
        [mine] = await bubbles(browser)
        assert mine["text"] == "line one\npasted\nlines"
        await fake_model.wait_for_requests(1, timeout=30)  # the first turn imports the model stack
        assert last_user_text(fake_model.requests[-1]) == "line one\npasted\nlines"
        fake_model.resume()
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === 'first word then more')")
        assert await browser.evaluate("document.getElementById('typing')") is None
        await browser.wait_for("document.getElementById('stop').hidden")

        # the Stop button stops a streaming answer
        fake_model.script(text("words that go on and on", pause_after=2))
        await type_in(browser, "go on")
        await key(browser, "Enter")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        await browser.evaluate("document.getElementById('stop').click()")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('stopped'))")
        await browser.wait_for("document.getElementById('stop').hidden")
        fake_model.resume()

        # tool calls show folded under the reply: name, arguments, result
        fake_model.script(tool_call("sessions_list", {"limit": 3}), text("listed them"))
        await type_in(browser, "list sessions")
        await key(browser, "Enter")
        last = "[...document.querySelectorAll('.msg.assistant')].pop()"
        await browser.wait_for(f"{last}.querySelector('details.tools') !== null")
        tools = await browser.evaluate(f"{last}.querySelector('details.tools').textContent")
        assert "sessions_list" in tools and '"limit": 3' in tools and '"count"' in tools
        assert await browser.evaluate(f"{last}.querySelector('details.tools').open") is False

        # a provider failure is an error, not a reply
        fake_model.script(error(500, "upstream exploded"))
        await type_in(browser, "fail now")
        await key(browser, "Enter")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('error'))")
        [failed] = [b for b in await bubbles(browser) if "error" in b["cls"]]
        assert failed["text"].startswith("⚠️ The model provider failed (HTTP 500)")
        assert "upstream exploded" not in failed["shown"]

        # after a reload: the stopped turn, the failure and the tool calls are still shown
        await browser.goto(f"{gw.url}/")
        await browser.wait_for(CONNECTED)
        after = await bubbles(browser)
        said = [(b["role"], b["text"]) for b in after]
        assert ("user", "line one\npasted\nlines") in said
        stopped = next(b for b in after if b["text"] == "go on")
        assert "stopped" in stopped["cls"] and "Stopped" in stopped["shown"]
        i = said.index(("user", "fail now"))
        assert "error" in after[i + 1]["cls"]
        assert after[i + 1]["text"].startswith("⚠️ The model provider failed (HTTP 500)")
        listed = next(b for b in after if b["text"] == "listed them")
        assert "sessions_list" in listed["shown"]


async def test_the_view_follows_the_stream_unless_scrolled_up(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 600, "height": 400, "deviceScaleFactor": 1, "mobile": False},
        )
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(CONNECTED)
        long = " ".join(f"word{i}\n" for i in range(60))
        at_bottom = (
            "(l => l.scrollHeight - l.scrollTop - l.clientHeight < 60)"
            "(document.getElementById('log'))"
        )

        fake_model.script(text(long, pause_after=3))
        await type_in(browser, "talk a lot")
        await key(browser, "Enter")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        fake_model.resume()
        await browser.wait_for(f"!{MSGS}.some(e => e.classList.contains('pending'))")
        assert await browser.evaluate(at_bottom) is True  # followed to the end

        fake_model.script(text(long, pause_after=3))
        await type_in(browser, "again")
        await key(browser, "Enter")
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        await browser.evaluate("document.getElementById('log').scrollTop = 0")  # reading above
        fake_model.resume()
        await browser.wait_for(f"!{MSGS}.some(e => e.classList.contains('pending'))")
        assert await browser.evaluate("document.getElementById('log').scrollTop") == 0


async def test_no_token_says_where_the_token_is(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{gw.url}/")
        await browser.wait_for("document.getElementById('problem') !== null")
        problem = await browser.evaluate("document.getElementById('problem').textContent")
        assert problem.startswith("No token")
        assert f"{gw.url}/?token=<token>" in problem
        assert ".crosstalk/gateway-token" in problem and "State:" in problem
        await browser.goto(f"{gw.url}/?token=wrong")
        await browser.wait_for("document.getElementById('status').textContent === 'invalid token'")
        problem = await browser.evaluate("document.getElementById('problem').textContent")
        assert "?token=<token>" in problem and ".crosstalk/gateway-token" in problem
        assert json.dumps(gw.token) not in problem


CRON_AND_HOOK = """\
cron:
  jobs:
    - {id: morning, every: 1h, message: morning summary, deliver: {channel: webchat, to: owner}}
hooks:
  mappings:
    - {id: ci, path: ci, token: hook-secret-123, messageTemplate: "CI {{ body.status }}",
       deliver: {channel: webchat, to: owner}}
"""


async def test_cron_and_webhook_replies_are_kept_and_labelled(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    """D136: a cron reply sent while no tab is open is shown when one opens; a webhook's
    arrives live; each names its job or hook above the text."""
    import aiohttp

    config = write_config(
        tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, CRON_AND_HOOK
    )
    auth = {"Authorization": "Bearer e2e-token"}
    async with (
        GatewayProcess(config) as gw,
        Browser(tmp_path / "profile") as browser,
        aiohttp.ClientSession(gw.url) as http,
    ):
        assert (await http.post("/api/cron/morning/run", headers=auth)).status == 202

        async def fired() -> Any:  # the job's end, read from the API (no tab is open)
            job = await (await http.get("/api/cron/morning", headers=auth)).json()
            return job if job["lastStatus"] else None

        job = await eventually(fired, 30, "the cron job's end")  # a cold process's first turn
        assert job["lastStatus"] == "ok"
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(CONNECTED)
        labelled = (
            f"{MSGS}.filter(e => e.dataset.label)"
            ".map(e => [e.dataset.label, e.dataset.text,"
            " getComputedStyle(e, '::before').content])"
        )
        assert await browser.evaluate(labelled) == [
            ["⏰ cron job morning", "echo: morning summary", '"⏰ cron job morning"']
        ]
        hook = await http.post(
            "/hooks/ci",
            json={"status": "green"},
            headers={"Authorization": "Bearer hook-secret-123"},
        )
        assert hook.status == 202
        await browser.wait_for(f"{labelled}.length === 2")
        assert (await browser.evaluate(labelled))[1][:2] == ["🪝 webhook ci", "echo: CI green"]
        assert (
            await browser.evaluate(f"{MSGS}.filter(e => e.classList.contains('error')).length") == 0
        )


async def test_the_readme_screenshot_of_a_first_chat(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    """README's picture of the web chat: a labelled cron message kept while no tab was open,
    a question, a folded tool call and a markdown answer. Written to docs/img/ only with
    CROSSTALK_UPDATE_SCREENSHOTS=1."""
    import aiohttp

    config = write_config(
        tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, CRON_AND_HOOK
    )
    auth = {"Authorization": "Bearer e2e-token"}
    async with (
        GatewayProcess(config) as gw,
        Browser(tmp_path / "profile") as browser,
        aiohttp.ClientSession(gw.url) as http,
    ):
        fake_model.script(
            text("Good morning! CI is green and two pull requests wait for a review.")
        )
        assert (await http.post("/api/cron/morning/run", headers=auth)).status == 202

        async def fired() -> Any:
            job = await (await http.get("/api/cron/morning", headers=auth)).json()
            return job if job["lastStatus"] else None

        await eventually(fired, 30, "the cron job's end")  # a cold process's first turn
        await browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 760, "height": 480, "deviceScaleFactor": 1, "mobile": False},
        )
        await browser.goto(f"{gw.url}/?token={gw.token}")
        await browser.wait_for(CONNECTED)
        fake_model.script(
            tool_call("sessions_list", {"limit": 5}),
            text(
                "You have **two** chats besides this one:\n\n"
                "- `cron:morning` — this morning's summary\n"
                "- `openai:…` — a conversation from an OpenAI client\n\n"
                "To start the gateway with a config file:\n\n"
                "```bash\n./scripts/run --config crosstalk.yaml\n```"
            ),
        )
        await type_in(browser, "Which chats do I have?")
        await key(browser, "Enter")
        last = "[...document.querySelectorAll('.msg.assistant')].pop()"
        await browser.wait_for(f"{last}.querySelector('details.tools') !== null")
        assert await browser.evaluate(f"{MSGS}.filter(e => e.dataset.label).length") == 1
        await screenshot(browser, "webchat-first-chat.png")
