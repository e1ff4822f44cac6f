"""`agents_list`: ids the requester may spawn as, requester first (R2.5, cases 117–120)."""

from __future__ import annotations

from typing import Any

from core.runtime import Runtime
from tests.conftest import RuntimeFactory


async def agents(rt: Runtime, key: str = "agent:main:main") -> dict[str, Any]:
    ctx = rt.services.context_for(await rt.services.ensure_session(key))
    return await rt.tools.invoke(rt.tool_env, "agents_list", {}, ctx)


async def test_default_config_lists_only_the_requester(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    assert await agents(rt) == {
        "requester": "main",
        "allowAny": False,
        "agents": [{"id": "main", "configured": False}],
    }


async def test_allow_agents_with_names(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime(
        {
            "agents": {
                "list": [
                    {"id": "main", "name": " Main ", "subagents": {"allowAgents": ["Research"]}},
                    {"id": "research", "name": "Research"},
                    {"id": "coder"},
                ]
            }
        }
    )
    assert await agents(rt) == {
        "requester": "main",
        "allowAny": False,
        "agents": [
            {"id": "main", "name": "Main", "configured": True},
            {"id": "research", "name": "Research", "configured": True},
        ],
    }


async def test_wildcard_allows_every_configured_agent(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime(
        {
            "agents": {
                "list": [
                    {"id": "research"},
                    {"id": "main", "subagents": {"allowAgents": [" * "]}},
                    {"id": "coder"},
                ]
            }
        }
    )
    out = await agents(rt)
    assert out["allowAny"] is True
    assert [a["id"] for a in out["agents"]] == ["main", "coder", "research"]


async def test_unconfigured_allowed_agent(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime(
        {"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["research", "  "]}}]}}
    )
    out = await agents(rt)
    assert out["agents"] == [
        {"id": "main", "configured": True},
        {"id": "research", "configured": False},
    ]


async def test_requester_is_the_calling_agent(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime(
        {
            "agents": {
                "list": [{"id": "main"}, {"id": "ops", "subagents": {"allowAgents": ["main"]}}]
            }
        }
    )
    out = await agents(rt, "agent:ops:discord:group:dev")
    assert out["requester"] == "ops"
    assert [a["id"] for a in out["agents"]] == ["ops", "main"]
