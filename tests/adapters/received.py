"""What an inbound message with attachments became: what the fake model was asked, and the
owner's stored user messages as `sessions_history` shows them."""

from __future__ import annotations

from typing import Any

from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.fakes.model import FakeModelServer


def last_user_content(fake_model: FakeModelServer) -> Any:
    messages = fake_model.requests[-1]["messages"]
    return [m for m in messages if m["role"] == "user"][-1]["content"]


async def user_rows(rt: Runtime) -> list[dict[str, Any]]:
    """The stored user messages of the owner's DM, as sessions_history shows them."""
    [entry] = await rt.store.list_sessions(SessionQuery())
    got = await rt.tools.invoke(
        rt.tool_env, "sessions_history", {"sessionKey": entry.key}, rt.services.context_for(entry)
    )
    return [m for m in got["messages"] if m["role"] == "user"]
