"""The model-fake self-tests' server (two models, so a request's model can be told apart); the
platform fakes' fixtures come from tests/fakes/fixtures.py, registered in tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.model import FakeModelServer, running_fake_model


@pytest.fixture
async def fake() -> AsyncIterator[FakeModelServer]:
    """The fake model server of test_model_fake_openai and test_model_fake_pydantic_ai."""
    async with running_fake_model(models=["fake-model", "fake-mini"]) as server:
        yield server
