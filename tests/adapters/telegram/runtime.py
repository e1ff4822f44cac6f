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


async def add_telegram(rt: Runtime, retry_initial: float | None = None) -> TelegramAdapter:
    """The Telegram adapter built from `rt`'s config as every test builds it (long polls of a
    second, so a stop is quick), added to `rt`."""
    # Imported here: this module is loaded by every test run, PTB only by those using it.
    from adapters.telegram.adapter import TelegramAdapter, build

    section = rt.config.channels.telegram
    assert section is not None
    [adapter] = build(section, rt)
    assert isinstance(adapter, TelegramAdapter)
    adapter.poll_timeout = 1
    if retry_initial is not None:
        adapter.retry_initial = retry_initial
    await rt.add_adapter(adapter)
    return adapter


class _Started:
    """Runtimes with their Telegram adapter, for both fixtures below; `stop` stops the adapters
    before the fake goes."""

    def __init__(self, make_runtime: RuntimeFactory) -> None:
        self.make_runtime = make_runtime
        self.adapters: list[TelegramAdapter] = []

    async def start(
        self, config: dict[str, Any], retry_initial: float | None = None
    ) -> tuple[Runtime, TelegramAdapter]:
        rt = await self.make_runtime(config)
        adapter = await add_telegram(rt, retry_initial)
        self.adapters.append(adapter)
        return rt, adapter

    async def stop(self) -> None:
        for adapter in self.adapters:
            await adapter.stop()


@pytest.fixture
async def start_tg(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[Start]:
    """`await start_tg(**section)`: a runtime plus its adapter, retrying quickly."""
    started = _Started(make_runtime)

    async def start(**extra: Any) -> tuple[Runtime, TelegramAdapter]:
        return await started.start(telegram_config(fake_telegram, **extra), retry_initial=0.05)

    yield start
    await started.stop()


@pytest.fixture
async def telegram_rt(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[TelegramRuntime]:
    """`await telegram_rt({...})`: a runtime with the Telegram adapter on the fake, the config
    merged into `telegram_config`'s."""
    started = _Started(make_runtime)

    async def go(extra: dict[str, Any] | None = None) -> Runtime:
        rt, _ = await started.start(deep_merge(telegram_config(fake_telegram), extra or {}))
        return rt

    yield go
    await started.stop()
