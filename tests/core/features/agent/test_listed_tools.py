"""Our tools listed once per agent (D148): the same tools at every step and every turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Tool

from core.config import validate_config
from core.engine.runs import RunRequest
from core.features.agent.listed_tools import ListedOnce
from core.runtime import Runtime
from tests.fakes.model import FakeModelServer


def _names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


async def test_every_turn_offers_the_same_tools_as_the_first(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = {
        "gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "t"}},
        "models": {"providers": {"fake": {"baseUrl": fake_model.base_url, "apiKey": "k"}}},
        "agents": {"defaults": {"model": "fake/fake-model"}},
    }
    rt = Runtime(validate_config(config))
    await rt.start(probe_models=False)
    try:
        for text in ("one", "two", "three"):
            entry = await rt.services.ensure_session("agent:main:main")
            run = await rt.runs.submit(RunRequest(entry.key, text, rt.services.context_for(entry)))
            assert (await rt.runs.wait(run.id, 30)).status == "ok"
    finally:
        await rt.stop()
    first, *rest = fake_model.requests
    assert "sessions_list" in _names(first)
    assert all(body["tools"] == first["tools"] for body in rest)


def test_a_tool_that_prepares_itself_per_run_is_refused() -> None:
    async def prepare(ctx: Any, tool_def: Any) -> Any:
        return tool_def

    def echo(text: str) -> str:
        return text

    with pytest.raises(ValueError, match="prepare"):
        ListedOnce([Tool(echo, prepare=prepare)])
    assert ListedOnce([Tool(echo)]).tools.keys() == {"echo"}
