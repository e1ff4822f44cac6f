"""Inbound routing: message → session key → command, stored-only, or agent run.

Adapters hand every normalised message to :meth:`Router.handle_inbound`. The router is the only
place that derives session keys from platform messages (through core.model.keys) and that decides
whether a message starts a run; replies of finished runs go back out through the gate.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from core.engine.outbound.gate import Outbound
from core.engine.runs import RunOutcome, RunRequest
from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandInvocation
from core.features.inbound.dedup import DuplicateCounter, claims_of
from core.model.inbound import InboundMessage
from core.store import RunRecord, SessionEntry, TranscriptMessage, now_ms
from core.store.inbound import Claim, DuplicateInbound

if TYPE_CHECKING:
    from core.engine.outbound.channels import ChannelRegistry
    from core.features.access.admission import Admission
    from core.features.commands.registry import CommandEnv, CommandRegistry
    from core.features.services import Services

log = logging.getLogger(__name__)


class Router:
    """Takes its collaborators explicitly (D30): the sessions façade, admission, the channels
    (for mention handling), the commands and the environment their handlers get."""

    def __init__(
        self,
        services: Services,
        *,
        access: Admission,
        channels: ChannelRegistry,
        commands: CommandRegistry,
        command_env: CommandEnv,
    ) -> None:
        self.services = services
        self.access = access
        self.channels = channels
        self.commands = commands
        self.command_env = command_env
        self.duplicates = DuplicateCounter()

    def session_key_for(self, msg: InboundMessage) -> str:
        return self.services.keys.inbound_key(
            self.services.config.default_agent_id(),
            msg.channel,
            msg.chat_type,
            msg.chat_id,
            msg.account_id,
            msg.thread_id,
            topic=msg.topic,
        )

    def is_owner(self, msg: InboundMessage) -> bool:
        channel_cfg = getattr(self.services.config.channels, msg.channel, None)
        owners = list(getattr(channel_cfg, "owners", None) or [])
        return "*" in owners or msg.sender_id in owners

    async def _touch_route(self, key: str, msg: InboundMessage) -> SessionEntry:
        group = msg.chat_type != "direct"
        display = (
            (msg.chat_title or f"{msg.channel}:{msg.chat_id}")
            if group
            else (msg.sender_name or msg.sender_id)
        )
        entry = await self.services.ensure_session(
            key,
            channel=msg.channel if group else None,
            chat_type=msg.chat_type,
            display_name=display,
        )
        to = msg.reply_to
        return await self.services.store.update_session(
            key,
            last_channel=to.channel,
            last_to=to.to,
            last_account_id=to.account_id,
            last_thread_id=str(to.thread_id) if to.thread_id is not None else None,
            display_name=display if display != entry.display_name else entry.display_name,
        )

    def _drop(self, msg: InboundMessage) -> None:
        self.duplicates.dropped(msg.channel, msg.account_id, ",".join(msg.identities))

    async def handle_inbound(self, msg: InboundMessage) -> None:
        """Route one message; a redelivery (a known identity, D16) is dropped before anything."""
        claims = claims_of(msg)
        if claims and await self.services.store.is_known(claims):
            self._drop(msg)
            return
        if not await self.access.admit(msg):  # D11: before any session is touched
            return
        try:
            await self._handle(msg, claims)
        except DuplicateInbound:
            self._drop(msg)

    async def _handle(self, msg: InboundMessage, claims: tuple[Claim, ...]) -> None:
        key = self.session_key_for(msg)
        entry = await self._touch_route(key, msg)
        adapter = self.channels.get(msg.channel, msg.account_id)
        parsed = parse_command(
            msg.text,
            bot_username=adapter.bot_username if adapter else None,
            is_group=msg.chat_type != "direct",
            mention_patterns=adapter.mention_patterns if adapter else (),
        )
        spec = self.commands.lookup(parsed) if parsed else None
        if spec is not None and parsed is not None:
            await self.services.store.claim_only(claims, session_key=key)
            inv = CommandInvocation(self.command_env, parsed, msg, entry, self.is_owner(msg))
            await self._reply_command(inv, await self.commands.dispatch(spec, inv))
            return
        meta = {
            "senderId": msg.sender_id,
            "senderName": msg.sender_name,
            "channel": msg.channel,
            "messageId": msg.message_id,
        }
        user = TranscriptMessage.text("user", msg.text, msg.timestamp_ms or now_ms(), meta=meta)
        if msg.attachments:  # stored with the message (D3), so nothing is dropped
            user.content = [p for p in user.content if p.get("text")] + [
                a.part() for a in msg.attachments
            ]
        if (
            msg.chat_type != "direct"
            and not (msg.mentioned or msg.reply_to_bot)
            and self._require_mention(msg)
        ):
            user.meta = {**meta, "noRun": "not addressed to the bot"}
            await self.services.store.append_claimed(entry, user, claims)
            return
        decision = self.services.gate.decide(entry)
        if decision.action == "deny":
            user.meta = {**meta, "noRun": f"send policy: {decision.reason}"}
            await self.services.store.append_claimed(entry, user, claims)
            log.info("Send blocked by policy for session %s (%s)", key, decision.reason)
            return
        ctx = replace(
            self.services.context_for(entry, origin=msg.reply_to), owner=self.is_owner(msg)
        )
        # the message, its run and its identities are stored in one transaction
        await self.services.runs.submit(
            RunRequest(
                session_key=key,
                message=msg.text,
                context=ctx,
                deliver=True,
                input_message=user,
                claims=claims,
                lane="main",
                meta={
                    "origin": msg.reply_to.model_dump(),  # a reply lost to a crash finds its chat
                    **(
                        {"attachments": [a.part() for a in msg.attachments]}
                        if msg.attachments
                        else {}
                    ),
                },
                timeout_seconds=float(self.services.config.agents.defaults.timeout_seconds),
            )
        )

    def _require_mention(self, msg: InboundMessage) -> bool:
        per_account = self.access.require_mention(msg)
        if per_account is not None:
            return per_account
        channel_cfg = getattr(self.services.config.channels, msg.channel, None)
        groups = getattr(channel_cfg, "groups", None)
        return bool(getattr(groups, "require_mention", True))

    async def _reply_command(self, inv: CommandInvocation, reply: str | None) -> None:
        if reply:
            await self.services.gate.deliver(
                Outbound(
                    reply,
                    "command_reply",
                    inv.entry.key,
                    target=inv.message.reply_to,
                    owner_command=inv.is_owner,
                )
            )

    async def on_run_finished(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        """Deliver what a chat-facing run produced: the reply, or a notice of what went wrong."""
        if not request.deliver:
            return
        target = request.context.origin
        if outcome.status == "ok":
            if outcome.reply:
                await self.services.gate.deliver(
                    Outbound(outcome.reply, "reply", run.session_key, target=target, run_id=run.id)
                )
            return
        if outcome.status == "aborted" and outcome.error == "aborted":
            return
        text = {
            "timeout": "⚠️ The agent took too long and was stopped.",
            "aborted": f"⚙️ Agent run aborted: {outcome.error}",
        }.get(outcome.status, f"⚠️ The agent failed: {outcome.error or 'unknown error'}")
        if outcome.status == "error" and outcome.error and outcome.error.startswith("⚠️ "):
            text = outcome.error  # already a notice for the chat (e.g. a provider failure)
        await self.services.gate.deliver(
            Outbound(text, "notice", run.session_key, target=target, run_id=run.id)
        )
