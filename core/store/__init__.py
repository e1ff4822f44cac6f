"""Persistence: one store API over SQLite or PostgreSQL (see store.py)."""

from core.model.records import (
    FINAL_RUN_STATUSES,
    DeliveryRecord,
    RunRecord,
    RunStatus,
    SessionEntry,
    SessionQuery,
    TranscriptMessage,
)
from core.store.store import Store, StoreError, now_ms

__all__ = [
    "FINAL_RUN_STATUSES",
    "DeliveryRecord",
    "RunRecord",
    "RunStatus",
    "SessionEntry",
    "SessionQuery",
    "Store",
    "StoreError",
    "TranscriptMessage",
    "now_ms",
]
