"""The runtime's lifecycle: created → starting → running → stopping → stopped (D31)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import CrosstalkConfig, validate_config
from core.model.errors import CrosstalkError, LifecycleError
from core.runtime import Runtime


def _config(tmp_path: Path) -> CrosstalkConfig:
    return validate_config(
        {"gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "test-token"}}}
    )


def _state(rt: Runtime) -> str:
    return rt.state  # read afresh: mypy would keep the narrowed literal of an earlier assert


async def test_states_follow_start_and_stop(tmp_path: Path) -> None:
    rt = Runtime(_config(tmp_path))
    assert (rt.state, rt.started) == ("created", False)
    await rt.start(probe_models=False)
    assert (rt.state, rt.started) == ("running", True)
    await rt.stop()
    assert (rt.state, rt.started) == ("stopped", False)
    await rt.stop()  # a second stop is a no-op
    assert rt.state == "stopped"


async def test_a_second_start_is_a_clear_error(tmp_path: Path) -> None:
    rt = Runtime(_config(tmp_path))
    await rt.start(probe_models=False)
    try:
        with pytest.raises(LifecycleError, match="it is running"):
            await rt.start(probe_models=False)
        assert rt.state == "running"  # the refused start changed nothing
    finally:
        await rt.stop()
    with pytest.raises(LifecycleError, match="it is stopped"):
        await rt.start(probe_models=False)
    assert issubclass(LifecycleError, CrosstalkError)


async def test_async_with_starts_and_stops(tmp_path: Path) -> None:
    async with Runtime(_config(tmp_path)) as rt:
        assert rt.state == "running"
        assert await rt.store.get_session("agent:main:main") is None  # the store is open
    assert _state(rt) == "stopped"


async def test_async_with_stops_when_the_body_fails(tmp_path: Path) -> None:
    rt = Runtime(_config(tmp_path))
    with pytest.raises(RuntimeError, match="boom"):
        async with rt:
            raise RuntimeError("boom")
    assert rt.state == "stopped"


async def test_a_failed_start_can_be_stopped(tmp_path: Path) -> None:
    """The gateway stops a runtime whose start failed (a plugin that is not installed)."""
    config = validate_config(
        {
            "gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "test-token"}},
            "plugins": {"enabled": ["no-such-plugin"]},
        }
    )
    rt = Runtime(config)
    with pytest.raises(CrosstalkError, match="no-such-plugin"):
        await rt.start(probe_models=False)
    assert rt.state == "starting"
    await rt.stop()
    assert _state(rt) == "stopped"
