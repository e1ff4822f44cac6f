"""D13: queued turns keep each user message directly followed by that turn's replies."""

from __future__ import annotations

import json

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, delay, text


async def _texts(rt: Runtime, key: str) -> list[str]:
    entry = await rt.store.get_session(key)
    assert entry is not None
    return [m.plain_text() for m in await rt.store.history(entry.session_id, limit=200)]


async def test_twenty_quick_messages_interleave_everywhere(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter()
    rt = await make_runtime(adapters=[adapter])
    fake_model.script(delay(0.5, text("a00")), *(text(f"a{i:02d}") for i in range(1, 20)))
    for i in range(20):
        await adapter.inject(adapter.message(f"u{i:02d}"))
    key = rt.router.session_key_for(adapter.message("x"), owner=False)
    # every message is stored as it arrives (nothing acknowledged is lost), queued ones last
    queued = await _texts(rt, key)
    assert sorted(queued) == [f"u{i:02d}" for i in range(20)]
    assert queued[1:] == [f"u{i:02d}" for i in range(1, 20)]

    await adapter.wait_sent(20, timeout=60)
    expected = [t for i in range(20) for t in (f"u{i:02d}", f"a{i:02d}")]
    assert await _texts(rt, key) == expected

    entry = await rt.store.get_session(key)
    assert entry is not None
    lines = rt.store.transcript_path(entry.session_id).read_text(encoding="utf-8").splitlines()
    assert ["".join(b["text"] for b in json.loads(line)["content"]) for line in lines] == expected

    history = await rt.tools.invoke(
        rt.tool_env,
        "sessions_history",
        {"sessionKey": key, "limit": 200},
        rt.services.context_for(await rt.services.ensure_session("agent:main:main"), via="http"),
    )
    assert [m["content"][0]["text"] for m in history["messages"]] == expected

    # the 5th turn's model context: four exchanges, then its own input
    fifth = [str(m["content"]) for m in fake_model.requests[4]["messages"] if m["role"] != "system"]
    assert fifth == [*expected[:8], "u04"]
