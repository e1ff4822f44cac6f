"""Make the platform-fake fixtures available to the fake self-tests, and give the model-fake
self-tests their server (two models, so a request's model can be told apart)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.fixtures import (
    fake_discord,
    fake_signal,
    fake_slack,
    fake_telegram,
    fake_whatsapp,
)
from tests.fakes.model import FakeModelServer, running_fake_model

__all__ = ["fake_discord", "fake_signal", "fake_slack", "fake_telegram", "fake_whatsapp"]


@pytest.fixture
async def fake() -> AsyncIterator[FakeModelServer]:
    """The fake model server of test_model_fake_openai and test_model_fake_pydantic_ai."""
    async with running_fake_model(models=["fake-model", "fake-mini"]) as server:
        yield server
