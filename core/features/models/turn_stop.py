"""A turn's "no further model request" (D69, D147).

Once a tool call ended the turn (`sessions_yield`), the turn's model wrapper
(:mod:`timed_model`) answers any next request itself with the stand-in text, instead of asking
the provider. Done at the model boundary rather than with a pydantic-ai capability: any
capability makes pydantic-ai copy the run context for it at every hook of every run (~70 copies
a turn, about a tenth of a plain turn's CPU), and a yield is rare.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class TurnStop:
    """Shared by the turn and its model wrapper; set by a tool call that ends the turn."""

    answer: str | None = None
    """The stand-in answer of every later request; None while the turn goes on."""


TURN_STOP: ContextVar[TurnStop | None] = ContextVar("crosstalk_turn_stop", default=None)
