"""A risky tool for approval tests: it counts its runs, so "exactly once" can be checked."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core.features.tools.registry import ToolSpec
from core.runtime import Runtime


class DangerArgs(BaseModel):
    target: str


def add_danger_tool(rt: Runtime, ran: list[str]) -> None:
    """Register `danger` on a runtime: each run appends its target to `ran`."""

    async def handler(_env: Any, _ctx: Any, args: DangerArgs) -> dict[str, Any]:
        ran.append(args.target)
        return {"status": "ok", "deleted": args.target}

    rt.tools.register(ToolSpec("danger", "Delete something", DangerArgs, handler))


APPROVALS = {"tools": {"approvals": {"require": ["danger"]}}}
