"""Agent runs: queueing per session, persistence, waiting."""

from core.engine.runs.contract import RunOutcome, RunRequest, TurnExecutor, TurnResult
from core.engine.runs.lanes import Lanes
from core.engine.runs.manager import RunManager

__all__ = ["Lanes", "RunManager", "RunOutcome", "RunRequest", "TurnExecutor", "TurnResult"]
