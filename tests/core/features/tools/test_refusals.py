"""Tools refuse one way (ToolRefused) and the registry enforces a tool's Permission.

Only a ToolRegistry and a ToolContext are built: no runtime, no model server (the handlers
never touch the runtime argument, which is a bare object here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from core.features.tools.registry import ToolRegistry, ToolSpec
from core.model.errors import CrosstalkError, ToolError, ToolRefused
from core.model.permission import OWNER
from core.model.tool_context import ToolContext

if TYPE_CHECKING:
    from core.features.tools.env import ToolEnv

RT = cast("ToolEnv", object())  # handlers here ignore their environment


class NoArgs(BaseModel):
    pass


def registry_with(handler: Any, **spec: Any) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        ToolSpec(name="deploy", description="x", args_model=NoArgs, handler=handler, **spec)
    )
    return registry


async def test_owner_tool_is_refused_for_a_non_owner_without_running() -> None:
    calls: list[str] = []

    async def handler(rt: ToolEnv, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        calls.append(ctx.session_key)
        return {"status": "ok"}

    registry = registry_with(handler, permission=OWNER)
    guest = ToolContext(session_key="agent:main:telegram:dm:guest", agent_id="main")
    out = await registry.invoke(RT, "deploy", {}, guest)
    assert out == {
        "status": "forbidden",
        "error": "deploy is not allowed for this caller (needs owner)",
    }
    assert calls == []
    owner = ToolContext(session_key="agent:main:main", agent_id="main", role="owner")
    assert await registry.invoke(RT, "deploy", {}, owner) == {"status": "ok"}
    http = ToolContext(session_key="agent:main:main", agent_id="main", via="http")
    assert await registry.invoke(RT, "deploy", {}, http) == {"status": "ok"}
    assert calls == ["agent:main:main", "agent:main:main"]


async def test_a_raised_refusal_becomes_the_documented_payload() -> None:
    async def handler(rt: ToolEnv, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        try:
            raise ToolRefused("No session found: x", status="error", sessionKey="x")
        except ToolRefused as refusal:
            raise refusal.with_run_id("r1") from None

    registry = registry_with(handler)
    out = await registry.invoke(
        RT, "deploy", {}, ToolContext(session_key="agent:main:main", agent_id="main")
    )
    assert list(out.items()) == [
        ("runId", "r1"),
        ("status", "error"),
        ("error", "No session found: x"),
        ("sessionKey", "x"),
    ]


def test_refusal_sits_under_the_one_error_root() -> None:
    assert issubclass(ToolRefused, ToolError) and issubclass(ToolRefused, CrosstalkError)
    assert ToolRefused("nope").payload() == {"status": "forbidden", "error": "nope"}
