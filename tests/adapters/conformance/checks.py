"""Shared by the conformance modules: skip a test the platform cannot take (its driver says
why), and every stored user message of a runtime."""

from __future__ import annotations

import pytest

from core.model.records import SessionQuery
from core.runtime import Runtime
from core.store import SessionEntry, TranscriptMessage
from tests.adapters.conformance.drivers import Driver


def require(driver: Driver, *capabilities: str) -> None:
    for cap in capabilities:
        if cap not in driver.supports:
            pytest.skip(f"{driver.platform}: {driver.unsupported.get(cap, cap)}")


async def user_messages(rt: Runtime) -> list[tuple[SessionEntry, TranscriptMessage]]:
    """Every stored user message, in every session."""
    out: list[tuple[SessionEntry, TranscriptMessage]] = []
    for entry in await rt.store.list_sessions(SessionQuery()):
        out += [(entry, m) for m in await rt.store.history(entry.session_id) if m.role == "user"]
    return out
