"""Slack adapter end to end: FakeSlack → real slack-bolt (Socket Mode) → router → fake model."""

from __future__ import annotations

import asyncio
from typing import Any

from adapters.slack.adapter import SlackAdapter
from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.adapters.slack.runtime import OWNER, SlackRuntime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text
from tests.fakes.model_script import STREAMED_TEXT, held_stream
from tests.fakes.retry_clock import FakeHold
from tests.fakes.slack import FakeSlack
from tests.polling import eventually, user_texts

USER = "U0USER001"  # a non-owner, who may DM (D11)


async def session_keys(rt: Runtime) -> list[str]:
    return [e.key for e in await rt.store.list_sessions(SessionQuery())]


async def test_dm_round_trip(fake_slack: FakeSlack, slack_rt: SlackRuntime) -> None:
    rt, adapter = await slack_rt()
    assert adapter.mention_patterns == (f"<@{fake_slack.bot_user_id}>",)
    await fake_slack.push_event(fake_slack.message_event("D0DM0001", "hello there", user=USER))
    [post] = await fake_slack.wait_for("chat.postMessage")
    assert post.params["channel"] == "D0DM0001"
    assert post.params["text"] == "echo: hello there"
    assert not post.params.get("thread_ts")
    assert post.token == fake_slack.bot_token
    [entry] = [e for e in await rt.store.list_sessions(SessionQuery()) if e.chat_type]
    assert entry.last_channel == "slack" and entry.last_to == "channel:D0DM0001"
    assert entry.chat_type == "direct" and entry.display_name == USER
    # default dmScope main: a non-owner's DM is still its own session (D62)
    assert entry.key == "agent:main:slack:dm:" + USER.lower()


async def test_group_needs_mention_and_dedups(
    fake_slack: FakeSlack, slack_rt: SlackRuntime
) -> None:
    rt, _ = await slack_rt()
    chan = "C0CHAN001"
    await fake_slack.push_event(
        fake_slack.message_event(chan, "just chatting", channel_type="channel")
    )
    keys: list[str] = []

    async def stored() -> bool:
        keys[:] = [k for k in await session_keys(rt) if chan.lower() in k.lower()]
        return bool(keys) and await user_texts(rt, keys[0]) == ["just chatting"]

    await eventually(stored)
    assert not fake_slack.calls_for("chat.postMessage")
    # a mention arrives twice (message + app_mention, same ts): one reply
    ts = fake_slack.next_ts()
    said = f"<@{fake_slack.bot_user_id}> what's up"
    await fake_slack.push_event(fake_slack.message_event(chan, said, channel_type="channel", ts=ts))
    await fake_slack.push_event(fake_slack.app_mention(chan, said, ts=ts))
    [post] = await fake_slack.wait_for("chat.postMessage")
    # model text is escaped: the echoed mention shows as text and pings nobody
    shown = said.replace("<", "&lt;").replace(">", "&gt;")
    assert post.params["channel"] == chan and post.params["text"] == f"echo: {shown}"
    # everything queued before this one has been handled once it is stored
    await fake_slack.push_event(fake_slack.message_event(chan, "later", channel_type="channel"))

    async def settled() -> bool:
        return (await user_texts(rt, keys[0]))[-1:] == ["later"]

    await eventually(settled)
    assert await user_texts(rt, keys[0]) == ["just chatting", said, "later"]
    assert len(fake_slack.calls_for("chat.postMessage")) == 1
    entry = await rt.store.get_session(keys[0])
    assert entry is not None and entry.chat_type == "channel" and entry.last_to == f"channel:{chan}"


async def test_app_mention_first_private_channel(
    fake_slack: FakeSlack, slack_rt: SlackRuntime
) -> None:
    """app_mention alone (no channel_type): G… ids are groups; reply in its thread."""
    rt, _ = await slack_rt()
    await fake_slack.push_event(fake_slack.app_mention("G0PRIV001", "hi", thread_ts="111.000001"))
    [post] = await fake_slack.wait_for("chat.postMessage")
    assert post.params["channel"] == "G0PRIV001" and post.params["thread_ts"] == "111.000001"
    [key] = [k for k in await session_keys(rt) if "g0priv001" in k.lower()]
    entry = await rt.store.get_session(key)
    assert entry is not None and entry.chat_type == "group" and entry.last_thread_id == "111.000001"


async def test_thread_reply_lands_in_thread(fake_slack: FakeSlack, slack_rt: SlackRuntime) -> None:
    await slack_rt()
    await fake_slack.push_event(
        fake_slack.message_event(
            "C0CHAN002",
            f"<@{fake_slack.bot_user_id}> in thread",
            channel_type="channel",
            thread_ts="1700000000.000100",
        )
    )
    [post] = await fake_slack.wait_for("chat.postMessage")
    assert post.params["channel"] == "C0CHAN002"
    assert post.params["thread_ts"] == "1700000000.000100"
    await fake_slack.push_event(
        fake_slack.message_event("D0DM0002", "dm thread", thread_ts="1700000000.000200")
    )
    posts = await fake_slack.wait_for("chat.postMessage", 2)
    assert posts[1].params["channel"] == "D0DM0002"
    assert posts[1].params["thread_ts"] == "1700000000.000200"


async def test_own_bot_and_edit_events_ignored(
    fake_slack: FakeSlack, slack_rt: SlackRuntime
) -> None:
    rt, _ = await slack_rt()
    await fake_slack.push_event(
        fake_slack.message_event("D0DM0003", "me", user=fake_slack.bot_user_id)
    )
    await fake_slack.push_event(
        fake_slack.message_event("D0DM0003", "other bot", user="U0OTHERBOT", bot_id="B0OTHER")
    )
    await fake_slack.push_event(
        fake_slack.message_event("D0DM0003", "edited", subtype="message_changed")
    )
    await fake_slack.push_event(fake_slack.message_event("D0DM0003", "real one"))
    [post] = await fake_slack.wait_for("chat.postMessage")
    assert post.params["text"] == "echo: real one"
    await fake_slack.wait_for("ack", 4)
    [key] = [k for k in await session_keys(rt) if k != "global"]
    assert await user_texts(rt, key) == ["real one"]


async def test_long_reply_split(
    fake_slack: FakeSlack, fake_model: FakeModelServer, slack_rt: SlackRuntime
) -> None:
    await slack_rt({"gateway": {"maxReplyChars": 50_000}})  # D142's cut is tested on its own
    long = "\n".join(f"line {i} " + "x" * 990 for i in range(45))  # ~45 000 chars
    fake_model.script(text(long))
    await fake_slack.push_event(fake_slack.message_event("D0DM0004", "long please"))
    posts = await fake_slack.wait_for("chat.postMessage", 12)  # 4 lines of ~1000 per chunk
    assert all(len(p.params["text"]) <= 4_000 for p in posts)
    assert "".join(p.params["text"] for p in posts).replace("\n", "") == long.replace("\n", "")


async def test_rate_limit_retried_and_forbidden_recorded(
    fake_slack: FakeSlack, slack_rt: SlackRuntime
) -> None:
    rt, _ = await slack_rt()
    fake_slack.fail_next("chat.postMessage", 429, retry_after=0.01)  # Retry-After: 0
    await fake_slack.push_event(fake_slack.message_event("D0DM0005", "one"))
    posts = await fake_slack.wait_for("chat.postMessage", 2)
    assert [p.status for p in posts] == [429, 200]
    assert posts[1].params["text"] == "echo: one"
    fake_slack.fail_next("chat.postMessage", 200, {"error": "not_in_channel"}, times=5)
    await fake_slack.push_event(fake_slack.message_event("D0DM0005", "two"))
    await fake_slack.wait_for("chat.postMessage", 3)

    async def failed() -> bool:
        return bool(await rt.store.list_deliveries(outcome="failed"))

    await eventually(failed)
    [bad] = await rt.store.list_deliveries(outcome="failed")
    assert "TargetForbidden" in (bad.reason or "") and bad.to == "channel:D0DM0005"
    assert len(fake_slack.calls_for("chat.postMessage")) == 3  # 403-like: not retried
    delivered = await rt.store.list_deliveries(outcome="delivered")
    assert delivered[0].attempts == 2


async def test_send_off_owner_and_non_owner(fake_slack: FakeSlack, slack_rt: SlackRuntime) -> None:
    rt, _ = await slack_rt({"session": {"dmScope": "per-channel-peer"}})  # one session per DM
    await fake_slack.push_event(fake_slack.message_event("D0DMOWNER", "/send off", user=OWNER))
    [post] = await fake_slack.wait_for("chat.postMessage")
    assert post.params["text"] == "⚙️ Send policy set to off."
    await fake_slack.push_event(fake_slack.message_event("D0DMOWNER", "silent now", user=OWNER))
    await fake_slack.push_event(fake_slack.message_event("D0DMUSER", "/send off", user=USER))
    posts = await fake_slack.wait_for("chat.postMessage", 2)
    assert posts[1].params == {
        **posts[1].params,
        "channel": "D0DMUSER",
        "text": "⚙️ /send is owner-only.",
    }
    keys = [k for k in await session_keys(rt) if OWNER.lower() in k.lower()]
    assert keys, await session_keys(rt)
    assert "silent now" in await user_texts(rt, keys[0])
    assert len(fake_slack.calls_for("chat.postMessage")) == 2


async def test_sessions_list_shows_slack_session(
    fake_slack: FakeSlack, slack_rt: SlackRuntime
) -> None:
    rt, _ = await slack_rt({"session": {"dmScope": "per-channel-peer"}})
    await fake_slack.push_event(
        fake_slack.message_event(
            "C0CHAN003",
            f"<@{fake_slack.bot_user_id}> hi",
            channel_type="channel",
            thread_ts="1700000000.000300",
        )
    )
    await fake_slack.wait_for("chat.postMessage")
    await fake_slack.push_event(fake_slack.message_event("D0DM0006", "hi dm"))
    await fake_slack.wait_for("chat.postMessage", 2)
    entries = await rt.store.list_sessions(SessionQuery())
    [group] = [e for e in entries if "c0chan003" in e.key.lower()]
    result = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, rt.services.context_for(group))
    rows = result["sessions"] if isinstance(result, dict) else result
    by_key = {r["key"]: r for r in rows}
    assert group.key in by_key, by_key
    row = by_key[group.key]
    assert row["kind"] == "group" and row["channel"] == "slack"
    assert row["displayName"] == "slack:C0CHAN003"
    assert group.key.lower().endswith(":slack:channel:c0chan003:thread:1700000000.000300")
    assert row["deliveryContext"] == {
        "channel": "slack",
        "to": "channel:C0CHAN003",
        "accountId": "default",
    }
    assert group.last_thread_id == "1700000000.000300"
    [dm] = [r for r in rows if USER.lower() in r["key"].lower()]
    assert dm["displayName"] == USER
    assert dm["deliveryContext"]["to"] == "channel:D0DM0006"


async def test_a_send_slack_never_answers_times_out_and_is_retried(
    fake_slack: FakeSlack, slack_rt: SlackRuntime, make_runtime: RuntimeFactory
) -> None:
    """D142/D144: the SDK's timeout ends an unanswered chat.postMessage as a fault the gate
    retries; the stalled call took no effect, so the reply is posted once."""
    rt, first = await slack_rt()
    await first.stop()  # the same account again, with a one-second timeout
    assert rt.config.channels.slack is not None
    [account] = [a for _, a in rt.config.channels.slack.iter_accounts()]
    adapter = SlackAdapter(account, timeout=1.0)
    await rt.add_adapter(adapter)
    try:
        rt.gate.retry.backoff = 0.01
        fake_slack.stall_next("chat.postMessage")
        await fake_slack.push_event(fake_slack.message_event("D0DM0005", "hello?"))
        posts = await fake_slack.wait_for("chat.postMessage", 2, timeout=30)
        assert fake_slack.stalled == ["chat.postMessage"]
        assert posts[1].params["text"] == "echo: hello?"

        async def delivered() -> bool:
            return bool(await rt.store.list_deliveries(outcome="delivered"))

        await eventually(delivered, 30)
        [row] = await rt.store.list_deliveries(outcome="delivered")
        assert row.attempts == 2
        assert [m["text"] for m in fake_slack.posted] == ["echo: hello?"]
    finally:
        await adapter.stop()


async def test_a_429_on_the_preview_holds_the_chat_for_the_final_reply(
    fake_slack: FakeSlack, slack_rt: SlackRuntime, fake_model: FakeModelServer
) -> None:
    """D142 on Slack: the streamed preview's first message meets a 429, so the chat is held for
    its Retry-After; no preview goes there meanwhile and the final reply waits it out once, then
    is sent once."""
    rt, _ = await slack_rt({"channels": {"slack": {"streaming": "edit"}}})
    hold = FakeHold(rt)
    fake_model.script(held_stream())
    fake_slack.fail_next("chat.postMessage", 429, retry_after=3)
    await fake_slack.push_event(fake_slack.message_event("D0DM0009", "stream please"))
    await asyncio.wait_for(fake_model.paused.wait(), 30)
    assert await hold.until_held("slack|default|channel:D0DM0009") == 3.0
    fake_model.resume()

    async def delivered() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "delivered"]

    [row] = await eventually(delivered, 30)
    assert hold.slept == [3.0]  # the final reply waited what Slack asked, once
    posts = fake_slack.calls_for("chat.postMessage")
    assert [c.status for c in posts] == [429, 200]
    assert posts[1].params["text"] == STREAMED_TEXT
    assert not fake_slack.calls_for("chat.update")  # no preview was shown to edit
    assert row.attempts == 1
