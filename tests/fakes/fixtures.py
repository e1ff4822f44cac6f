"""Ready-made function-scoped fixtures for the platform fakes.

Import them into a ``conftest.py`` (``from tests.fakes.fixtures import fake_discord, ...``).
A fresh server costs about a millisecond, so per-test isolation is cheap. Stop the client under
test *before* these fixtures tear down, or it will see the server vanish and start retrying.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from tests.fakes.discord import FakeDiscord, patch_discord_library
from tests.fakes.mailserver import MailServer
from tests.fakes.matrix_proxy import MatrixProxy
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.synapse import Homeserver
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp


@pytest_asyncio.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest_asyncio.fixture
async def fake_discord(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """Also patches discord.py's two global endpoint attributes (restored afterwards)."""
    fake = FakeDiscord()
    await fake.start()
    patch_discord_library(monkeypatch, fake.api_base, fake.gateway_url)
    try:
        yield fake
    finally:
        await fake.stop()


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest_asyncio.fixture
async def fake_whatsapp() -> AsyncIterator[FakeWhatsApp]:
    fake = FakeWhatsApp()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest_asyncio.fixture
async def fake_signal() -> AsyncIterator[FakeSignal]:
    fake = FakeSignal()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture(scope="session")
def synapse() -> Iterator[Homeserver]:
    """One real Synapse for the whole session (fresh users and rooms per test, D173)."""
    server = Homeserver()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest_asyncio.fixture
async def fake_matrix(synapse: Homeserver) -> AsyncIterator[MatrixProxy]:
    """The recording proxy in front of the session's Synapse (``.server`` is Synapse)."""
    proxy = MatrixProxy(synapse)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()


@pytest_asyncio.fixture
async def fake_email() -> AsyncIterator[MailServer]:
    """A real IMAP/SMTP server (mail-devel) on loopback, empty mailboxes."""
    server = MailServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
