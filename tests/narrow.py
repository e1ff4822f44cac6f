"""Real parts wired by hand, without a runtime or a model server (D30).

Unit tests of the router, the tools and the commands build only the narrow environments those
take: a real SQLite store, the real gate, run manager, sub-agent registry and cron service, and
a trivial in-process turn executor that answers ``echo: <message>``. The channel adapter is the
recording fake (the network edge).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.api.testing import RecordingAdapter
from core.config import CrosstalkConfig, validate_config
from core.config.channel_registry import installed_channels
from core.engine.background import BackgroundTasks
from core.engine.outbound.channels import ChannelRegistry
from core.engine.outbound.gate import OutboundGate
from core.engine.runs import Lanes, RunManager, RunRequest
from core.engine.runs.manager import DeltaSink, TurnResult
from core.features.access.admission import Admission
from core.features.access.pairing import PairingService
from core.features.commands.context import CommandServices
from core.features.commands.registry import CommandRegistry
from core.features.cron.service import CronService
from core.features.extension.context import PluginContext
from core.features.inbound.router import Router
from core.features.models.resolver import ModelResolver
from core.features.services import CoreServices
from core.features.subagents.registry import SubagentRegistry
from core.features.tools.env import ToolServices
from core.features.tools.registry import ToolRegistry
from core.model.send_limits import SendRateLimiter
from core.store import RunRecord, SessionEntry, Store, TranscriptMessage, now_ms
from plugins import chat_commands, cron_tools, session_tools
from tests.conftest import deep_merge


class EchoExecutor:
    """Answers every turn with ``echo: <message>``, stored like a model's reply."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.turns: list[str] = []

    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: DeltaSink | None
    ) -> TurnResult:
        self.turns.append(request.message)
        reply = f"echo: {request.message}"
        await self.store.append_messages(
            entry, [TranscriptMessage.text("assistant", reply, now_ms(), run_id=run.id)]
        )
        return TurnResult(reply)


@dataclass
class Parts:
    config: CrosstalkConfig
    store: Store
    adapter: RecordingAdapter
    executor: EchoExecutor
    runs: RunManager
    tools: ToolRegistry
    commands: CommandRegistry
    tool_env: ToolServices
    command_env: CommandServices
    router: Router


@asynccontextmanager
async def narrow_parts(
    tmp_path: Path, extra: dict[str, Any] | None = None, *, channel: str = "webchat"
) -> AsyncIterator[Parts]:
    """Everything below the runtime, wired as core.runtime wires it, opened and closed."""
    config = validate_config(
        deep_merge(
            {"gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "t"}}}, extra or {}
        )
    )
    store = Store(f"sqlite+aiosqlite:///{tmp_path}/unit.db", tmp_path)
    s = config.session
    from core.model.keys import KeyModel

    keys = KeyModel(
        main_key=s.main_key,
        scope=s.scope,
        default_agent_id=config.default_agent_id(),
        dm_scope=s.dm_scope,
        identity_links=s.identity_links,
        channels=installed_channels(),
    )
    channels = ChannelRegistry()
    gate = OutboundGate(store, channels, None)
    access = Admission(config, PairingService(store, gate))
    executor = EchoExecutor(store)
    runs = RunManager(store, executor, Lanes({"subagent": 2}))
    background = BackgroundTasks("unit")
    services = CoreServices(
        config=config,
        keys=keys,
        store=store,
        gate=gate,
        runs=runs,
        models=ModelResolver(config),
        background=background,
    )
    subagents = SubagentRegistry(services)
    cron = CronService(services)
    cron.run_loop = False
    tools, commands = ToolRegistry(), CommandRegistry()
    for plugin in (session_tools, cron_tools, chat_commands):
        plugin.register(PluginContext(plugin.__name__, tools=tools, commands=commands))
    base = services.fields()
    tool_env = ToolServices(
        **base,
        cron=cron,
        subagents=subagents,
        send_limiter=SendRateLimiter(config.tools.sessions.send_rate_per_minute),
    )
    command_env = CommandServices(
        **base, cron=cron, subagents=subagents, pairing=access.pairing, commands=commands
    )
    router = Router(
        services, access=access, channels=channels, commands=commands, command_env=command_env
    )
    adapter = RecordingAdapter(channel=channel)
    await store.open()
    runs.add_listener(router.on_run_finished)
    channels.add(adapter)
    await adapter.start(router.handle_inbound)
    await subagents.start()
    await cron.start()
    try:
        yield Parts(
            config, store, adapter, executor, runs, tools, commands, tool_env, command_env, router
        )
    finally:
        await cron.stop()
        await subagents.stop()
        await runs.close()
        await background.cancel_all()
        await store.close()
