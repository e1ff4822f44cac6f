"""The router with only its collaborators (D30): no runtime, no model server.

Real store, gate, run manager and commands; an in-process echo executor stands in for the model.
"""

from __future__ import annotations

from pathlib import Path

from tests.narrow import narrow_parts


async def test_a_message_runs_a_turn_and_the_reply_goes_back_to_its_chat(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await p.adapter.inject(p.adapter.message("hello there"))
        assert await p.adapter.wait_sent(1) == ["echo: hello there"]
        entry = await p.store.get_session("agent:main:main")  # the web chat is the main session
        assert entry is not None
        history = await p.store.history(entry.session_id)
        assert [(m.role, m.plain_text()) for m in history] == [
            ("user", "hello there"),
            ("assistant", "echo: hello there"),
        ]


async def test_a_command_is_answered_with_the_command_environment(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await p.adapter.inject(p.adapter.message("/send off"))
        await p.adapter.inject(p.adapter.message("/send"))
        assert await p.adapter.wait_sent(2) == [
            "⚙️ Send policy set to off.",
            "⚙️ Send policy: off (session override)",
        ]
        assert p.executor.turns == []  # commands never reach the agent


async def test_a_denied_session_stores_the_message_without_a_run(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await p.adapter.inject(p.adapter.message("/send off"))
        await p.adapter.inject(p.adapter.message("anyone there?"))
        await p.adapter.wait_sent(1)
        entry = await p.store.get_session("agent:main:main")
        assert entry is not None
        [msg] = await p.store.history(entry.session_id)
        assert msg.meta is not None and msg.meta["noRun"].startswith("send policy")
        assert p.executor.turns == []


async def test_a_redelivered_message_is_dropped_before_anything(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path, channel="webchat") as p:
        msg = p.adapter.message("once")
        msg = msg.model_copy(update={"message_id": "m-1", "identities": ("m-1",)})
        await p.adapter.inject(msg)
        await p.adapter.wait_sent(1)
        await p.adapter.inject(msg)
        assert p.executor.turns == ["once"]
        assert p.router.duplicates.count("webchat", "default") == 1


async def test_a_non_owner_is_refused_an_owner_command(tmp_path: Path) -> None:
    """A channel without owners: `/new` is refused by the registry, the session untouched."""
    async with narrow_parts(
        tmp_path, {"session": {"dmScope": "per-peer"}}, channel="testchat"
    ) as p:
        await p.adapter.inject(p.adapter.message("/new", chat_id="guest"))
        assert await p.adapter.wait_sent(1) == ["⚙️ /new is owner-only."]
