"""The cost limits' hook on every model request of a turn (D64).

The turn sets :data:`COST_GATE` for its run; the model wrapper (:mod:`timed_model`) asks
:meth:`CostGate.before` ahead of each request, so a tool loop stops at its next request once a
cost limit is reached, and reports each response's price to :meth:`CostGate.after`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.features.models.costs import request_cost
from core.model.errors import LimitStop

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.features.access.limits import Limits, Subject


@dataclass(frozen=True, slots=True)
class CostGate:
    config: CrosstalkConfig
    limits: Limits
    subjects: list[Subject]
    who: str | None

    async def before(self) -> None:
        refusal = await self.limits.before_request(self.subjects, self.who)
        if refusal is not None:
            raise LimitStop(refusal.text() if refusal.announce else "")

    async def after(self, ref: str, input_tokens: int, output_tokens: int) -> None:
        cost = request_cost(self.config, ref, input_tokens, output_tokens)
        if cost:
            await self.limits.add_cost(self.subjects, cost)


COST_GATE: ContextVar[CostGate | None] = ContextVar("crosstalk_cost_gate", default=None)

__all__ = ["COST_GATE", "CostGate"]
