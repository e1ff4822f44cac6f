"""One path from a finished run to the gate (D99).

Whatever a finished turn sends to a chat leaves through :func:`deliver_run_end`: a chat turn's
reply or the notice of what went wrong (the router's run listener), a cron or webhook turn's
reply (``finish_turn``), a reply that a crash kept from its chat (recovery, D16) and the notice
to chats whose turn a crash cut short (D12). So the texts, the kinds and the rules (a deliberate
stop says nothing; a provider failure is already a notice) are written once. A reply carries the
media its run stored (tools' images and files, a voice note; D78), whichever path sends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.engine.outbound.delivery import Outbound

if TYPE_CHECKING:
    from core.engine.outbound.delivery import DeliveryKind, DeliveryResult
    from core.engine.outbound.gate import OutboundGate
    from core.model.delivery_context import DeliveryContext

ReplyKind = Literal["reply", "cron", "hook"]
TIMEOUT_NOTICE = "⚠️ The agent took too long and was stopped."
REVOKED = "revoked"
"""The error of a turn stopped because its sender's approval was revoked: a stranger again,
they are told nothing (D11)."""


def run_end_message(
    status: str, reply: str | None, error: str | None, *, reply_kind: ReplyKind = "reply"
) -> tuple[str, DeliveryKind] | None:
    """What a run that ended with `status` says to its chat, and as which kind; None: nothing
    (an empty reply, or a stop somebody asked for)."""
    if status == "ok":
        return (reply, reply_kind) if reply else None
    if status == "aborted" and error in ("aborted", "merged", REVOKED):
        return None  # a stop somebody asked for; a message that joined another turn (D75)
    if status == "timeout":
        return TIMEOUT_NOTICE, "notice"
    if status == "limited":  # D64: the refusal, once per window ("" when already sent)
        return (error, "notice") if error else None
    if status == "aborted":
        return f"⚙️ Agent run aborted: {error}", "notice"
    if status == "error" and error and error.startswith("⚠️ "):
        return error, "notice"  # already a notice for the chat (e.g. a provider failure)
    return f"⚠️ The agent failed: {error or 'unknown error'}", "notice"


async def deliver_run_end(
    gate: OutboundGate,
    *,
    session_key: str,
    run_id: str,
    target: DeliveryContext | None,
    status: str,
    reply: str | None = None,
    error: str | None = None,
    reply_kind: ReplyKind = "reply",
    notices: bool = True,
    notice: str | None = None,
) -> DeliveryResult | None:
    """Deliver a finished run's reply (or, with `notices`, the notice of its failure) to
    `target` (None: the session's last route). `notice` replaces the failure's text (the
    restart notice, D12). Returns the delivery, or None when there was nothing to say."""
    media = await gate.store.media_of_run(run_id) if status == "ok" else []
    message = run_end_message(status, reply, error, reply_kind=reply_kind)
    if message is None:
        if not media:
            return None
        message = ("", reply_kind)  # the reply is the media alone
    text, kind = message
    if kind == "notice":
        if not notices:
            return None
        text = notice or text
    return await gate.deliver(
        Outbound(text, kind, session_key, target=target, run_id=run_id, media=media)
    )


__all__ = ["REVOKED", "TIMEOUT_NOTICE", "deliver_run_end", "run_end_message"]
