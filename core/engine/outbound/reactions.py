"""Status reactions (D74): 👀 on a platform message when its turn starts, ✅ or ❌ when it ends.

They pass the gate like everything else (`OutboundGate.react`: the session's send policy, so a
muted chat gets none); `channels.<ch>.statusReactions: false` turns them off. Adapters map the
marks to what their platform allows (Telegram's bots: 👍 and 👎).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from core.model.delivery_context import DeliveryContext

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.outbound.gate import OutboundGate
    from core.engine.runs.contract import DeltaSink, RunOutcome, RunRequest
    from core.store import RunRecord

log = logging.getLogger(__name__)

SEEN, DONE, FAILED = "👀", "✅", "❌"


class StatusReactions:
    def __init__(self, gate: OutboundGate, config: CrosstalkConfig) -> None:
        self.gate = gate
        self.config = config
        self._tasks: set[asyncio.Task[bool]] = set()

    def _where(self, request: RunRequest) -> tuple[DeliveryContext, str] | None:
        origin, message_id = request.context.origin, request.meta.get("messageId")
        if not request.deliver or origin is None or not origin.channel or not message_id:
            return None
        section = getattr(self.config.channels, origin.channel, None)
        if not getattr(section, "status_reactions", True):
            return None
        return origin, str(message_id)

    def sink_for(self, run: RunRecord, request: RunRequest) -> DeltaSink | None:
        """Called when a run starts (a delta-sink factory that returns no sink): 👀."""
        where = self._where(request)
        if where is not None:
            task = asyncio.ensure_future(self.gate.react(run.session_key, *where, SEEN))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return None

    async def on_run_finished(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        where = self._where(request)
        if where is None or outcome.error == "merged":
            return
        await self.gate.react(run.session_key, *where, DONE if outcome.status == "ok" else FAILED)
