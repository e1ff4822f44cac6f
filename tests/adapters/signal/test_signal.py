"""Signal adapter (D77, D163, D164) against FakeSignal: reconnects that lose and duplicate
nothing (Last-Event-ID, the cursor kept across a gateway restart), what is ignored, mentions,
read receipts with typing, attachments, errors. The shared behaviour (pairing, allowlists,
groups, formatting, redelivery, 429/503) is in tests/adapters/conformance."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from adapters.signal.adapter import SignalAdapter
from adapters.signal.spec import SignalAccountConfig
from core.engine.channels.build import ChannelEnv
from core.model.delivery_context import DeliveryContext
from core.model.errors import ChannelUnavailable, RateLimited, TargetForbidden, TargetNotFound
from tests.adapters.inbox import Inbox
from tests.adapters.signal.runtime import ANN, GROUP
from tests.fakes.signal import FakeSignal
from tests.polling import eventually


def account(fake: FakeSignal, **over: Any) -> SignalAccountConfig:
    return SignalAccountConfig.model_validate(fake.config(**over))


async def started(
    fake: FakeSignal, inbox: Inbox, state: Path | None = None, **over: Any
) -> SignalAdapter:
    adapter = SignalAdapter(account(fake, **over), env=ChannelEnv(state), retry_initial=0.01)
    await adapter.start(inbox)
    await fake.wait_until(lambda: bool(fake.streams))
    return adapter


async def has(inbox: Inbox, *texts: str) -> None:
    async def check() -> bool:
        return inbox.texts() == list(texts)

    await eventually(check, 5, f"messages {texts}")


async def test_dropped_stream_loses_and_repeats_nothing(fake_signal: FakeSignal) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        fake_signal.user_message(ANN, "one")
        await has(inbox, "one")
        await fake_signal.disconnect()
        fake_signal.user_message(ANN, "two")  # while nobody listens: kept by the daemon
        fake_signal.user_message(ANN, "three")
        await has(inbox, "one", "two", "three")
        connects = fake_signal.calls_for("events.connect")
        assert connects[0].params["lastEventId"] is None
        assert connects[-1].params["lastEventId"] == f"{fake_signal.prefix}1"
        assert connects[-1].params["account"] == fake_signal.account
        assert adapter.status().state == "connected"
        # the daemon restarts: ids start anew, our cursor is unknown to it, so it sends what
        # it kept since its start
        await fake_signal.restart()
        fake_signal.user_message(ANN, "four")
        await has(inbox, "one", "two", "three", "four")
    finally:
        await adapter.stop()


async def test_a_failed_store_is_received_again(fake_signal: FakeSignal) -> None:
    """The cursor moves only after the router stored the message: a failure reconnects and
    the daemon sends the message again."""
    inbox = Inbox(fail_on="two")
    adapter = await started(fake_signal, inbox)
    try:
        for text in ("one", "two", "three"):
            fake_signal.user_message(ANN, text)
        await has(inbox, "one", "two", "three")
        assert len(fake_signal.calls_for("events.connect")) == 2
    finally:
        await adapter.stop()


async def test_cursor_survives_a_gateway_restart(fake_signal: FakeSignal, tmp_path: Path) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox, tmp_path)
    fake_signal.user_message(ANN, "before")
    await has(inbox, "before")
    await adapter.stop()
    cursor = tmp_path / f"signal-{fake_signal.account}.cursor"
    assert cursor.read_text() == f"{fake_signal.prefix}1"
    assert stat.S_IMODE(os.stat(cursor).st_mode) == 0o600  # D12
    await fake_signal.wait_until(lambda: not fake_signal.streams)
    fake_signal.user_message(ANN, "while down")
    again = Inbox()
    adapter = await started(fake_signal, again, tmp_path)
    try:
        await has(again, "while down")
        assert (
            fake_signal.calls_for("events.connect")[-1].params["lastEventId"]
            == f"{fake_signal.prefix}1"
        )
    finally:
        await adapter.stop()


async def test_killed_before_the_first_event_loses_nothing(
    fake_signal: FakeSignal, tmp_path: Path
) -> None:
    """No event had an id yet, so no cursor: the state directory keeps when the stream was
    first opened, and the next start asks for everything since then."""
    fake_signal.user_message(ANN, "before the bot ever listened", timestamp=1_000_000)
    adapter = await started(fake_signal, Inbox(), tmp_path)
    await adapter.stop()  # (as if killed: nothing was received)
    cursor = tmp_path / f"signal-{fake_signal.account}.cursor"
    assert cursor.read_text().startswith("@")
    await fake_signal.wait_until(lambda: not fake_signal.streams)
    fake_signal.user_message(ANN, "sent while the gateway was down")
    inbox = Inbox()
    adapter = await started(fake_signal, inbox, tmp_path)
    try:
        await has(inbox, "sent while the gateway was down")
        assert fake_signal.calls_for("events.connect")[-1].params["lastEventId"] == "0"
        assert cursor.read_text() == f"{fake_signal.prefix}2"
    finally:
        await adapter.stop()


async def test_what_is_not_a_message_is_ignored(fake_signal: FakeSignal) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        own = fake_signal.envelope(fake_signal.account, "sent from my phone")
        fake_signal.push(own)
        sync = fake_signal.envelope(ANN, None)
        sync["envelope"].pop("dataMessage")
        sync["envelope"]["syncMessage"] = {"sentMessage": {"destination": ANN, "message": "x"}}
        fake_signal.push(sync)
        for kind, value in (
            ("receiptMessage", {"isRead": True, "timestamps": [1]}),
            ("typingMessage", {"action": "STARTED"}),
        ):
            env = fake_signal.envelope(ANN, None)
            env["envelope"].pop("dataMessage")
            env["envelope"][kind] = value
            fake_signal.push(env)
        reaction = fake_signal.envelope(ANN, None)
        reaction["envelope"]["dataMessage"]["reaction"] = {"emoji": "👍", "targetSentTimestamp": 1}
        fake_signal.push(reaction)
        update = fake_signal.envelope(ANN, None, group_id=GROUP)
        update["envelope"]["dataMessage"]["groupInfo"]["type"] = "UPDATE"
        fake_signal.push(update)
        other = fake_signal.envelope(ANN, "for another account")
        other["account"] = "+19999999999"
        fake_signal.push(other)
        fake_signal.user_message(ANN, "barrier")
        await has(inbox, "barrier")
        assert inbox.messages[0].identities == (
            f"msg:{fake_signal.envelope(ANN, 'x')['envelope']['sourceUuid']}:"
            f"{inbox.messages[0].timestamp_ms}",
        )
    finally:
        await adapter.stop()


async def test_groups_mentions_and_quotes(fake_signal: FakeSignal) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        fake_signal.user_message(
            ANN,
            "hi \ufffc and \ufffc 🎉",
            group_id=GROUP,
            name="Ann",
            mentions=[
                {"name": "Bob", "number": "+15550000002", "start": 3, "length": 1},
                fake_signal.mention_of_bot(9),
            ],
        )
        fake_signal.user_message(ANN, "plain", group_id=GROUP)
        fake_signal.user_message(
            ANN,
            "answering you",
            group_id=GROUP,
            quote={
                "id": 1,
                "author": fake_signal.account,
                "authorNumber": fake_signal.account,
                "text": "old",
            },
        )
        await eventually(lambda: _true(len(inbox.messages) == 3))
        mention, plain, quote = inbox.messages
        assert mention.text == f"hi @Bob and @{fake_signal.account} 🎉"
        assert (mention.chat_type, mention.chat_id, mention.chat_title) == ("group", GROUP, "Team")
        assert mention.reply_to.to == f"group:{GROUP}" and mention.mentioned
        assert not plain.mentioned and not plain.reply_to_bot
        assert quote.reply_to_bot and not quote.mentioned
        assert adapter.mention_patterns == (f"@{fake_signal.account}",)
    finally:
        await adapter.stop()


async def _true(value: bool) -> bool:
    return value


async def test_typing_sends_read_receipts_first(fake_signal: FakeSignal) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        first = fake_signal.user_message(ANN, "one")
        second = fake_signal.user_message(ANN, "two")
        fake_signal.user_message("+15550000002", "in the group", group_id=GROUP)
        await eventually(lambda: _true(len(inbox.messages) == 3))
        await adapter.send_typing(DeliveryContext(channel="signal", to=ANN))
        [receipt] = fake_signal.calls_for("sendReceipt")
        assert receipt.params == {
            "account": fake_signal.account,
            "recipient": ANN,
            "type": "read",
            "targetTimestamp": [first["envelope"]["timestamp"], second["envelope"]["timestamp"]],
        }
        [typing] = fake_signal.calls_for("sendTyping")
        assert typing.params == {"account": fake_signal.account, "recipient": [ANN]}
        names = [c.method for c in fake_signal.calls if c.method.startswith("send")]
        assert names == ["sendReceipt", "sendTyping"]
        await adapter.send_typing(DeliveryContext(channel="signal", to=ANN))  # owed: none
        assert len(fake_signal.calls_for("sendReceipt")) == 1
        await adapter.send_typing(DeliveryContext(channel="signal", to=f"group:{GROUP}"))
        assert fake_signal.calls_for("sendReceipt")[-1].params["recipient"] == "+15550000002"
        assert fake_signal.calls_for("sendTyping")[-1].params["groupId"] == GROUP
    finally:
        await adapter.stop()


async def test_attachments_and_styles(fake_signal: FakeSignal) -> None:
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        photo = fake_signal.add_attachment(b"\x89PNGdata", "image/png", "cat.png")
        note = fake_signal.add_attachment(b"aacdata", "audio/aac")
        fake_signal.user_message(ANN, "look", attachments=[photo, note])
        await eventually(lambda: _true(len(inbox.messages) == 1))
        [msg] = inbox.messages
        image, voice = msg.attachments
        assert (image.kind, image.name, image.mime, image.size) == (
            "image",
            "cat.png",
            "image/png",
            8,
        )
        assert voice.kind == "voice"
        assert await adapter.fetch_attachment(image) == b"\x89PNGdata"
        receipt = await adapter.send_text(
            DeliveryContext(channel="signal", to=ANN), "🎉 **bold** and `code`"
        )
        [sent] = fake_signal.sent
        assert sent["text"] == "🎉 bold and code" and receipt.message_id == str(sent["timestamp"])
        assert sent["textStyle"] == ["3:4:BOLD", "12:4:MONOSPACE"]  # 🎉 is two UTF-16 units
        assert base64.b64encode(b"x")  # (the fake returns base64, as signal-cli does)
    finally:
        await adapter.stop()


async def test_send_errors_are_typed(fake_signal: FakeSignal) -> None:
    adapter = await started(fake_signal, Inbox())
    target = DeliveryContext(channel="signal", to=ANN)
    try:
        fake_signal.unregistered.add(ANN)
        with pytest.raises(TargetNotFound, match="not a Signal user"):
            await adapter.send_text(target, "x")
        fake_signal.unregistered.clear()
        fake_signal.fail_next(
            "send",
            200,
            {"error": {"code": -1, "message": "Failed to send to group: user is not a member"}},
        )
        with pytest.raises(TargetForbidden, match="not a member"):
            await adapter.send_text(DeliveryContext(channel="signal", to=f"group:{GROUP}"), "x")
        fake_signal.fail_next(
            "send",
            200,
            {
                "result": {
                    "timestamp": 1,
                    "results": [{"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": 7}],
                }
            },
        )
        with pytest.raises(RateLimited) as info:
            await adapter.send_text(target, "x")
        assert info.value.retry_after == 7
        fake_signal.fail_next("send", 502)
        with pytest.raises(RateLimited):
            await adapter.send_text(target, "x")
        fake_signal.fail_next("send", 500)
        with pytest.raises(ChannelUnavailable, match="HTTP 500"):
            await adapter.send_text(target, "x")
        assert fake_signal.sent == []
    finally:
        await adapter.stop()


async def test_unknown_account_fails_and_daemon_down_retries(fake_signal: FakeSignal) -> None:
    adapter = SignalAdapter(account(fake_signal, account="+19999999999"), "work")
    with pytest.raises(ChannelUnavailable, match="has no account"):
        await adapter.start(Inbox())
    assert adapter.status().state == "failed"
    down = SignalAdapter(account(fake_signal, httpUrl="http://127.0.0.1:9"), retry_initial=0.01)
    await down.start(Inbox())  # transient: retried in the background, not a failed start
    try:
        assert down.status().state == "retrying"
        target = DeliveryContext(channel="signal", to=ANN)
        with pytest.raises(ChannelUnavailable, match="unreachable"):
            await down.send_text(target, "x")
    finally:
        await down.stop()


async def test_watchdog_reconnects_a_silent_stream(fake_signal: FakeSignal) -> None:
    """A hung stream swallows what the daemon wrote to it; the reconnect asks for it again,
    even before any event gave us a cursor (then only what arrived since this start)."""
    old = fake_signal.user_message(ANN, "from before the start", timestamp=1_000_000)
    inbox = Inbox()
    adapter = await started(fake_signal, inbox)
    try:
        fake_signal.silent = True
        fake_signal.user_message(ANN, "lost in a hung stream")
        await fake_signal.wait_until(lambda: fake_signal.swallowed == 1)
        await adapter.restart_connection("silent for 61s")
        fake_signal.silent = False
        await has(inbox, "lost in a hung stream")
        assert [c.params["lastEventId"] for c in fake_signal.calls_for("events.connect")] == [
            None,
            "0",
        ]
        fake_signal.user_message(ANN, "next")
        await has(inbox, "lost in a hung stream", "next")
        assert old["envelope"]["dataMessage"]["message"] not in inbox.texts()
    finally:
        await adapter.stop()
