"""After a crash, tell each chat whose turn was cut short (decision D12), once.

The runs a dead process left queued or running are marked aborted at start
(:meth:`RunManager.recover`); every chat-facing one (`deliver`) gets this notice through the
outbound gate on its session's last route, one per session however many turns were lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.engine.outbound.run_end import deliver_run_end
from core.store import RunRecord

if TYPE_CHECKING:
    from core.engine.outbound.gate import OutboundGate

RESTART_NOTICE = "⚠️ I was restarted while answering your last message. Please send it again."


async def notify_aborted_chats(gate: OutboundGate, aborted: list[RunRecord]) -> int:
    """Send the notice once per session with an aborted chat-facing run; returns how many."""
    latest: dict[str, RunRecord] = {}
    for run in aborted:
        if run.deliver:
            latest[run.session_key] = run
    for key, run in latest.items():
        await deliver_run_end(
            gate,
            session_key=key,
            run_id=run.id,
            target=None,
            status="aborted",
            notice=RESTART_NOTICE,
        )
    return len(latest)
