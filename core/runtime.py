"""The runtime: every long-lived part of a gateway, wired once.

Built from a validated config; started and stopped by the gateway process (core.edge.http.server)
or by tests. Channel SDKs are imported only for channels that are configured.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Literal, Self, Unpack

from core.config import CrosstalkConfig
from core.config.channel_registry import installed_channels
from core.engine.background import BackgroundTasks
from core.engine.observability.metrics import Metrics
from core.engine.outbound.channels import ChannelRegistry
from core.engine.outbound.gate import OutboundGate
from core.engine.outbound.live import LiveFeedback
from core.engine.outbound.reports import LedgerReports
from core.engine.runs import Lanes, RunManager, RunRequest
from core.features.access.admission import Admission
from core.features.commands.context import CommandServices
from core.features.commands.registry import CommandRegistry
from core.features.cron.service import CronService
from core.features.extension.discovery import load_plugins
from core.features.models.resolver import ModelResolver, warm_up_imports
from core.features.services import CoreServices
from core.features.subagents.registry import SubagentRegistry
from core.features.tools.availability import tool_names_for
from core.features.tools.env import ToolServices
from core.features.tools.registry import ToolRegistry
from core.model.delivery_context import DeliveryContext
from core.model.errors import LifecycleError
from core.model.keys import KeyModel
from core.model.records import SessionPatch
from core.model.send_limits import SendRateLimiter
from core.model.send_policy import SendPolicySpec
from core.model.tool_context import ToolContext
from core.store import RunRecord, SessionEntry, Store, now_ms

if TYPE_CHECKING:
    from core.features.inbound.router import Router
    from core.model.channel import ChannelAdapter

log = logging.getLogger(__name__)


LifecycleState = Literal["created", "starting", "running", "stopping", "stopped"]


class Runtime:
    """The composition root (docs/ARCHITECTURE.md): builds every part with its collaborators
    and hands each feature its narrow environment (D30); nothing else imports this module."""

    def __init__(self, config: CrosstalkConfig, *, store: Store | None = None) -> None:
        self.config = config
        s = config.session
        self.keys = KeyModel(
            main_key=s.main_key,
            scope=s.scope,
            default_agent_id=config.default_agent_id(),
            dm_scope=s.dm_scope,
            identity_links=s.identity_links,
            channels=installed_channels(),  # D94: what each channel declares of itself
        )
        self.state_dir = config.resolve_state_dir()
        self.store = store or Store(config.database_url(), self.state_dir)
        self.channels = ChannelRegistry()
        policy = SendPolicySpec.from_config(s.send_policy) if s.send_policy else None
        self.gate = OutboundGate(self.store, self.channels, policy)
        self.access = Admission(config, self.store, self.gate)
        self.live = LiveFeedback(self.gate, config)
        self.models = ModelResolver(config)
        self.tools = ToolRegistry()
        from core.features.mcp.client import McpClients

        self.mcp = McpClients(config)
        self.send_limiter = SendRateLimiter(config.tools.sessions.send_rate_per_minute)
        self.commands = CommandRegistry()
        self.background = BackgroundTasks("runtime")
        from core.features.agent.turn import PydanticAITurnExecutor

        lanes = Lanes({"subagent": config.agents.defaults.subagents.max_concurrent})
        self.runs = RunManager(self.store, PydanticAITurnExecutor(self), lanes)
        self.services = CoreServices(
            config=config,
            keys=self.keys,
            store=self.store,
            gate=self.gate,
            runs=self.runs,
            models=self.models,
            background=self.background,
        )
        self.subagents = SubagentRegistry(self.services)
        self.cron = CronService(self.services)
        base = self.services.fields()
        self.tool_env = ToolServices(
            **base, cron=self.cron, subagents=self.subagents, send_limiter=self.send_limiter
        )
        command_env = CommandServices(
            **base,
            cron=self.cron,
            subagents=self.subagents,
            pairing=self.access.pairing,
            commands=self.commands,
        )
        from core.features.inbound.router import Router

        self.router: Router = Router(
            self.services,
            access=self.access,
            channels=self.channels,
            commands=self.commands,
            command_env=command_env,
        )
        self.metrics = Metrics()
        self.gate.metrics = self.access.metrics = self.runs.metrics = self.metrics
        self.metrics.watch(self.runs.load, self.channels.statuses)
        from core.engine.channels.supervisor import SoleProcessLease
        from core.engine.cluster.node import ClusterNode

        self.cluster = ClusterNode(self)  # D27: owner of this process's runs, session FIFO
        self.process = self.cluster.identity
        self.leases = self.cluster.leases
        # D36: one receiver per connection; on SQLite the one process holds every lease
        self.subagents.live_ids = self.cron.live_ids = self.cluster.live_ids
        if not self.cluster.alone:
            self.subagents.sweep_lease = self.cluster.leases.acquire
        if not self.cluster.alone:  # D29: the send rate counts across processes
            from functools import partial

            from core.engine.cluster.rate import check_send_rate

            self.send_limiter.counter = partial(check_send_rate, self.store, self.send_limiter)
        self.channel_lease = (
            SoleProcessLease(self.process.id, self.leases.ttl_ms)
            if self.cluster.alone
            else self.leases
        )
        self._adapters: list[ChannelAdapter] = []
        self.state: LifecycleState = "created"
        self.plugins: list[str] = []
        self._probe: asyncio.Task[object] | None = None
        self._warmup: asyncio.Task[object] | None = None

    @property
    def started(self) -> bool:
        return self.state == "running"

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- lifecycle ------------------------------------------------------------------------

    async def start(
        self, *, adapters: list[ChannelAdapter] | None = None, probe_models: bool = True
    ) -> None:
        """created → starting → running; a runtime starts once (LifecycleError otherwise)."""
        if self.state != "created":
            raise LifecycleError(
                f"the runtime cannot start: it is {self.state} "
                "(a runtime starts once; build a new one)"
            )
        self.state = "starting"
        # Plugins first: one that is missing or fails to register stops the start cleanly.
        self.plugins = load_plugins(self.config.plugins, tools=self.tools, commands=self.commands)
        started_ms = now_ms()  # deliveries and runs older than this belong to a dead process
        await self.store.open()
        aborted = await self.cluster.begin()
        if aborted:
            log.warning("marked %d interrupted run(s) as aborted", len(aborted))
        self.runs.add_listener(self.live.on_run_finished)  # typing stops before the reply
        self.runs.add_listener(self.router.on_run_finished)
        self.runs.add_listener(self.live.on_run_settled)
        self.runs.add_delta_sink(self.live.sink_for)
        for adapter in adapters or []:
            await self.add_adapter(adapter)
        await self.subagents.start()  # after the adapters: resumed announces need their chats
        await self.cron.start()  # after the adapters: missed jobs fire at once and deliver
        if aborted:  # after the adapters too: the chats hear that their turn was lost
            from core.engine.outbound.restart_notice import notify_aborted_chats

            self.spawn(notify_aborted_chats(self.gate, aborted))
        from core.engine import watchdog  # D16: settle in-doubt deliveries, prune, watch channels

        self.spawn(watchdog.run(self, started_ms))
        self.cluster.start()
        if probe_models:  # find a local model server if none is configured
            self._probe = self.spawn(self.models.probe_loopback())
        self.state = "running"

    @property
    def warmup(self) -> asyncio.Task[object] | None:
        """The model-stack import, started by the first turn (or chat opening) that asks (D54):
        it costs ~40 MiB and ~0.5 s, so an idle gateway never pays it. Turns wait for it rather
        than race it. None before the runtime runs."""
        if self._warmup is None and self.state == "running":
            self._warmup = self.spawn(self._warm_up())
        return self._warmup

    @property
    def warm_up_started(self) -> bool:
        return self._warmup is not None

    def warm_up_soon(self) -> None:
        """Someone is about to talk (a chat page or socket opened, D54): start the import now."""
        _ = self.warmup

    async def _warm_up(self) -> None:
        if self._probe is not None:
            await asyncio.wait({self._probe})
        if self.models.default_ref(self.config.default_agent_id()) is not None:
            await asyncio.to_thread(warm_up_imports, self.config)  # D50: then the heap settles

    async def add_adapter(self, adapter: ChannelAdapter) -> None:
        self.channels.add(adapter)
        self._adapters.append(adapter)
        adapter.connection_lease = self.channel_lease
        adapter.delivery_reports = LedgerReports(self.store)
        await adapter.start(self.router.handle_inbound)

    async def stop(self) -> None:
        """→ stopping → stopped; also after a failed start; a second stop does nothing."""
        if self.state in ("stopping", "stopped"):
            return
        self.state = "stopping"
        await self.cron.stop()
        for adapter in reversed(self._adapters):
            try:
                await adapter.stop()
            except Exception:
                log.exception("adapter %s failed to stop", adapter.channel)
        await self.subagents.stop()
        await self.runs.close()
        await self.cluster.stop()
        await self.mcp.close()
        await self.background.cancel_all()
        await self.store.close()
        self.state = "stopped"

    def spawn(self, coro: Awaitable[object]) -> asyncio.Task[object]:
        """Run a background job whose failure is logged, never lost."""
        return self.services.spawn(coro)

    # ---- identity and policy (the sessions façade, for the HTTP edge) ------------------------

    def is_sandboxed(self, session_key: str) -> bool:
        return self.services.is_sandboxed(session_key)

    def tool_names_for(self, session_key: str, agent_id: str) -> list[str]:
        return tool_names_for(self.config, self.tools, session_key, agent_id)

    def context_for(
        self, entry: SessionEntry, *, via: str = "agent", origin: DeliveryContext | None = None
    ) -> ToolContext:
        """The tool context of a run in `entry`: identity comes from here, not the model."""
        return self.services.context_for(entry, via=via, origin=origin)

    async def ensure_session(self, key: str, **fields: Unpack[SessionPatch]) -> SessionEntry:
        return await self.services.ensure_session(key, **fields)

    async def start_run(self, request: RunRequest, *, check_policy: bool = True) -> RunRecord:
        """Admit a run; a session whose send policy denies it refuses (decision D5)."""
        return await self.services.start_run(request, check_policy=check_policy)

    async def stop_subagents_of(self, requester_key: str) -> int:
        """`/stop`: abort the running sub-agents this session spawned; returns how many."""
        return await self.subagents.stop_of(requester_key)
