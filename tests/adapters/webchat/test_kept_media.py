"""A cron reply's image, kept while no tab was open, shows in a later tab's history as a live tab
showed it (D192); a tab that opens while it is sent shows it once (D190).

The cron job's turn calls a tool that returns an image (D151): its delivery is the reply's text
chunk, then the image's media chunk. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
from typing import Any

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from tests.adapters.webchat.steps import AUTH, Gateway, page_view, page_view_after
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call

LABEL = "⏰ cron job morning"
SAID = "Chart above."


async def _chart(env: Any, ctx: Any, args: Any) -> WithMedia:
    return WithMedia({"status": "drawn"}, [MediaItem(TINY_PNG, "image/png", "chart.png")])


def _with_a_chart(gateway: Gateway, fake_model: FakeModelServer) -> None:
    """The cron job's next turn draws a chart and says so."""
    gateway.rt.tools.register(ToolSpec("draw_chart", "Draw the chart.", ToolArgs, _chart))
    fake_model.script(tool_call("draw_chart", {}), text(SAID))


def images_shown(frames: list[dict[str, Any]]) -> list[str]:
    """The ids of the images the page shows: a history row's `media`, a `media` frame's item."""
    rows = [m for row in frames[0]["messages"] for m in row.get("media") or []]
    live = [f["media"] for f in frames[1:] if f["type"] == "media"]
    return [m["id"] for m in rows + live if m["kind"] == "image"]


async def test_a_cron_image_sent_while_no_tab_was_open_is_in_a_later_tabs_history(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    _with_a_chart(gateway, fake_model)
    await gateway.fire()
    await gateway.fired()  # delivered to no tab: kept (D136)
    async with gateway.ws() as ws:
        frames = await page_view(ws)
    [row] = frames[0]["messages"]
    [item] = row["media"]
    assert (row["text"], row["label"]) == (SAID, LABEL)  # the item's line is the item now
    assert item == {
        "id": item["id"],
        "kind": "image",
        "name": "chart.png",
        "mime": "image/png",
        "size": len(TINY_PNG),
    }
    assert images_shown(frames) == [item["id"]]
    url = gateway.server.make_url(f"/webchat/media/{item['id']}")
    async with gateway.http.get(url, headers=AUTH) as resp:
        assert resp.status == 200 and await resp.read() == TINY_PNG
    async with gateway.http.get(url) as resp:  # the gateway token, as for every item (D78)
        assert resp.status == 401


async def test_a_tab_opening_before_the_image_goes_out_shows_it_once(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    """The reply's text went out to no tab, its image is about to: the tab's history shows the
    delivery (open, D190) with its image, and the image's frame, which names the delivery, is
    dropped."""
    _with_a_chart(gateway, fake_model)
    image_sending = gateway.steps.hold("sending", 2)
    await gateway.fire()
    await image_sending.wait()
    async with gateway.ws() as ws:
        history = json.loads((await ws.receive(timeout=10)).data)
        assert history["type"] == "history"
        image_sending.released.set()
        await gateway.fired()
        frames = [history, *(await page_view_after(ws))]
    assert len(images_shown(frames)) == 1
    assert [m["text"] for m in frames[0]["messages"]] == [SAID]


async def test_an_image_sent_to_a_tab_still_opening_is_shown_once(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    """The opening tab took the reply's frames (held until its history goes out), then its
    history was read with the delivery in it: the history shows the image, the held frames are
    dropped."""
    _with_a_chart(gateway, fake_model)
    registered = gateway.steps.hold("registered")
    image_sent = gateway.steps.hold("sent", 2)
    async with gateway.ws() as ws:
        await registered.wait()
        await gateway.fire()
        await image_sent.wait()  # both frames went to the opening tab
        registered.released.set()
        image_sent.released.set()
        await gateway.fired()
        frames = await page_view(ws)
    assert len(images_shown(frames)) == 1
    assert [(m["text"], m["label"]) for m in frames[0]["messages"]] == [(SAID, LABEL)]
    assert [f for f in frames[1:] if f["type"] in ("message", "media")] == []


async def test_a_tab_whose_history_came_before_the_reply_gets_the_image_live_once(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    _with_a_chart(gateway, fake_model)
    async with gateway.ws() as ws:
        assert json.loads((await ws.receive(timeout=10)).data)["messages"] == []
        await gateway.fire()
        await gateway.fired()
        live = await page_view_after(ws)
    [media] = [f for f in live if f["type"] == "media"]
    assert (media["label"], media["media"]["name"]) == (LABEL, "chart.png")
    assert len(images_shown([{"messages": []}, *live])) == 1
