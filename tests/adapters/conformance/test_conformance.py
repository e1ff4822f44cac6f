"""Channel-adapter conformance: the same behaviour on Telegram, Discord, Slack and the web chat.

Each test runs once per platform (the ``driver`` fixture, see ``drivers.py``): a real runtime,
the real adapter on its real client library, the platform's loopback fake and the fake model,
whose default reply is ``"echo: <last user text>"``. A platform without a capability a test
needs is skipped with the reason. Waits always have deadlines; "no reply" is shown by the
transcript (the message is stored with a ``noRun`` reason), never by sleeping.
"""

from __future__ import annotations

import asyncio
import re
from typing import TypeVar

import pytest

from core.runtime import Runtime
from core.store import DeliveryRecord, SessionEntry, TranscriptMessage
from tests.adapters.conformance.checks import require, user_messages
from tests.adapters.conformance.drivers import OWNER, STRANGER, Driver, FakeDriver, Reply
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

PER_PEER = {"session": {"dmScope": "per-channel-peer"}}  # owner and stranger: separate sessions
T = TypeVar("T")


# -- helpers -------------------------------------------------------------------------------


def no_streaming(driver: Driver) -> dict[str, object]:
    """Config without live previews: the reply is the first message the platform gets."""
    return {"channels": {driver.channel: {"streaming": "off"}}}


async def stored(rt: Runtime, said: str) -> tuple[SessionEntry, TranscriptMessage]:
    """The session and transcript message of a user message, once it has been stored."""

    async def find() -> tuple[SessionEntry, TranscriptMessage] | None:
        return next(((e, m) for e, m in await user_messages(rt) if m.plain_text() == said), None)

    return await eventually(find)


async def deliveries(
    rt: Runtime, outcome: str | None = None, count: int = 1
) -> list[DeliveryRecord]:
    """Delivery-log rows, once there are ``count`` (a row is written after the platform send)."""

    async def rows() -> list[DeliveryRecord] | None:
        found = await rt.store.list_deliveries(outcome=outcome)
        return found if len(found) >= count else None

    return await eventually(rows)


def assert_split(chunks: list[str], whole: str, limit: int) -> None:
    """Every chunk fits, and the chunks are ``whole`` in order, cut only at whitespace.

    Markdown rendering drops spaces at line ends (they are not visible), so those are ignored.
    """
    assert all(len(c) <= limit for c in chunks), [len(c) for c in chunks]
    chunks = [re.sub(r"[ \t]+\n", "\n", c) for c in chunks]
    whole = re.sub(r"[ \t]+\n", "\n", whole)
    pos = 0
    for chunk in chunks:
        found = whole.find(chunk, pos)
        assert found >= 0 and not whole[pos:found].strip(), f"text lost before {chunk[:40]!r}"
        pos = found + len(chunk)
    assert not whole[pos:].strip(), "text lost at the end"


# -- tests ---------------------------------------------------------------------------------


async def test_dm_round_trip(driver: Driver, make_runtime: RuntimeFactory) -> None:
    await driver.start(make_runtime)
    sent = await driver.dm("hello there")
    [reply] = await driver.wait_replies(1)
    assert reply.text == "echo: hello there"
    assert reply.place == (sent.chat, None)


async def test_group_needs_mention(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "group", "mention")
    rt = await driver.start(make_runtime)
    quiet = await driver.group("just chatting", mentioned=False)
    loud = await driver.group("ping", mentioned=True)
    assert loud.text != "ping" and loud.text.endswith("ping")  # the mention is in the text
    [reply] = await driver.wait_replies(1)
    assert reply.text == f"echo: {loud.text}"
    assert reply.place == loud.place
    quiet_entry, quiet_msg = await stored(rt, quiet.text)
    assert (quiet_msg.meta or {}).get("noRun") == "not addressed to the bot"
    loud_entry, loud_msg = await stored(rt, loud.text)
    assert "noRun" not in (loud_msg.meta or {})
    assert quiet_entry.key == loud_entry.key and quiet_entry.chat_type != "direct"
    assert driver.replies() == [reply]


async def test_thread_reply_lands_in_thread(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "thread")
    rt = await driver.start(make_runtime)
    sent = await driver.thread("in thread")
    assert sent.thread is not None
    [reply] = await driver.wait_replies(1)
    assert reply.text == f"echo: {sent.text}"
    assert reply.place == sent.place
    entry, _ = await stored(rt, sent.text)
    assert entry.last_thread_id == sent.thread
    assert entry.last_to == driver.address(reply)


async def test_own_and_bot_messages_ignored(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "self")
    rt = await driver.start(make_runtime)
    await driver.own_message("from myself")
    await driver.own_message("from another bot", other_bot=True)
    await driver.dm("real one")
    [first] = await driver.wait_replies(1)
    assert first.text == "echo: real one"
    # a second round trip: everything before it (incl. the bot's echoed reply) has been handled
    await driver.dm("again")
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["echo: real one", "echo: again"]
    assert [m.plain_text() for _, m in await user_messages(rt)] == ["real one", "again"]


async def test_long_reply_is_split_without_loss(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    await driver.start(make_runtime, {"gateway": {"maxReplyChars": 1_000_000}})  # D142's cut apart
    limit = driver.text_limit
    lines: list[str] = []
    size = 0
    while size <= 2 * limit + limit // 2:  # three chunks or more, cut at line ends
        lines.append(f"line {len(lines):05d} " + "lorem ipsum dolor sit amet " * 3)
        size += len(lines[-1]) + 1
    long = "\n".join(lines)
    fake_model.script(text(long, chunks=[long[i : i + 4000] for i in range(0, len(long), 4000)]))
    sent = await driver.dm("tell me a lot")
    await driver.wait_replies(3, timeout=10)
    await deliveries(driver.rt, "delivered")  # written once every chunk has been sent
    replies = driver.replies()
    assert all(r.place == (sent.chat, None) for r in replies)
    assert_split([r.text for r in replies], long, limit)


async def test_delivery_context_round_trip(driver: Driver, make_runtime: RuntimeFactory) -> None:
    rt = await driver.start(make_runtime)
    await driver.dm("where am I?")
    [reply] = await driver.wait_replies(1)
    entry, _ = await stored(rt, "where am I?")
    listed = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, rt.services.context_for(entry))
    [row] = [r for r in listed["sessions"] if r["sessionId"] == entry.session_id]
    assert row["channel"] == driver.channel
    assert row["deliveryContext"] == {
        "channel": driver.channel,
        "to": driver.address(reply),
        "accountId": "default",
    }
    [log] = await deliveries(rt, "delivered")
    assert (log.channel, log.to, log.session_key) == (
        driver.channel,
        driver.address(reply),
        entry.key,
    )


async def test_rate_limited_send_is_retried(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "rate_limit")
    rt = await driver.start(make_runtime, no_streaming(driver))  # the refusal hits the reply
    driver.fail_next_send("rate_limit")
    await driver.dm("busy?")
    [reply] = await driver.wait_replies(1)
    assert reply.text == "echo: busy?"
    [row] = await deliveries(rt, "delivered")
    assert row.attempts == 2
    assert (row.channel, row.to) == (driver.channel, driver.address(reply))
    assert not await rt.store.list_deliveries(outcome="failed")


async def test_forbidden_send_is_recorded_as_failed(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    require(driver, "forbidden")
    rt = await driver.start(make_runtime, no_streaming(driver))
    driver.fail_next_send("forbidden")
    sent = await driver.dm("are you blocked?")
    [row] = await deliveries(rt, "failed")
    assert "TargetForbidden" in (row.reason or ""), row.reason
    assert row.channel == driver.channel and row.text == "echo: are you blocked?"
    assert row.attempts == 1  # not retried
    # the refusal was one-shot: the next reply goes through, the refused one never does
    await driver.dm("still there?")
    replies = await driver.wait_replies(1)
    assert [r.text for r in replies] == ["echo: still there?"]
    assert row.to == driver.address(replies[0]) and replies[0].chat == sent.chat


async def test_unavailable_platform_is_retried_or_failed_visibly(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    """One 503 on a send: retried by the gate where the platform says the request was not
    processed, else recorded `failed` with its reason (never silently lost, never doubled)."""
    require(driver, "server_error")
    rt = await driver.start(make_runtime, no_streaming(driver))
    driver.fail_next_send("server_error")
    await driver.dm("anyone home?")
    if driver.server_error == "retried":  # after the gate's backoff (D142): a longer deadline
        [reply] = await driver.wait_replies(1, timeout=30)
        assert reply.text == "echo: anyone home?"
        [row] = await deliveries(rt, "delivered")
        assert row.attempts == 2
    else:
        [row] = await deliveries(rt, "failed")
        assert "503" in (row.reason or "") or "Unavailable" in (row.reason or ""), row.reason
        assert row.text == "echo: anyone home?"
    await driver.dm("and now?")
    replies = await driver.wait_replies(2 if driver.server_error == "retried" else 1)
    assert [r.text for r in replies].count("echo: anyone home?") == (
        1 if driver.server_error == "retried" else 0
    )
    assert replies[-1].text == "echo: and now?"


async def test_send_off_by_owner_silences_but_stores(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    rt = await driver.start(make_runtime, PER_PEER)
    sent = await driver.dm("/send off")
    [off] = await driver.wait_replies(1)
    assert off.text == "⚙️ Send policy set to off."
    assert off.chat == sent.chat
    await driver.dm("anyone there?")
    _, silent = await stored(rt, "anyone there?")
    assert "send policy" in str((silent.meta or {}).get("noRun"))
    await driver.dm("/send on")
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["⚙️ Send policy set to off.", "⚙️ Send policy set to on."]
    assert [r.kind for r in await deliveries(rt, count=2)] == ["command_reply"] * 2


async def test_send_off_by_non_owner_is_refused(
    driver: Driver, make_runtime: RuntimeFactory
) -> None:
    require(driver, "strangers")
    open_dms = {"channels": {driver.channel: {"dmPolicy": "open"}}}  # admitted, not an owner
    await driver.start(make_runtime, {**PER_PEER, **open_dms})
    sent = await driver.dm("/send off", user=STRANGER)
    [refused] = await driver.wait_replies(1)
    assert refused.text == "⚙️ /send is owner-only."
    assert refused.place == (sent.chat, None)
    # the policy did not change: the owner (in a separate session) still gets replies
    owner = await driver.dm("still on?", user=OWNER)
    replies = await driver.wait_replies(2)
    assert replies[1] == Reply("echo: still on?", owner.chat)
    assert owner.chat != sent.chat


# -- formatting and live feedback ----------------------------------------------------------

MARKDOWN_REPLY = (
    "# Plan\n\nThis is **bold**, *italic* and `a<b>` with [docs](https://example.com/docs).\n\n"
    "```python\nprint('hi')\n```\n\n<b>not bold</b> &amp; <!channel> @everyone"
)


async def test_markdown_reply_is_formatted(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    await driver.start(make_runtime)
    fake_model.script(text(MARKDOWN_REPLY))
    await driver.dm("format something")
    [reply] = await driver.wait_replies(1)
    seen = driver.features(0)
    assert {("bold", "Plan"), ("bold", "bold"), ("italic", "italic"), ("code", "a<b>")} <= seen, (
        seen
    )
    if driver.links_inline:  # no link markup: the text, then the URL the app makes a link
        assert "docs (https://example.com/docs)" in reply.text, reply.text
        assert ("url", "https://example.com/docs") in seen, seen
    else:
        assert ("link", "docs", "https://example.com/docs") in seen, seen
    assert any(f[:2] == ("pre", "print('hi')") for f in seen), seen
    # raw HTML is text: visible as written, never turned into formatting
    assert "<b>not bold</b>" in reply.text
    assert not any(f[1] == "not bold" for f in seen)
    if driver.platform in ("telegram", "slack", "whatsapp", "signal"):  # no markup shows
        assert "**" not in reply.text and "# Plan" not in reply.text, reply.text


async def test_streamed_reply_is_one_message_edited_in_place(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    require(driver, "preview")
    assert isinstance(driver, FakeDriver)
    rt = await driver.start(make_runtime)
    rt.live.typing_interval = 0.05  # renewals show up quickly (Telegram's real cadence is 4 s)
    fake_model.script(
        text(
            "Hello **world**, and then some more words.",
            chunks=["Hello ", "**world**", ", and then", " some more words."],
            pause_after=2,
        )
    )
    await driver.dm("stream please")
    await asyncio.wait_for(fake_model.paused.wait(), 5)
    [preview] = await driver.wait_visible(1)  # on screen while the model is still writing
    assert preview.text.startswith("Hello")
    if "typing" in driver.supports:
        await driver.wait_typing(2)  # renewed while the run is active
    fake_model.resume()
    [final] = await driver.wait_replies(1)
    assert driver.edits() >= 1  # the preview message became the reply: no second message
    assert ("bold", "world") in driver.features(0)
    assert "then some more words." in final.text
    assert driver.typing_after_last_edit() == 0  # typing stopped when the run ended


async def test_streaming_off_sends_only_the_final_reply(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    require(driver, "preview")
    assert isinstance(driver, FakeDriver)
    await driver.start(make_runtime, no_streaming(driver))
    fake_model.script(text("one two three four"))
    await driver.dm("no preview")
    [reply] = await driver.wait_replies(1)
    assert reply.text == "one two three four"
    assert driver.edits() == 0


async def test_denied_session_gets_no_preview_and_no_typing(
    driver: Driver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    require(driver, "preview")
    assert isinstance(driver, FakeDriver)
    rt = await driver.start(make_runtime)
    rt.live.typing_interval = 0.05
    fake_model.script(text("secret partial words", pause_after=0))  # no text streamed yet
    await driver.dm("hold on")
    await asyncio.wait_for(fake_model.paused.wait(), 5)
    entry, _ = await stored(rt, "hold on")
    await rt.store.update_session(entry.key, send_policy="deny")  # the owner said /send off
    # a renewal whose policy check came before the update may still be on the wire: read the
    # count once the gate has refused a renewal (each renewal finishes before the next starts)
    refused_before = rt.live.refused

    async def renewal_refused() -> bool:
        return rt.live.refused > refused_before

    await eventually(renewal_refused, timeout=5, what="a typing renewal refused")
    typing_then = driver.typing_count()
    fake_model.resume()
    [row] = await deliveries(rt, "suppressed_by_policy")
    assert row.kind == "reply"
    assert driver.replies() == []  # no preview, no reply
    assert driver.typing_count() == typing_then
