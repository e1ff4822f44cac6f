"""Our tools as a pydantic-ai toolset that lists them once (D148).

Imported with the model stack (lazily, D54). pydantic-ai lists every toolset at every step of
every run, and its `FunctionToolset` copies the whole run context once per tool to ask each
tool's `prepare` function (~30 attribute reads per copy, a tool list of ten: ~5% of a plain
turn's CPU). Ours have no `prepare`, so the listing is the same every time but for the agent's
retry budget: it is kept, per budget, for as long as the agent (built once per tool list, D40).
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import FunctionToolset, RunContext, Tool
from pydantic_ai.toolsets import ToolsetTool


class ListedOnce(FunctionToolset[Any]):
    """A `FunctionToolset` of tools without `prepare`, listed once per retry budget."""

    def __init__(self, tools: list[Tool[Any]]) -> None:
        if any(t.prepare is not None for t in tools):
            raise ValueError("a tool with a prepare function lists differently per run")
        super().__init__(tools)
        self._listed: dict[int, dict[str, ToolsetTool[Any]]] = {}

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        listed = self._listed.get(ctx.max_retries)
        if listed is None:
            listed = self._listed[ctx.max_retries] = await super().get_tools(ctx)
        return dict(listed)  # the caller's own dict; the tools themselves are never changed


__all__ = ["ListedOnce"]
