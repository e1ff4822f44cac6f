"""A message typed in one tab of the web chat reaches the chat's other open tabs at once (D191):
once, as the row their history would show, before its reply; never back to the tab it was typed
in; once in a tab that opens while it is being sent, whichever way its opening and the message's
store interleave (pinned with the adapter's step hook), on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aiohttp

from tests.adapters.webchat.steps import Gateway, page_view, page_view_after

Frame = dict[str, Any]


async def opened(gateway: Gateway) -> aiohttp.ClientWebSocketResponse:
    """A tab whose history frame has come."""
    ws: aiohttp.ClientWebSocketResponse = await gateway.ws()
    assert json.loads((await ws.receive(timeout=10)).data)["type"] == "history"
    return ws


async def until(ws: aiohttp.ClientWebSocketResponse, done: Callable[[Frame], bool]) -> list[Frame]:
    """The frames the tab gets, up to the first `done` one."""
    frames = []
    while True:
        frames.append(frame := json.loads((await ws.receive(timeout=10)).data))
        if done(frame):
            return frames


def reply_to(text: str) -> Callable[[Frame], bool]:
    return lambda f: f["type"] == "message" and f["text"] == f"echo: {text}"


def typed(frames: list[Frame], text: str) -> list[Frame]:
    """The `user` frames of `text` among `frames`."""
    return [f for f in frames if f["type"] == "user" and f["text"] == text]


async def opened_history(gateway: Gateway) -> list[Frame]:
    """The rows of the history frame a tab opening now gets."""
    async with gateway.ws() as ws:
        history: list[Frame] = json.loads((await ws.receive(timeout=10)).data)["messages"]
        return history


def first_of_turn(frames: list[Frame]) -> int:
    """Where the turn's first frame (a delta, the reply) is among `frames`."""
    return min(i for i, f in enumerate(frames) if f.get("runId") and f["type"] != "user")


def times_said(frames: list[Frame], text: str) -> int:
    """How many times a page shows the user's `text`: its history rows and `user` frames."""
    rows = [m for m in frames[0]["messages"] if m["role"] == "user" and m["text"] == text]
    return len(rows) + len(typed(frames[1:], text))


async def test_a_message_reaches_the_other_tab_once_before_its_reply_and_not_its_own(
    gateway: Gateway,
) -> None:
    a, b = await opened(gateway), await opened(gateway)
    await a.send_json({"type": "message", "text": "hello", "clientId": "c-1"})
    on_b = await until(b, reply_to("hello"))
    [frame] = typed(on_b, "hello")
    assert on_b.index(frame) < first_of_turn(on_b)
    on_a = [*(await until(a, reply_to("hello"))), *(await page_view_after(a))]
    assert typed(on_a, "hello") == [], "the tab it was typed in got it back"
    # the frame is the row a tab opening now loads from the history
    later = await opened_history(gateway)
    [row] = [m for m in later if m["role"] == "user"]
    assert {k: v for k, v in frame.items() if k != "type"} == row
    assert typed(await page_view_after(b), "hello") == []  # and it came once
    for ws in (a, b):
        await ws.close()


async def test_two_tabs_each_see_the_others_message_and_never_their_own(
    gateway: Gateway,
) -> None:
    a, b = await opened(gateway), await opened(gateway)
    await a.send_json({"type": "message", "text": "from a"})
    on_a = await until(a, reply_to("from a"))
    await b.send_json({"type": "message", "text": "from b"})
    on_b = await until(b, reply_to("from b"))
    on_a += await until(a, reply_to("from b"))
    on_a += await page_view_after(a)
    on_b += await page_view_after(b)
    assert [f["text"] for f in on_a if f["type"] == "user"] == ["from b"]
    assert [f["text"] for f in on_b if f["type"] == "user"] == ["from a"]
    for ws in (a, b):
        await ws.close()


async def test_the_reply_waits_behind_the_message_it_answers(gateway: Gateway) -> None:
    """The turn's reply is ready while the message's frame is still held (stored, not yet sent):
    the other tab still gets the message first."""
    a, b = await opened(gateway), await opened(gateway)
    stored, sent = gateway.steps.hold("stored"), gateway.steps.hold("sent")
    await a.send_json({"type": "message", "text": "hello"})
    await stored.wait()  # the message is stored; its frame is held here
    await sent.wait()  # meanwhile its turn ended and the reply was handed over
    sent.released.set()
    stored.released.set()
    on_b = await until(b, reply_to("hello"))
    assert on_b[0]["type"] == "user" and on_b[0]["text"] == "hello", on_b
    for ws in (a, b):
        await ws.close()


async def test_a_tab_opening_after_the_store_before_the_frame_shows_it_once(
    gateway: Gateway,
) -> None:
    """The new tab's history shows the message; its frame, sent after, is dropped there."""
    a, b = await opened(gateway), await opened(gateway)
    stored = gateway.steps.hold("stored")
    await a.send_json({"type": "message", "text": "hello"})
    await stored.wait()
    async with gateway.ws() as c:
        history = json.loads((await c.receive(timeout=10)).data)
        stored.released.set()
        assert len(typed(await until(b, reply_to("hello")), "hello")) == 1
        assert times_said([history, *(await page_view_after(c))], "hello") == 1
    for ws in (a, b):
        await ws.close()


async def test_a_tab_whose_history_was_read_before_the_message_gets_it_after(
    gateway: Gateway,
) -> None:
    """The third tab's history is read, then the message is stored and sent: it comes live, once,
    after the history frame and before the reply."""
    a, b = await opened(gateway), await opened(gateway)
    read = gateway.steps.hold("read", 3)
    c = await gateway.ws()
    await read.wait()
    await a.send_json({"type": "message", "text": "hello"})
    await until(a, reply_to("hello"))
    read.released.set()
    frames = await page_view(c)
    assert times_said(frames, "hello") == 1
    [frame] = typed(frames, "hello")
    assert frames.index(frame) < first_of_turn(frames)
    assert len(typed(await until(b, reply_to("hello")), "hello")) == 1
    for ws in (a, b, c):
        await ws.close()


async def test_a_tab_registered_before_the_message_and_read_after_it_shows_it_once(
    gateway: Gateway,
) -> None:
    """The third tab takes live frames (held), then the whole send happens, then its history is
    read: the history shows the message and the held frame is dropped."""
    a, b = await opened(gateway), await opened(gateway)
    registered = gateway.steps.hold("registered", 3)
    c = await gateway.ws()
    await registered.wait()
    await a.send_json({"type": "message", "text": "hello"})
    assert len(typed(await until(b, reply_to("hello")), "hello")) == 1
    registered.released.set()
    frames = await page_view(c)
    assert times_said(frames, "hello") == 1
    assert typed(frames, "hello") == []
    for ws in (a, b, c):
        await ws.close()
