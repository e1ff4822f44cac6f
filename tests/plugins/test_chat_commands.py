"""Owner chat commands through the real router and gate (the adapter is the network edge)."""

from __future__ import annotations

from typing import Any

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer


async def _setup(
    make_runtime: RuntimeFactory, extra: dict[str, Any] | None = None
) -> tuple[Runtime, RecordingAdapter]:
    adapter = RecordingAdapter()
    rt = await make_runtime(extra, adapters=[adapter])
    return rt, adapter


async def test_send_without_argument_and_without_policy_says_default(
    make_runtime: RuntimeFactory,
) -> None:
    adapter = RecordingAdapter(channel="webchat")
    await make_runtime(adapters=[adapter])
    await adapter.inject(adapter.message("/send"))
    assert await adapter.wait_sent(1) == ["⚙️ Send policy: on (default)"]


async def test_send_cycle_and_status_source(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter(channel="webchat")
    rt = await make_runtime(
        {
            "session": {
                "sendPolicy": {
                    "default": "deny",
                    "rules": [{"action": "allow", "match": {"channel": "webchat"}}],
                }
            }
        },
        adapters=[adapter],
    )
    await adapter.inject(adapter.message("/send"))
    await adapter.inject(adapter.message("/send off"))
    await adapter.inject(adapter.message("/send"))
    await adapter.inject(adapter.message("hello?"))
    await adapter.inject(adapter.message("/send inherit"))
    await adapter.inject(adapter.message("/send"))
    await adapter.inject(adapter.message("/send maybe"))
    sent = await adapter.wait_sent(6)
    assert sent == [
        "⚙️ Send policy: on (rule 1: channel=webchat)",
        "⚙️ Send policy set to off.",
        "⚙️ Send policy: off (session override)",
        "⚙️ Send policy set to inherit.",
        "⚙️ Send policy: on (rule 1: channel=webchat)",
        "⚙️ Usage: /send on|off|inherit",
    ]
    entry = await rt.store.get_session("agent:main:main")
    assert entry is not None and entry.send_policy is None
    history = await rt.store.history(entry.session_id)
    assert [m.plain_text() for m in history] == ["hello?"]
    assert history[0].meta and history[0].meta["noRun"].startswith("send policy")
    assert fake_model.requests == []


async def test_non_owner_is_refused_and_nothing_reaches_the_agent(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter()  # a channel with no owners configured: nobody is an owner
    rt = await make_runtime({"session": {"dmScope": "per-peer"}}, adapters=[adapter])
    await adapter.inject(adapter.message("/send off", chat_id="guest", sender_id="guest"))
    await adapter.inject(adapter.message("/help", chat_id="guest", sender_id="guest"))
    sent = await adapter.wait_sent(2)
    assert sent[0] == "⚙️ /send is owner-only."
    assert "/send" not in sent[1] and "/status" in sent[1]
    entry = await rt.store.get_session("agent:main:dm:guest")
    assert entry is not None and entry.send_policy is None
    assert fake_model.requests == []


async def test_send_with_extra_words_goes_to_the_agent(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter(channel="webchat")
    await make_runtime(adapters=[adapter])
    await adapter.inject(adapter.message("/send on please"))
    assert await adapter.wait_sent(1) == ["echo: /send on please"]


async def test_status_new_and_stop(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter(channel="webchat")
    rt = await make_runtime(adapters=[adapter])
    await adapter.inject(adapter.message("hi"))
    await adapter.wait_sent(1)
    before = await rt.store.get_session("agent:main:main")
    assert before is not None
    await rt.store.update_session(before.key, send_policy="allow")
    await adapter.inject(adapter.message("/status"))
    status = (await adapter.wait_sent(2))[1]
    assert "Session: agent:main:main" in status and "Model: fake/fake-model" in status
    assert "Send policy: on (session override)" in status and "Last run: ok" in status
    await adapter.inject(adapter.message("/new"))
    assert (await adapter.wait_sent(3))[2].startswith("⚙️ New session started")
    after = await rt.store.get_session(before.key)
    assert after is not None and after.session_id != before.session_id
    assert after.send_policy == "allow"
    assert await rt.store.history(after.session_id) == []
    await adapter.inject(adapter.message("/stop"))
    assert (await adapter.wait_sent(4))[3] == "⚙️ Nothing to stop."


async def test_denied_group_stores_inbound_without_a_run(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, adapter = await _setup(
        make_runtime,
        {
            "session": {
                "sendPolicy": {
                    "rules": [
                        {"action": "deny", "match": {"channel": "testchat", "chatType": "group"}}
                    ]
                }
            }
        },
    )
    await adapter.inject(
        adapter.message("hello bot", chat_id="g1", chat_type="group", mentioned=True)
    )
    entry = await rt.store.get_session("agent:main:testchat:group:g1")
    assert entry is not None
    history = await rt.store.history(entry.session_id)
    assert [m.plain_text() for m in history] == ["hello bot"]
    assert await rt.store.last_run(entry.key) is None
    assert fake_model.requests == []


async def test_owner_commands_refuse_a_non_owner_with_the_same_text(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """The registry's OWNER permission answers every built-in owner command as D4 does."""
    adapter = RecordingAdapter()  # no owners configured: the guest is no owner
    rt = await make_runtime({"session": {"dmScope": "per-peer"}}, adapters=[adapter])
    commands = ["/new", "/stop", "/subagents list", "/pair list", "/cron list", "/send off"]
    for text in commands:
        await adapter.inject(adapter.message(text, chat_id="guest", sender_id="guest"))
    sent = await adapter.wait_sent(len(commands))
    assert sent == [f"⚙️ /{c.split()[0][1:]} is owner-only." for c in commands]
    entry = await rt.store.get_session("agent:main:dm:guest")
    assert entry is not None
    before = entry.session_id
    await adapter.inject(adapter.message("/status", chat_id="guest", sender_id="guest"))
    [*_, status] = await adapter.wait_sent(len(commands) + 1)
    assert status.startswith("⚙️ Session: agent:main:dm:guest")  # everyone may ask /status
    after = await rt.store.get_session("agent:main:dm:guest")
    assert after is not None and after.session_id == before  # /new did not reset
    assert fake_model.requests == []
