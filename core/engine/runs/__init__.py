"""Agent runs: queueing per session, persistence, waiting."""

from core.engine.runs.lanes import Lanes
from core.engine.runs.manager import RunManager, RunOutcome, RunRequest, TurnExecutor, TurnResult

__all__ = ["Lanes", "RunManager", "RunOutcome", "RunRequest", "TurnExecutor", "TurnResult"]
