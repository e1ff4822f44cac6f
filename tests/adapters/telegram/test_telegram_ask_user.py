"""D73, D122 on the Telegram fake: `ask_user`'s options as an inline keyboard answered by a tap,
and a question without options answered by the next message; either way the answer starts no
turn of its own and the question is edited to show it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.adapters.telegram.runtime import add_telegram
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

USER = 7  # a guest: ask_user is for whoever the turn is talking to


@pytest.fixture
async def gateway(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[Runtime]:
    section = {
        "botToken": fake_telegram.token,
        "apiBaseUrl": fake_telegram.base_url,
        "owners": ["42"],
        "allowFrom": ["*"],
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({"channels": {"telegram": section}})
    adapter = await add_telegram(rt)
    yield rt
    await adapter.stop()


def _texts(fake: FakeTelegram) -> list[str]:
    return [str(c.params["text"]) for c in fake.calls if c.method == "sendMessage"]


def _answer(fake: FakeModelServer) -> Any:
    tools = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    return json.loads(tools[-1]["content"])


async def test_options_are_an_inline_keyboard_and_a_tap_answers(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    fake_model.script(
        tool_call("ask_user", {"question": "Which colour?", "options": ["red", "blue"]}),
        text("blue it is"),
    )
    fake_telegram.user_message(USER, "paint it")
    [asked] = await fake_telegram.wait_for("sendMessage", 1, timeout=30)
    assert asked.params["text"] == "❓ Which colour?\n1. red · 2. blue"
    keyboard = asked.params["reply_markup"]["inline_keyboard"]
    assert [[b["text"] for b in row] for row in keyboard] == [["red", "blue"]]
    message_id = max(fake_telegram.shown)
    fake_telegram.press(message_id, "blue", user_id=USER)
    await fake_telegram.wait_for("sendMessage", 2, timeout=30)
    assert _texts(fake_telegram) == ["❓ Which colour?\n1. red · 2. blue", "blue it is"]
    assert _answer(fake_model) == {"answer": "blue"}
    shown = fake_telegram.shown[message_id]
    assert shown["text"] == "❓ Which colour?\n✅ blue" and shown["reply_markup"] is None
    assert len(fake_model.requests) == 2  # the tap started no turn of its own


async def test_without_options_the_next_message_is_the_answer(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    fake_model.script(tool_call("ask_user", {"question": "Your name?"}), text("hi Ada"))
    fake_telegram.user_message(USER, "greet me")
    [asked] = await fake_telegram.wait_for("sendMessage", 1, timeout=30)
    assert asked.params["text"] == "❓ Your name?" and "reply_markup" not in asked.params
    message_id = max(fake_telegram.shown)
    fake_telegram.user_message(USER, "Ada")
    await fake_telegram.wait_for("sendMessage", 2, timeout=30)
    assert _texts(fake_telegram) == ["❓ Your name?", "hi Ada"]
    assert _answer(fake_model) == {"answer": "Ada"}
    assert fake_telegram.shown[message_id]["text"] == "❓ Your name?\n✅ Ada"
    assert len(fake_model.requests) == 2
