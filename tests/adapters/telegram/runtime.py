"""A runtime with the Telegram adapter on FakeTelegram, for every test that needs one
(registered suite-wide from tests/conftest.py): `start_tg(**section)` hands back the adapter
too, `telegram_rt({...})` merges a whole config and hands back the runtime."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.telegram import FakeTelegram

if TYPE_CHECKING:
    from adapters.telegram.adapter import TelegramAdapter

OWNER = 42
Start = Callable[..., Awaitable[tuple[Runtime, "TelegramAdapter"]]]
TelegramRuntime = Callable[..., Awaitable[Runtime]]


def telegram_config(fake: FakeTelegram, **extra: Any) -> dict[str, Any]:
    section = {
        "botToken": fake.token,
        "apiBaseUrl": fake.base_url,
        "owners": [str(OWNER)],
        "streaming": "off",
        "groupPolicy": "open",  # group pairing (D62) has its own tests
        **extra,
    }  # previews have their own tests
    return {"channels": {"telegram": section}}


@pytest.fixture
async def start_tg(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[Start]:
    """Start a runtime plus the adapter built from its config; stop the adapter before the fake."""
    # Imported here: this module is loaded by every test run, PTB only by those using it.
    from adapters.telegram.adapter import TelegramAdapter, build

    adapters: list[TelegramAdapter] = []

    async def start(**extra: Any) -> tuple[Runtime, TelegramAdapter]:
        rt = await make_runtime(telegram_config(fake_telegram, **extra))
        section = rt.config.channels.telegram
        assert section is not None
        [adapter] = build(section, rt)
        assert isinstance(adapter, TelegramAdapter)
        adapter.poll_timeout = 1
        adapter.retry_initial = 0.05
        adapters.append(adapter)
        await rt.add_adapter(adapter)
        return rt, adapter

    yield start
    for adapter in adapters:
        await adapter.stop()


@pytest.fixture
async def telegram_rt(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[TelegramRuntime]:
    """`await telegram_rt({...})`: a runtime with the Telegram adapter on the fake, the config
    merged into `telegram_config`'s; the adapter is stopped before the fake."""
    from adapters.telegram.adapter import TelegramAdapter, build

    adapters: list[TelegramAdapter] = []

    async def go(extra: dict[str, Any] | None = None) -> Runtime:
        rt = await make_runtime(deep_merge(telegram_config(fake_telegram), extra or {}))
        assert rt.config.channels.telegram is not None
        [adapter] = build(rt.config.channels.telegram, rt)
        assert isinstance(adapter, TelegramAdapter)
        adapter.poll_timeout = 1
        adapters.append(adapter)
        await rt.add_adapter(adapter)
        return rt

    yield go
    for adapter in adapters:
        await adapter.stop()
