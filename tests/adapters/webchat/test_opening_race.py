"""A reply sent while a page opens is shown once (D190): in the history frame, which is always the
first frame, or as a live frame after it; never both, never neither.

Each test pins one interleaving of a tab's opening (its socket registered, its history read, its
history sent) and a reply's send (its frame broadcast, its delivery's outcome written) by holding
a step of the adapter's step hook, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
from typing import Any

from tests.adapters.webchat.steps import CRON_REPLY, WS, Gateway, page_view, page_view_after
from tests.fakes.model import FakeModelServer, error


def times_shown(frames: list[dict[str, Any]], text: str) -> int:
    """How many times the page shows `text`: history rows and message frames (a run's frames
    fill that run's one bubble: counted once)."""
    rows = [m for m in frames[0]["messages"] if m["role"] == "assistant" and m["text"] == text]
    live = [f for f in frames[1:] if f["type"] == "message" and f["text"] == text]
    runs = {m.get("runId") for m in rows + live if m.get("runId")}
    return len([m for m in rows + live if not m.get("runId")]) + len(runs)


async def test_a_reply_sent_before_the_tab_opened_and_logged_after_its_read_is_in_its_history(
    gateway: Gateway,
) -> None:
    """The kept reply went out to no tab; the history read comes before its outcome is written."""
    sent = gateway.steps.hold("sent")
    await gateway.fire()
    await sent.wait()  # broadcast to nobody; its delivery is still `pending`
    async with gateway.ws() as ws:
        history = json.loads((await ws.receive(timeout=10)).data)
        assert history["type"] == "history"
        assert [m["text"] for m in history["messages"]] == [CRON_REPLY]
        sent.released.set()
        await gateway.fired()
        assert times_shown([history, *(await page_view_after(ws))], CRON_REPLY) == 1


async def test_a_reply_sent_and_logged_before_the_history_read_comes_once(
    gateway: Gateway,
) -> None:
    """The tab takes live frames, then the whole delivery happens, then its history is read: the
    history shows the reply and its live frame is dropped."""
    registered = gateway.steps.hold("registered")
    async with gateway.ws() as ws:
        await registered.wait()
        await gateway.fire()
        await gateway.fired()
        registered.released.set()
        frames = await page_view(ws)
        assert times_shown(frames, CRON_REPLY) == 1
        assert [m["text"] for m in frames[0]["messages"]] == [CRON_REPLY]


async def test_a_reply_sent_before_the_history_read_and_logged_after_it_comes_once(
    gateway: Gateway,
) -> None:
    """The frame reaches the opening tab, the history is read while the delivery is `pending`."""
    registered = gateway.steps.hold("registered")
    sent = gateway.steps.hold("sent")
    read = gateway.steps.hold("read")
    async with gateway.ws() as ws:
        await registered.wait()
        await gateway.fire()
        await sent.wait()  # the frame went to the opening tab
        registered.released.set()
        await read.wait()  # the history was read while the delivery was `pending`
        sent.released.set()
        await gateway.fired()
        read.released.set()
        frames = await page_view(ws)
        assert times_shown(frames, CRON_REPLY) == 1


async def test_a_reply_sent_after_the_history_read_comes_after_the_history(
    gateway: Gateway,
) -> None:
    """The history is read without the reply; the reply goes out before the history frame."""
    read = gateway.steps.hold("read")
    async with gateway.ws() as ws:
        await read.wait()
        await gateway.fire()
        await gateway.fired()
        read.released.set()
        frames = await page_view(ws)
        assert frames[0]["messages"] == []
        assert times_shown(frames, CRON_REPLY) == 1
        assert frames[1]["label"] == "⏰ cron job morning"


async def test_an_agent_reply_sent_while_a_second_tab_opens_comes_after_its_history(
    gateway: Gateway,
) -> None:
    """Ordinary replies (the transcript's): the second tab's history is read before the turn, its
    reply is sent before the history frame goes out."""
    second_read = gateway.steps.hold("read", 2)
    async with gateway.ws() as first:
        assert json.loads((await first.receive(timeout=10)).data)["type"] == "history"
        second = await gateway.http.ws_connect(gateway.server.make_url(WS))
        await second_read.wait()
        sent = gateway.steps.hold("sent")
        await first.send_json({"type": "message", "text": "hello"})
        await sent.wait()  # the reply went to both tabs' sockets
        sent.released.set()
        second_read.released.set()
        frames = await page_view(second)
        await second.close()
        assert times_shown(frames, "echo: hello") == 1


async def test_a_reply_the_history_shows_is_not_sent_to_the_tab_again_later(
    gateway: Gateway,
) -> None:
    """The delivery is open (so the history shows it) but its frame goes out after the tab opened:
    the frame is dropped, as a frame relayed late from another process is (D28)."""
    sending = gateway.steps.hold("sending")
    await gateway.fire()
    await sending.wait()
    async with gateway.ws() as ws:
        history = json.loads((await ws.receive(timeout=10)).data)
        assert [m["text"] for m in history["messages"]] == [CRON_REPLY]
        sending.released.set()
        await gateway.fired()
        assert times_shown([history, *(await page_view_after(ws))], CRON_REPLY) == 1


async def test_a_failed_turns_notice_is_not_sent_to_a_tab_whose_history_shows_its_outcome(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    """The turn failed; a second tab opens before its notice goes out: the history shows the
    turn's outcome, and the notice frame (which names its turn, `endOf`) is dropped."""
    async with gateway.ws() as first:
        assert json.loads((await first.receive(timeout=10)).data)["type"] == "history"
        sending = gateway.steps.hold("sending")
        fake_model.script(error(400, "the model refused"))
        await first.send_json({"type": "message", "text": "hello"})
        await sending.wait()  # the turn ended; its notice's delivery is open
        async with gateway.ws() as second:
            history = json.loads((await second.receive(timeout=10)).data)
            [(said, outcome)] = [(m["text"], m.get("outcome")) for m in history["messages"]]
            assert said == "hello" and outcome["kind"] == "error"
            sending.released.set()
            while (frame := json.loads((await first.receive(timeout=10)).data))["type"] != (
                "message"
            ):
                pass
            assert frame["text"] == outcome["text"]  # the first tab got the notice
            later = await page_view_after(second)
            assert [f for f in later if f.get("text") == outcome["text"]] == []
