"""After a crash, tell each chat whose turn was cut short (D12, D81), once per turn.

The runs a dead process left `running` are marked aborted at start (SQLite) or by the
survivor that takes them over (PostgreSQL); its `queued` ones were accepted, so they are run,
not aborted (D27, D81). Every chat-facing aborted turn (`deliver`) gets its own notice through
the outbound gate on its session's last route, naming the message it was answering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.engine.outbound.run_end import deliver_run_end
from core.store import RunRecord

if TYPE_CHECKING:
    from core.engine.outbound.gate import OutboundGate

FIRST_WORDS = 40


def first_words(text: str) -> str:
    """D81's `<first words>`: the text cut to 40 characters, `…` added when cut."""
    text = text.strip()
    return text if len(text) <= FIRST_WORDS else text[:FIRST_WORDS] + "…"


def restart_notice(message: str) -> str:
    """D81's notice for one aborted turn."""
    return f'⚠️ I was restarted while answering "{first_words(message)}". Please send it again.'


async def notify_aborted_chats(gate: OutboundGate, aborted: list[RunRecord]) -> int:
    """Send each chat-facing aborted turn's notice, in arrival order; returns how many."""
    sent = 0
    for run in sorted(aborted, key=lambda r: (r.created_at, r.input_message_id or 0)):
        if not run.deliver:
            continue
        msg = (
            await gate.store.message_by_id(run.input_message_id)
            if run.input_message_id is not None
            else None
        )
        await deliver_run_end(
            gate,
            session_key=run.session_key,
            run_id=run.id,
            target=None,
            status="aborted",
            notice=restart_notice(msg.plain_text() if msg is not None else ""),
        )
        sent += 1
    return sent
