"""Web chat uploads in a real headless Chromium (D154): a file by the 📎 button, an image by
paste and by drag and drop, a voice recording from Chromium's fake microphone; each reaches the
gateway as an attachment, the recording is heard by speech to text, and a reply's media show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import Browser
from tests.fakes.audio import FakeAudioServer
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config

pytestmark = pytest.mark.browser
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAAB4iG8MwAAAABJRU5ErkJggg=="
)
FILE = (
    "(name, type, b64) => { const bin = atob(b64); const a = new Uint8Array(bin.length);"
    " for (let i = 0; i < bin.length; i++) a[i] = bin.charCodeAt(i);"
    " return new File([a], name, { type }); }"
)


async def test_button_paste_drop_and_recording(tmp_path: Path, fake_model: FakeModelServer) -> None:
    audio = FakeAudioServer(transcript="a recorded hello")
    await audio.start()
    extra = f"voice:\n  stt: {{provider: openai, baseUrl: {audio.v1}}}\n"
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, extra)
    try:
        async with GatewayProcess(config) as gw, Browser(tmp_path / "profile") as browser:
            await browser.goto(f"{gw.url}/?token={gw.token}")
            await browser.wait_for(
                "document.getElementById('status').textContent.startsWith('connected')"
            )
            replies = "document.querySelectorAll('.msg.assistant:not(.pending)').length"
            last = "[...document.querySelectorAll('.msg.assistant')].pop().dataset.text"

            # the 📎 button: a file chosen in the picker
            await browser.evaluate(
                f"(() => {{ const f = ({FILE})('notes.txt', 'text/plain', btoa('hello notes'));"
                " const dt = new DataTransfer(); dt.items.add(f);"
                " const pick = document.getElementById('file'); pick.files = dt.files;"
                " pick.dispatchEvent(new Event('change')); })()"
            )
            await browser.wait_for("document.querySelectorAll('#uploads .chip').length === 1")
            await browser.evaluate("document.getElementById('send').click()")
            await browser.wait_for(f"{replies} >= 1", timeout=60)
            assert await browser.evaluate(last) == "echo: [file: notes.txt, 11 B]"

            # paste, then drop: two images in one message with text
            await browser.evaluate(
                f"(() => {{ const make = {FILE};"
                " const paste = new DataTransfer();"
                f" paste.items.add(make('pasted.png', 'image/png', '{PNG_B64}'));"
                " document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: paste }));"
                " const drop = new DataTransfer();"
                f" drop.items.add(make('dropped.png', 'image/png', '{PNG_B64}'));"
                " document.dispatchEvent(new DragEvent('drop', { dataTransfer: drop })); })()"
            )
            await browser.wait_for("document.querySelectorAll('#uploads .chip').length === 2")
            await browser.evaluate(
                "(() => { document.getElementById('text').value = 'two pictures';"
                " document.getElementById('send').click(); })()"
            )
            await browser.wait_for(f"{replies} >= 2", timeout=60)
            assert await browser.evaluate(last) == (
                "echo: two pictures\n[image: pasted.png, 67 B]\n[image: dropped.png, 67 B]"
            )

            # 🎤: record a moment from the fake microphone; it is sent when it stops
            await browser.evaluate("document.getElementById('record').click()")
            await browser.wait_for("document.getElementById('record').classList.contains('on')")
            await browser.evaluate(
                "new Promise(r => setTimeout(r, 800)).then(() =>"
                " document.getElementById('record').click())"
            )
            await browser.wait_for(f"{replies} >= 3", timeout=60)
            assert (await browser.evaluate(last)).startswith("echo: a recorded hello")
            [call] = audio.calls_for("transcriptions")
            assert call.params["content_type"] in ("audio/webm", "audio/ogg")
            assert len(call.params["file"]) > 500
    finally:
        await audio.stop()
