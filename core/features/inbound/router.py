"""Inbound routing: the built-in steps of the inbound pipeline (D98), and the run listener.

Adapters hand every normalised message to :meth:`Router.handle_inbound`, which runs the
pipeline (:mod:`core.features.inbound.pipeline`): ``dedup`` drops a redelivery (D16),
``admission`` asks D11 before any session is touched, ``route`` derives the session key (through
the key module) and points the session's reply route at the chat, ``command`` answers a chat
command, ``mention`` stores a group message that did not address the bot without a run,
``policy`` stores a message of a session whose send policy denies it without a run, and ``run``
stores the message with its queued run in one transaction. Plugins add steps between these.
Finished chat runs go back out through the gate's one path (:func:`deliver_run_end`, D99).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from core.engine.outbound.delivery import Outbound
from core.engine.outbound.run_end import deliver_run_end
from core.engine.runs import RunOutcome, RunRequest
from core.features.access.limits import person_key
from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandInvocation
from core.features.inbound.dedup import DuplicateCounter, claims_of
from core.features.inbound.pipeline import Inbound, InboundStep, InboundSteps, Proceed
from core.model.inbound import InboundMessage
from core.store import RunRecord, SessionEntry, TranscriptMessage, now_ms
from core.store.inbound import DuplicateInbound

if TYPE_CHECKING:
    from core.engine.outbound.channels import ChannelRegistry
    from core.features.access.admission import Admission
    from core.features.access.identities import Identities
    from core.features.access.limits import Limits
    from core.features.approvals import ApprovalService
    from core.features.commands.registry import CommandEnv, CommandRegistry
    from core.features.services import Services

log = logging.getLogger(__name__)

BUILT_IN_STEPS = (
    "dedup",
    "admission",
    "route",
    "answer",
    "command",
    "mention",
    "policy",
    "limits",
    "run",
)


class Router:
    """Takes its collaborators explicitly (D30): the sessions façade, admission, the channels
    (for mention handling), the commands and the environment their handlers get, and the
    pipeline it adds its steps to."""

    def __init__(
        self,
        services: Services,
        *,
        access: Admission,
        channels: ChannelRegistry,
        commands: CommandRegistry,
        command_env: CommandEnv,
        steps: InboundSteps | None = None,
        answers: ApprovalService | None = None,
        limits: Limits | None = None,
        identities: Identities | None = None,
    ) -> None:
        self.identities = identities
        """D65: who is one person across channels (None: nobody is linked)."""
        self.services = services
        self.limits = limits
        """D64: what a sender, an agent and a session may use (None: unlimited)."""
        self.answers = answers
        """Pending `ask_user` questions (D73): the requester's next message answers one."""
        self.access = access
        self.channels = channels
        self.commands = commands
        self.command_env = command_env
        self.duplicates = DuplicateCounter()
        self.steps = steps if steps is not None else InboundSteps()
        for name, run in (
            ("dedup", self._dedup),
            ("admission", self._admission),
            ("route", self._route),
            ("answer", self._answer),
            ("command", self._command),
            ("mention", self._mention),
            ("policy", self._policy),
            ("limits", self._limits),
            ("run", self._run),
        ):
            self.steps.append(InboundStep(name, run))

    async def handle_inbound(self, msg: InboundMessage) -> None:
        """Run one message through the pipeline; a redelivery found while storing (another
        process claimed its identity first, D16) is dropped like one found at the start."""
        inbound = Inbound(msg, claims_of(msg))
        try:
            await self.steps.handle(inbound)
        except DuplicateInbound:
            self._drop(msg)

    # ---- the built-in steps ----------------------------------------------------------------

    async def _dedup(self, inbound: Inbound, proceed: Proceed) -> None:
        """A known identity (D16) is dropped before anything."""
        if inbound.claims and await self.services.store.is_known(inbound.claims):
            self._drop(inbound.message)
            return
        await proceed()

    async def _admission(self, inbound: Inbound, proceed: Proceed) -> None:
        """D11, before any session is touched: a refused sender leaves no session row."""
        role = await self.access.admit(inbound.message)
        if role is not None:
            inbound.role = role
            await proceed()

    async def _route(self, inbound: Inbound, proceed: Proceed) -> None:
        msg = inbound.message
        if self.identities is not None:  # D65: one person across channels
            inbound.person_id = await self.identities.person_of(msg.channel, msg.sender_id)
        inbound.session_key = self.session_key_for(
            msg, owner=inbound.is_owner, person=inbound.person_id
        )
        inbound.entry = await self._touch_route(inbound.session_key, msg)
        await proceed()

    async def _answer(self, inbound: Inbound, proceed: Proceed) -> None:
        """A press or message that answers a pending `ask_user` question (D73) is stored and
        resumes the paused run; it starts no turn of its own."""
        msg, entry = inbound.message, _entry(inbound)
        if self.answers is None or not msg.text.strip():
            await proceed()
            return
        if not await self.answers.answer(entry.key, msg.sender_key, msg.text, button=msg.button):
            await proceed()
            return
        if msg.button:
            await self.services.store.claim_only(inbound.claims, session_key=entry.key)
        else:
            await self._store_only(inbound, "the answer to a question (ask_user)")

    async def _command(self, inbound: Inbound, proceed: Proceed) -> None:
        msg, entry = inbound.message, _entry(inbound)
        adapter = self.channels.get(msg.channel, msg.account_id)
        parsed = parse_command(
            msg.text,
            bot_username=adapter.bot_username if adapter else None,
            is_group=msg.chat_type != "direct",
            mention_patterns=adapter.mention_patterns if adapter else (),
        )
        spec = self.commands.lookup(parsed) if parsed else None
        if msg.button and (spec is None or not inbound.is_owner):
            # a press is a decision only an owner makes (D72, D11); counted once (D16)
            await self.services.store.claim_only(inbound.claims, session_key=entry.key)
            log.warning(
                "button press ignored: %s:%s is not an owner (%r)",
                msg.channel,
                msg.sender_id,
                msg.text[:40],
            )
            return
        if spec is None or parsed is None:
            await proceed()
            return
        await self.services.store.claim_only(inbound.claims, session_key=entry.key)
        inv = CommandInvocation(
            self.command_env,
            parsed,
            msg,
            entry,
            inbound.is_owner,
            role=inbound.role,
            person_id=inbound.person_id,
        )
        reply = await self.commands.dispatch(spec, inv)
        if not msg.button:  # a press answers by editing the question it was under
            await self._reply_command(inv, reply)

    async def _mention(self, inbound: Inbound, proceed: Proceed) -> None:
        msg = inbound.message
        if (
            msg.chat_type != "direct"
            and not (msg.mentioned or msg.reply_to_bot)
            and self._require_mention(msg)
        ):
            await self._store_only(inbound, "not addressed to the bot")
            return
        await proceed()

    async def _policy(self, inbound: Inbound, proceed: Proceed) -> None:
        decision = self.services.gate.decide(_entry(inbound))
        if decision.action == "deny":
            await self._store_only(inbound, f"send policy: {decision.reason}")
            log.info(
                "Send blocked by policy for session %s (%s)", inbound.session_key, decision.reason
            )
            return
        await proceed()

    async def _limits(self, inbound: Inbound, proceed: Proceed) -> None:
        """D64: a message that would start a turn counts against its sender's (person's),
        agent's and session's limits; over one, it is stored without a run and the sender
        told once per window."""
        msg, entry = inbound.message, _entry(inbound)
        who = person_key(msg.sender_key, inbound.person_id)
        subjects = (
            self.limits.subjects(inbound.role, who, entry.agent_id, entry.key)
            if self.limits
            else []
        )
        refusal = await self.limits.on_arrival(subjects, who) if self.limits and subjects else None
        if refusal is None:
            await proceed()
            return
        await self._store_only(inbound, f"limit: {refusal.limit}")
        if refusal.announce:
            await self.services.gate.deliver(
                Outbound(refusal.text(), "notice", entry.key, target=msg.reply_to)
            )

    async def _run(self, inbound: Inbound, proceed: Proceed) -> None:
        msg, entry = inbound.message, _entry(inbound)
        ctx = replace(
            self.services.context_for(entry, origin=msg.reply_to, role=inbound.role),
            sender=msg.sender_key,
            person_id=inbound.person_id,
            group_id=msg.group_key,
        )
        # the message, its run and its identities are stored in one transaction
        await self.services.runs.submit(
            RunRequest(
                session_key=entry.key,
                message=msg.text,
                context=ctx,
                deliver=True,
                input_message=_user_message(msg),
                claims=inbound.claims,
                lane="main",
                meta={
                    "origin": msg.reply_to.model_dump(),  # a reply lost to a crash finds its chat
                    **({"messageId": msg.message_id} if msg.message_id else {}),  # D74
                    **(
                        {"attachments": [a.part() for a in msg.attachments]}
                        if msg.attachments
                        else {}
                    ),
                },
                timeout_seconds=float(self.services.config.agents.defaults.timeout_seconds),
            ),
            entry,  # read (and routed) by this message's own steps: not read again (D146)
        )
        await proceed()

    # ---- helpers ---------------------------------------------------------------------------

    def session_key_for(
        self, msg: InboundMessage, *, owner: bool = True, person: str | None = None
    ) -> str:
        """The message's session; a non-owner's DM is never the main session (D62); the
        agent is the first matching binding's (D76)."""
        direct = msg.chat_type == "direct"
        agent = self.services.config.agent_for(
            msg.channel,
            msg.account_id,
            direct=direct,
            peer=msg.sender_id,
            group=None if direct else msg.chat_id,
        )
        return self.services.keys.inbound_key(
            agent,
            msg.channel,
            msg.chat_type,
            msg.chat_id,
            msg.account_id,
            msg.thread_id,
            topic=msg.topic,
            owner=owner,
            person=person,
        )

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

    async def _store_only(self, inbound: Inbound, why: str) -> None:
        """Keep a message that starts no run (nothing is lost), with the reason on it."""
        user = _user_message(inbound.message)
        user.meta = {**(user.meta or {}), "noRun": why}
        await self.services.store.append_claimed(_entry(inbound), user, inbound.claims)

    def _drop(self, msg: InboundMessage) -> None:
        self.duplicates.dropped(msg.channel, msg.account_id, ",".join(msg.identities))

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
        """A chat-facing run's reply, or the notice of what went wrong, through the one path
        from a finished run to the gate (D99)."""
        if request.deliver:
            await deliver_run_end(
                self.services.gate,
                session_key=run.session_key,
                run_id=run.id,
                target=request.context.origin,
                status=outcome.status,
                reply=outcome.reply,
                error=outcome.error,
            )


def _entry(inbound: Inbound) -> SessionEntry:
    assert inbound.entry is not None, "the route step runs first"
    return inbound.entry


def _user_message(msg: InboundMessage) -> TranscriptMessage:
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
    return user
