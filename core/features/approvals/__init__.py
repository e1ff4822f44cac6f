"""Paused runs (D72 approvals, D73 ask_user): requests out through the gate, decisions in."""

from core.features.approvals.service import ApprovalService, DecideResult

__all__ = ["ApprovalService", "DecideResult"]
