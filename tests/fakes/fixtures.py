"""Ready-made function-scoped fixtures for the platform fakes.

tests/conftest.py registers this module as a plugin, so every test can ask for them by name.
A fresh server costs about a millisecond, so per-test isolation is cheap. Stop the client under
test *before* these fixtures tear down, or it will see the server vanish and start retrying.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import TypeVar

import pytest
import pytest_asyncio

from tests.fakes.base import EmulatorServer
from tests.fakes.discord import FakeDiscord, patch_discord_library
from tests.fakes.mailserver import MailServer
from tests.fakes.matrix_proxy import MatrixProxy
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.synapse import Homeserver
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp

Fake = TypeVar("Fake", bound=EmulatorServer)


@asynccontextmanager
async def serving(fake: Fake) -> AsyncIterator[Fake]:
    """`fake` started on loopback for the block, stopped after it however the block ends."""
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest_asyncio.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with serving(FakeTelegram()) as fake:
        yield fake


@pytest_asyncio.fixture
async def fake_discord(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """Also patches discord.py's two global endpoint attributes (restored afterwards)."""
    async with serving(FakeDiscord()) as fake:
        patch_discord_library(monkeypatch, fake.api_base, fake.gateway_url)
        yield fake


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    async with serving(FakeSlack()) as fake:
        yield fake


@pytest_asyncio.fixture
async def fake_whatsapp() -> AsyncIterator[FakeWhatsApp]:
    async with serving(FakeWhatsApp()) as fake:
        yield fake


@pytest_asyncio.fixture
async def fake_signal() -> AsyncIterator[FakeSignal]:
    async with serving(FakeSignal()) as fake:
        yield fake


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
    async with serving(MatrixProxy(synapse)) as proxy:
        yield proxy


@pytest_asyncio.fixture
async def fake_email() -> AsyncIterator[MailServer]:
    """A real IMAP/SMTP server (mail-devel) on loopback, empty mailboxes."""
    async with serving(MailServer()) as server:
        yield server
