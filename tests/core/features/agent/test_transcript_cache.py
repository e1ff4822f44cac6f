"""Placed messages' pydantic-ai form is built once and reused (D57), and runs leave it as built."""

from __future__ import annotations

import copy

from pydantic_ai import Agent

from core.features.agent import transcript
from core.store import TranscriptMessage
from tests.fakes.model import FakeModelServer, text


def history(ids: int = 1) -> list[TranscriptMessage]:
    msgs = [
        TranscriptMessage.text("user", "look it up", 1_700_000_000_000),
        TranscriptMessage(
            role="assistant",
            timestamp=1_700_000_000_100,
            content=[
                {"type": "text", "text": "looking"},
                {"type": "toolCall", "id": "c1", "name": "lookup", "arguments": {"q": "x"}},
            ],
        ),
        TranscriptMessage(
            role="toolResult",
            timestamp=1_700_000_000_200,
            tool_call_id="c1",
            tool_name="lookup",
            content=[{"type": "text", "text": "found"}],
        ),
        TranscriptMessage.text("assistant", "it is x", 1_700_000_000_300),
        TranscriptMessage.text("user", "and then?", 1_700_000_000_400),
    ]
    for n, m in enumerate(msgs):
        m.id, m.seq = ids + n, n + 1
    return msgs


def test_placed_messages_are_reused_and_the_trailing_request_is_fresh() -> None:
    first = transcript.to_model_messages(history())
    again = transcript.to_model_messages(history())
    assert again == first
    assert all(a is b for a, b in zip(again[:-1], first[:-1], strict=True))
    assert again[-1] is not first[-1]  # pydantic-ai may add to a history's last request


def test_a_request_before_an_empty_reply_is_fresh_too() -> None:
    msgs = history(ids=600)[:3]  # user, assistant with a tool call, tool result
    msgs.append(TranscriptMessage(role="assistant", content=[], timestamp=1_700_000_000_250))
    msgs[-1].id, msgs[-1].seq = 603, 4
    first = transcript.to_model_messages(msgs)
    again = transcript.to_model_messages(msgs)
    assert len(again) == 3 and again == first
    assert again[-1] is not first[-1] and again[0] is first[0]


def test_a_message_of_another_database_with_the_same_id_is_not_taken() -> None:
    first = transcript.to_model_messages(history(ids=900))
    other = history(ids=900)
    other[0].content = [{"type": "text", "text": "something else"}]
    again = transcript.to_model_messages(other)
    assert again[0] is not first[0]
    assert again[0].parts[0].content == "something else"  # type: ignore[union-attr]


def test_unplaced_messages_are_built_each_time() -> None:
    msgs = history(ids=1200)
    msgs[0].seq = None
    assert transcript.to_model_messages(msgs)[0] is not transcript.to_model_messages(msgs)[0]


async def test_a_run_leaves_the_reused_messages_as_they_were_built() -> None:
    async with FakeModelServer() as fake:
        fake.script(text("one"), text("two"))
        agent = Agent(fake.chat_model(), output_type=str)
        msgs = history(ids=1500)[:-1]  # ends with the assistant's reply: all reused
        built = transcript.to_model_messages(msgs)
        before = copy.deepcopy(built)
        for _ in range(2):
            result = await agent.run("next", message_history=transcript.to_model_messages(msgs))
            assert result.output in ("one", "two")
        assert transcript.to_model_messages(msgs) == before
        assert all(a is b for a, b in zip(transcript.to_model_messages(msgs), built, strict=True))
