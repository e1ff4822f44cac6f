"""Real parts wired by the runtime, with an in-process turn executor instead of a model (D97).

Unit tests of the router, the tools and the commands use the narrow environments those take,
as the runtime wires them (core/runtime.py is the only wiring): a real SQLite store, the real
gate, run manager, sub-agent registry and cron service, and a trivial turn executor that
answers ``echo: <message>``. The channel adapter is the recording fake (the network edge).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.api.testing import EchoTurns, RecordingAdapter, test_gateway
from core.config import CrosstalkConfig
from core.engine.runs import RunManager
from core.features.commands.registry import CommandEnv, CommandRegistry
from core.features.inbound.router import Router
from core.features.tools.env import ToolServices
from core.features.tools.registry import ToolRegistry
from core.runtime import Runtime
from core.store import Store

EchoExecutor = EchoTurns


@dataclass
class Parts:
    config: CrosstalkConfig
    store: Store
    adapter: RecordingAdapter
    executor: EchoTurns
    runs: RunManager
    tools: ToolRegistry
    commands: CommandRegistry
    tool_env: ToolServices
    command_env: CommandEnv
    router: Router
    runtime: Runtime


@asynccontextmanager
async def narrow_parts(
    tmp_path: Path, extra: dict[str, Any] | None = None, *, channel: str = "webchat"
) -> AsyncIterator[Parts]:
    """Everything below the edges, wired by the runtime, started and stopped."""
    async with test_gateway(tmp_path / "state", extra, channel=channel) as gw:
        rt = gw.runtime
        yield Parts(
            rt.config,
            rt.store,
            gw.adapter,
            gw.turns,
            rt.runs,
            rt.tools,
            rt.commands,
            rt.tool_env,
            rt.router.command_env,
            rt.router,
            rt,
        )
