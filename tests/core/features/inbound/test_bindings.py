"""D76 bindings: the first match routes an inbound message to its agent; no match, the
default agent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from core.config import validate_config
from core.config.loader import ConfigError
from tests.narrow import narrow_parts

AGENTS: dict[str, Any] = {
    "channels": {"telegram": {"groupPolicy": "open"}},
    "agents": {"list": [{"id": "main", "default": True}, {"id": "ops"}, {"id": "family"}]},
    "bindings": [
        {"agentId": "ops", "match": {"channel": "telegram", "group": "-100"}},
        {"agentId": "family", "match": {"channel": "telegram", "peer": "mum"}},
        {"agentId": "ops", "match": {"channel": "telegram", "accountId": "work"}},
    ],
}


async def test_the_first_matching_binding_picks_the_agent(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path, AGENTS, channel="telegram") as p:
        adapter = p.adapter
        cases = [
            (adapter.message("hi", chat_id="-100", sender_id="a", chat_type="group"), "ops"),
            (adapter.message("hi", chat_id="-200", sender_id="a", chat_type="group"), "main"),
            (adapter.message("hi", chat_id="mum"), "family"),
            (adapter.message("hi", chat_id="dad"), "main"),
        ]
        for msg, agent in cases:
            assert p.router.session_key_for(msg).split(":")[1] == agent, msg
        work = adapter.message("hi", chat_id="dad").model_copy(update={"account_id": "work"})
        assert p.router.session_key_for(work).split(":")[1] == "ops"
        # a message in the bound group is answered in the ops agent's session
        await adapter.inject(
            adapter.message(
                "hello", chat_id="-100", sender_id="a", chat_type="group", mentioned=True
            )
        )
        sessions = [e.key for e in await p.store.list_sessions(_query())]
        assert any(k.startswith("agent:ops:telegram:group:-100") for k in sessions), sessions


def _query() -> Any:
    from core.store import SessionQuery

    return SessionQuery()


def test_a_binding_to_an_unknown_agent_is_refused() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("bindings[0].agentId names an unknown agent: nope")
    ):
        validate_config(
            {
                "agents": {"list": [{"id": "main"}]},
                "bindings": [{"agentId": "nope", "match": {"channel": "telegram"}}],
            }
        )
