"""The browser tests' screens: a phone's or a desktop's viewport, light or dark, and a
screenshot that replaces the checked-in one in docs/img/ only on request."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from tests.browser import Browser

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


async def screenshot(browser: Browser, name: str) -> None:
    """A PNG of the page; it replaces the checked-in one in docs/img/ only when
    CROSSTALK_UPDATE_SCREENSHOTS=1, so a test run leaves the work tree as it was."""
    shot = await browser.send("Page.captureScreenshot", {"format": "png"})
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    if os.environ.get("CROSSTALK_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        (DOCS_IMG / name).write_bytes(png)


async def mobile(browser: Browser, dark: bool) -> None:
    await _viewport(browser, 390, 844, True, dark)


async def desktop(browser: Browser, dark: bool = False) -> None:
    await _viewport(browser, 1280, 860, False, dark)


async def _viewport(browser: Browser, width: int, height: int, phone: bool, dark: bool) -> None:
    await browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone},
    )
    await browser.send(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]},
    )
