"""The runtime: every long-lived part of a gateway, wired once (D30, D97).

This module is the only wiring: each part gets its collaborators in its constructor, and each
consumer one narrow environment object (the turn executor a :class:`TurnServices`, tools a
:class:`ToolServices`, commands a :class:`CommandServices`, the cluster node the core services,
the watchdog a :class:`DeliveryDuties`, the web chat a :class:`GatewayPages`); none of them gets
the runtime. Built from a validated config; started and stopped by the gateway process
(core.edge.http.server) or by tests. Channel SDKs are imported only for channels configured.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Literal, Self

from core.config import CrosstalkConfig
from core.config.channel_registry import installed_channels
from core.engine.background import BackgroundTasks
from core.engine.cluster.node import ClusterNode, Membership
from core.engine.observability.metrics import Metrics
from core.engine.outbound.channels import ChannelRegistry
from core.engine.outbound.gate import OutboundGate
from core.engine.outbound.live import LiveFeedback
from core.engine.outbound.reactions import StatusReactions
from core.engine.outbound.recovery import DeliveryDuties
from core.engine.outbound.reports import LedgerReports
from core.engine.outbound.run_end import REVOKED
from core.engine.runs import Lanes, RunManager, TurnExecutor
from core.features.access.admission import Admission
from core.features.access.identities import Identities
from core.features.access.limits import Limits
from core.features.access.pairing import PairingService
from core.features.agent.env import TurnServices
from core.features.approvals import ApprovalService
from core.features.commands.context import CommandServices
from core.features.commands.registry import CommandRegistry
from core.features.cron.service import CronService
from core.features.cron.turns import AdoptedHookTurns
from core.features.extension.discovery import load_plugins
from core.features.inbound.pipeline import InboundSteps
from core.features.inbound.router import Router
from core.features.mcp.client import McpClients
from core.features.models.resolver import ModelResolver
from core.features.models.warmup import ModelWarmup
from core.features.pages import GatewayPages
from core.features.services import CoreServices
from core.features.subagents.registry import SubagentRegistry
from core.features.tools.env import ToolServices
from core.features.tools.registry import ToolRegistry
from core.model.by_sender import compile_rules
from core.model.channel import CommandMenu
from core.model.errors import LifecycleError
from core.model.key_model import KeyModel
from core.model.send_limits import SendRateLimiter
from core.model.send_policy import SendPolicySpec
from core.store import Store, now_ms

if TYPE_CHECKING:
    from core.model.channel import ChannelAdapter
    from core.store import SessionEntry

log = logging.getLogger(__name__)


LifecycleState = Literal["created", "starting", "running", "stopping", "stopped"]


def key_model(config: CrosstalkConfig) -> KeyModel:
    """The one key model of a config: `session.*` and the installed channels' traits (D94)."""
    s = config.session
    return KeyModel(
        main_key=s.main_key,
        scope=s.scope,
        default_agent_id=config.default_agent_id(),
        dm_scope=s.dm_scope,
        identity_links=s.identity_links,
        channels=installed_channels(),
    )


def _queue_mode(config: CrosstalkConfig, entry: SessionEntry) -> tuple[str, int]:
    """A session's busy input (D75): its channel's `queue`, else `messages.queue`."""
    queue = config.queue_for(entry.channel or entry.last_channel)
    return queue.mode, queue.debounce_ms


class Runtime:
    """The composition root (docs/ARCHITECTURE.md): builds every part with its collaborators
    and hands each consumer its narrow environment (D30); nothing else imports this module."""

    def __init__(
        self,
        config: CrosstalkConfig,
        *,
        store: Store | None = None,
        executor: Callable[[TurnServices], TurnExecutor] | None = None,
    ) -> None:
        """`executor` builds the turn executor from its environment; default: the agent turn
        on pydantic-ai. Tests of everything but the model pass an in-process one."""
        self.config = config
        self.keys = key_model(config)
        self.state_dir = config.resolve_state_dir()
        self.store = store or Store(config.database_url(), self.state_dir)
        self.metrics = Metrics()
        # D26, D27: this process in the cluster, before the parts that depend on it
        self.membership = Membership.join(self.store, self.state_dir, config.cluster.lease_seconds)
        self.channels = ChannelRegistry()
        s = config.session
        policy = SendPolicySpec.from_config(s.send_policy) if s.send_policy else None
        self.gate = OutboundGate(
            self.store,
            self.channels,
            policy,
            max_reply_chars=config.gateway.max_reply_chars,
            metrics=self.metrics,
        )
        self.pairing = PairingService(self.store, self.gate, spawn=self.spawn)
        self.access = Admission(config, self.pairing, metrics=self.metrics)
        self.limits = Limits(config, self.store, metrics=self.metrics)  # D64
        self.identities = Identities(config, self.store)  # D65
        self.live = LiveFeedback(self.gate, config)
        self.reactions = StatusReactions(self.gate, config)
        self.models = ModelResolver(config)
        self.tools = ToolRegistry()
        self.tools.sender_rules = compile_rules(config.tools.by_sender)  # D63
        self.commands = CommandRegistry()
        self.mcp = McpClients(config)
        self.background = BackgroundTasks("runtime")
        self.warm = ModelWarmup(config, self.models, self.background.spawn)
        per_minute = config.tools.sessions.send_rate_per_minute
        self.send_limiter = SendRateLimiter(  # D29: on PostgreSQL the count is shared
            per_minute,
            counter=None
            if self.membership.alone
            else partial(self.store.count_send, per_minute=per_minute),
        )
        turn_env = TurnServices(
            config=config,
            models=self.models,
            metrics=self.metrics,
            store=self.store,
            mcp=self.mcp,
            channels=self.channels,
            tools=self.tools,
            warm=self.warm,
            tool_env_of=lambda: tool_env,  # built below: its run manager runs this executor
            limits=self.limits,
        )
        if executor is None:
            from core.features.agent.turn import PydanticAITurnExecutor

            executor = PydanticAITurnExecutor
        self.runs = RunManager(
            self.store,
            executor(turn_env),
            Lanes({"subagent": config.agents.defaults.subagents.max_concurrent}),
            metrics=self.metrics,
            owner=self.membership.id,
            claims=self.membership.ordering,
            queue_for=partial(_queue_mode, config),
        )
        self.services = CoreServices(
            config=config,
            keys=self.keys,
            store=self.store,
            gate=self.gate,
            runs=self.runs,
            models=self.models,
            background=self.background,
        )
        self.subagents = SubagentRegistry(
            self.services,
            live_ids=self.membership.live_ids,
            sweep_lease=self.membership.sweep_lease,
        )
        self.cron = CronService(self.services, live_ids=self.membership.live_ids)
        self.pairing.on_revoked = self._stop_turns_of
        self.approvals = ApprovalService(self.services, owner=self.membership.id)
        base = self.services.fields()
        tool_env = ToolServices(
            **base, cron=self.cron, subagents=self.subagents, send_limiter=self.send_limiter
        )
        self.tool_env = tool_env
        self.inbound = InboundSteps()
        self.router = Router(
            self.services,
            access=self.access,
            channels=self.channels,
            commands=self.commands,
            command_env=CommandServices(
                **base,
                cron=self.cron,
                subagents=self.subagents,
                pairing=self.pairing,
                commands=self.commands,
                approvals=self.approvals,
                limits=self.limits,
                identities=self.identities,
            ),
            steps=self.inbound,
            answers=self.approvals,
            limits=self.limits,
            identities=self.identities,
        )
        stt_chain = config.voice.stt_chain()
        if stt_chain:  # D78: voice notes are heard on arrival, after admission
            from core.features.voice.step import Transcription
            from core.features.voice.stt import SpeechToText

            self.transcription = Transcription(
                SpeechToText.from_config(stt_chain), self.channels, config.voice.max_audio_bytes
            )
            self.inbound.insert(self.transcription.step(), after="admission")
        self.cluster = ClusterNode(
            self.membership, self.services, resume_announces=self.subagents.resume
        )
        self.metrics.watch(self.runs.load, self.channels.statuses, self.cluster.held_leases)
        self.pages = GatewayPages(
            config=config,
            keys=self.keys,
            store=self.store,
            models=self.models,
            commands=self.commands,
            state_dir=self.state_dir,
            bus=self.membership.bus,
            warm=self.warm,
        )
        self.duties = DeliveryDuties(config, self.store, self.gate, self.channels)
        self._adapters: list[ChannelAdapter] = []
        self.state: LifecycleState = "created"
        self.plugins: list[str] = []

    @property
    def started(self) -> bool:
        return self.state == "running"

    @property
    def warmup(self) -> asyncio.Task[object] | None:
        """The model-stack import (D54): started by the first turn or chat that asks."""
        return self.warm.task

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
        self.plugins = load_plugins(
            self.config.plugins, tools=self.tools, commands=self.commands, inbound=self.inbound
        )
        started_ms = now_ms()  # deliveries and runs older than this belong to a dead process
        await self.store.open()
        aborted = await self.cluster.begin()
        if aborted:
            log.warning("marked %d interrupted run(s) as aborted", len(aborted))
        self.runs.add_listener(self.live.on_run_finished)  # typing stops before the reply
        self.runs.add_listener(self.router.on_run_finished)
        self.runs.add_listener(self.live.on_run_settled)
        self.runs.add_listener(self.reactions.on_run_finished)
        self.runs.add_listener(AdoptedHookTurns(self.services).on_run_finished)
        self.runs.add_delta_sink(self.reactions.sink_for)  # 👀 when a turn starts (D74)
        self.runs.add_delta_sink(self.live.sink_for)
        self.runs.add_pause_listener(self.live.on_run_paused)  # typing stops first (D72)
        self.runs.add_pause_listener(self.approvals.on_paused)
        for adapter in adapters or []:
            await self.add_adapter(adapter)
        await self.subagents.start()  # after the adapters: resumed announces need their chats
        await self.cron.start()  # after the adapters: missed jobs fire at once and deliver
        if aborted:  # after the adapters too: the chats hear that their turn was lost
            from core.engine.outbound.restart_notice import notify_aborted_chats

            self.spawn(notify_aborted_chats(self.gate, aborted))
        await self.cluster.run_left()  # SQLite: accepted turns run after a restart (D81)
        from core.engine import watchdog  # D16: settle in-doubt deliveries, prune, watch channels

        self.spawn(watchdog.run(self.duties, started_ms))
        self.cluster.start()
        self.approvals.start()  # expires unanswered approvals (D72), on every process
        probe = self.spawn(self.models.probe_loopback()) if probe_models else None
        self.warm.open(probe)  # find a local model server first if none is configured
        self.state = "running"

    async def add_adapter(self, adapter: ChannelAdapter) -> None:
        """Register a channel and start it; the channel protocol's hand-over (D36, D166): its
        connection lease and where it reports a failure after sending."""
        self.channels.add(adapter)
        self._adapters.append(adapter)
        adapter.connection_lease = self.membership.channel_lease
        adapter.delivery_reports = LedgerReports(self.store)
        adapter.admission = self.access.allows
        adapter.command_menu = self._menu(adapter.channel)  # D74
        await adapter.start(self.router.handle_inbound)

    async def _stop_turns_of(self, sender: str) -> int:
        """A revoked sender is a stranger again (D81): the turns they left queued or running in
        their own DM stop silently, so none reaches the model or answers them. Turns in a group chat
        stay: the group's other people share them, and the group's admission still holds."""
        stopped = 0
        for key in await self.store.unfinished_sessions_of(sender):
            entry = await self.store.get_session(key)
            if entry is not None and entry.chat_type == "direct":
                stopped += await self.runs.abort_session(key, REVOKED)
        return stopped

    def _menu(self, channel: str) -> CommandMenu:
        """D74: what a channel's native menu shows (its owners see every command)."""
        section = getattr(self.config.channels, channel, None)
        owners = tuple(o for o in getattr(section, "owners", None) or [] if o != "*")

        def pairs(owner: bool) -> tuple[tuple[str, str], ...]:
            return tuple((c.name, c.description) for c in self.commands.visible(is_owner=owner))

        return CommandMenu(everyone=pairs(False), every=pairs(True), owner_ids=owners)

    async def stop(self) -> None:
        """→ stopping → stopped; also after a failed start; a second stop does nothing."""
        if self.state in ("stopping", "stopped"):
            return
        self.state = "stopping"
        await self.cron.stop()
        await self.approvals.stop()
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
        """Run a background job of the runtime's lifetime whose failure is logged."""
        return self.background.spawn(coro)
