"""D73 `ask_user` on the pause-and-resume machinery: options as buttons, a free-text answer,
a timeout; the answer starts no turn of its own."""

from __future__ import annotations

import json
from typing import Any

from core.api.testing import RecordingAdapter
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text, tool_call

CONFIG: dict[str, Any] = {"channels": {"telegram": {"owners": ["owner-1"], "allowFrom": ["*"]}}}


def _last_tool_result(fake: FakeModelServer) -> Any:
    tools = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    return json.loads(tools[-1]["content"])


async def test_options_are_buttons_and_a_press_answers(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    await make_runtime(CONFIG, adapters=[adapter])
    fake_model.script(
        tool_call("ask_user", {"question": "Which colour?", "options": ["red", "blue"]}),
        text("blue it is"),
    )
    await adapter.say("paint it", chat_id="u7", sender="u7")
    sent = await adapter.wait_for("❓", 1, timeout=30)
    assert sent[0][1] == "❓ Which colour?\n1. red · 2. blue"
    message_id = next(iter(adapter.buttons))
    assert [b.label for b in adapter.buttons[message_id]] == ["red", "blue"]
    await adapter.press(message_id, "blue", sender_id="u7", chat_id="u7", press_id="p1")
    await adapter.wait_for("blue it is", 1, timeout=30)
    assert _last_tool_result(fake_model) == {"answer": "blue"}
    assert adapter.edits == [(message_id, "❓ Which colour?\n✅ blue")]
    assert len(fake_model.requests) == 2  # the press started no turn of its own


async def test_a_free_text_message_is_the_answer(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(CONFIG, adapters=[adapter])
    fake_model.script(tool_call("ask_user", {"question": "Your name?"}), text("hi Ada"))
    await adapter.say("greet me", chat_id="u7", sender="u7")
    sent = await adapter.wait_for("❓", 1, timeout=30)
    assert sent[0][1] == "❓ Your name?"
    await adapter.say("Ada", chat_id="u7", sender="u7")
    await adapter.wait_for("hi Ada", 1, timeout=30)
    assert _last_tool_result(fake_model) == {"answer": "Ada"}
    assert len(fake_model.requests) == 2
    entry = await rt.store.get_session(
        rt.router.session_key_for(adapter.message("x", chat_id="u7"), owner=False)
    )
    assert entry is not None
    texts = [m.plain_text() for m in await rt.store.history(entry.session_id)]
    assert "Ada" in texts and texts[-1] == "hi Ada"


async def test_no_answer_in_time_gives_timeout(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(
        {**CONFIG, "tools": {"askUser": {"timeoutMinutes": 1}}}, adapters=[adapter]
    )
    fake_model.script(tool_call("ask_user", {"question": "Still there?"}), text("nobody"))
    await adapter.say("ping", chat_id="u7", sender="u7")
    await adapter.wait_for("❓", 1, timeout=30)
    (question,) = await rt.store.questions(kind="question")
    assert question.expires_at - question.created_at == 60_000
    rt.approvals.clock = lambda: question.expires_at
    assert await rt.approvals.expire_due() == 1
    await adapter.wait_for("nobody", 1, timeout=30)
    assert _last_tool_result(fake_model) == {"status": "timeout"}
    assert adapter.edits[-1][1] == "❓ Still there?\n⌛ No answer"
