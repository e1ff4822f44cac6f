"""D75 busy input with a slow fake model: three messages 100 ms apart in one chat.

`collect`: two turns (the first, then one for the rest); `steer`: the later messages join the
running turn's next model request; `interrupt`: each new message aborts the running turn and
the last turn answers; `debounceMs`: a burst is one turn. Every message is stored on arrival
and the transcript keeps arrival order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import STDIO_SERVER
from tests.fakes.model import FakeModelServer, delay, text, tool_call
from tests.fakes.model_script import HoldFirst, content_text
from tests.polling import eventually

CHAT = "u1"


def _config(mode: str, debounce: int = 0) -> dict[str, Any]:
    return {
        "channels": {"telegram": {"owners": [CHAT]}},
        "messages": {"queue": {"mode": mode, "debounceMs": debounce}},
    }


def _users(request: dict[str, Any]) -> list[str]:
    return [content_text(m["content"]) for m in request["messages"] if m["role"] == "user"]


async def _burst(adapter: RecordingAdapter, fake: FakeModelServer, *, wait_first: bool) -> None:
    await adapter.say("one", chat_id=CHAT, sender=CHAT)
    if wait_first:  # the first turn is at its model when the others arrive

        async def asked() -> bool:
            return len(fake.requests) >= 1

        await eventually(asked, timeout=30)
    await asyncio.sleep(0.1)
    await adapter.say("two", chat_id=CHAT, sender=CHAT)
    await asyncio.sleep(0.1)
    await adapter.say("three", chat_id=CHAT, sender=CHAT)


async def _transcript(rt: Runtime, adapter: RecordingAdapter) -> list[str]:
    key = rt.router.session_key_for(adapter.message("x", chat_id=CHAT))
    entry = await rt.store.get_session(key)
    assert entry is not None
    return [m.plain_text() for m in await rt.store.history(entry.session_id)]


@pytest.mark.parametrize("where", ["messages", "channel"])
async def test_collect_answers_the_first_then_the_rest_at_once(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, where: str
) -> None:
    adapter = RecordingAdapter("telegram")
    config = _config("collect")
    if where == "channel":  # `channels.<ch>.queue` overrides `messages.queue` (D75)
        config = _config("queue")
        config["channels"]["telegram"]["queue"] = {"mode": "collect"}
    rt = await make_runtime(config, adapters=[adapter])
    slow = HoldFirst(text("first"), text("rest"))
    fake_model.set_responder(slow)
    await _burst(adapter, fake_model, wait_first=True)
    slow.release.set()  # the burst is stored: the first turn's model may answer now
    await adapter.wait_for("rest", 1, timeout=30)
    assert len(fake_model.requests) == 2
    assert _users(fake_model.requests[1])[-1] == "two\nthree"
    assert adapter.texts() == ["first", "rest"]
    assert await _transcript(rt, adapter) == ["one", "first", "two", "three", "rest"]


@pytest.mark.parametrize(
    "tool", [("agents_list", {}), ("calc__add", {"a": 2, "b": 3})], ids=["ours", "mcp"]
)
async def test_steer_puts_later_messages_into_the_running_turn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, tool: tuple[str, dict[str, Any]]
) -> None:
    """The steer joins the request that carries the tool's result, an MCP tool's too (D147)."""
    adapter = RecordingAdapter("telegram")
    config = _config("steer")
    if tool[0].startswith("calc__"):
        config["mcp"] = {"servers": {"calc": STDIO_SERVER}}
    rt = await make_runtime(config, adapters=[adapter])
    slow = HoldFirst(tool_call(*tool), text("all three"))
    fake_model.set_responder(slow)
    await _burst(adapter, fake_model, wait_first=True)
    slow.release.set()  # the burst is stored: the first model request may end now
    await adapter.wait_for("all three", 1, timeout=30)
    assert len(fake_model.requests) == 2  # one turn, two model requests
    assert _users(fake_model.requests[1]) == ["one", "two\nthree"]
    assert adapter.texts() == ["all three"]
    texts = await _transcript(rt, adapter)
    assert texts[:3] == ["one", "two", "three"] and texts[-1] == "all three"


async def test_interrupt_aborts_the_running_turn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(_config("interrupt"), adapters=[adapter])

    def answer(request: dict[str, Any]) -> Any:  # only the turn that saw all three answers
        return text("last") if _users(request)[-1:] == ["three"] else delay(5.0, text("never"))

    fake_model.set_responder(answer)
    await _burst(adapter, fake_model, wait_first=True)
    await adapter.wait_for("last", 1, timeout=30)
    assert adapter.texts() == ["last"]  # the stopped turns said nothing
    assert _users(fake_model.requests[-1]) == ["one", "two", "three"]
    key = rt.router.session_key_for(adapter.message("x", chat_id=CHAT))
    last = await rt.store.last_run(key)
    assert last is not None and last.status == "ok"


async def test_debounce_makes_a_burst_one_turn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(_config("queue", debounce=400), adapters=[adapter])
    fake_model.script(text("got all"))
    await _burst(adapter, fake_model, wait_first=False)
    await adapter.wait_for("got all", 1, timeout=30)
    assert len(fake_model.requests) == 1
    assert _users(fake_model.requests[0])[-1] == "one\ntwo\nthree"
    assert await _transcript(rt, adapter) == ["one", "two", "three", "got all"]
