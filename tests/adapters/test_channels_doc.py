"""docs/CHANNELS.md as printed: its config sections load, and its verify-challenge command
works against a gateway configured from them (the fakes stand in for Meta and signal-cli)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
import yaml
from aiohttp.test_utils import TestServer

from core.edge.http.server import build_app
from tests.adapters.conformance.driver_whatsapp import registry_build
from tests.conftest import RuntimeFactory
from tests.fakes.signal import FakeSignal
from tests.fakes.whatsapp import FakeWhatsApp

DOC = Path(__file__).resolve().parents[2] / "docs" / "CHANNELS.md"
ENV = {
    "WHATSAPP_ACCESS_TOKEN": "EAAfake-access-token",
    "WHATSAPP_APP_SECRET": "fake-app-secret",
    "WHATSAPP_VERIFY_TOKEN": "fake-verify-token",
    "MATRIX_PASSWORD": "fake-matrix-password",
    "MAIL_PASSWORD": "fake-mail-password",
}


def sections() -> dict[str, dict[str, Any]]:
    """The YAML blocks of the doc, by channel."""
    out: dict[str, dict[str, Any]] = {}
    for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        out.update(yaml.safe_load(block)["channels"])
    return out


def test_the_doc_links_from_readme_and_its_sections_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from core.config.loader import load_config

    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/CHANNELS.md" in readme
    found = sections()
    assert set(found) == {"whatsapp", "signal", "matrix", "email"}
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        path = tmp_path / "crosstalk.yaml"
        path.write_text(block, encoding="utf-8")
        config = load_config(path)
        [section] = [
            getattr(config.channels, n) for n in found if getattr(config.channels, n) is not None
        ]
        # email's default is allowlist (D171): a forged sender gets nothing
        policy = "allowlist" if section is config.channels.email else "pairing"
        assert section.owners and section.dm_policy == policy
    wa = found["whatsapp"]
    assert wa["accessToken"] == "${WHATSAPP_ACCESS_TOKEN}"  # no secret in the file
    assert found["matrix"]["password"] == "${MATRIX_PASSWORD}"
    assert found["email"]["imap"]["password"] == "${MAIL_PASSWORD}"


async def test_the_printed_verify_challenge(
    make_runtime: RuntimeFactory, fake_whatsapp: FakeWhatsApp, fake_signal: FakeSignal
) -> None:
    wa = {
        **sections()["whatsapp"],
        "accessToken": fake_whatsapp.token,
        "appSecret": fake_whatsapp.app_secret,
        "verifyToken": fake_whatsapp.verify_token,
        "phoneNumberId": fake_whatsapp.phone_number_id,
        "apiBaseUrl": fake_whatsapp.api_base,
    }
    signal = {
        **sections()["signal"],
        "account": fake_signal.account,
        "httpUrl": fake_signal.base_url,
    }
    rt = await make_runtime({"channels": {"whatsapp": wa, "signal": signal}})
    adapters = registry_build(rt, "whatsapp") + registry_build(rt, "signal")
    for adapter in adapters:
        await rt.add_adapter(adapter)
    assert [a.status().state for a in adapters] == ["connected", "connected"]
    [printed] = re.findall(r"^    curl '([^']+)'$", DOC.read_text(encoding="utf-8"), re.M)
    url = urlsplit(printed.replace("<your verify token>", fake_whatsapp.verify_token))
    assert (url.hostname, url.port) == ("127.0.0.1", 18789)  # the gateway's default address
    server = TestServer(build_app(rt, "test-token", adapters))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.make_url(f"{url.path}?{url.query}")) as resp:
                assert (resp.status, await resp.text()) == (200, "42")
            wrong = url.query.replace(fake_whatsapp.verify_token, "guess")
            async with http.get(server.make_url(f"{url.path}?{wrong}")) as resp:
                assert resp.status == 403
    finally:
        for adapter in adapters:
            await adapter.stop()
        await server.close()
