"""The channel example in docs/PLUGINS.md works as printed: its spec validates the YAML block,
and the adapter built the registry's way takes a message in and sends a reply out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from core.api.channels import ChannelAdapter, ChannelEnv, ChannelSpec, DeliveryContext, HttpMounted
from core.edge.http.appkeys import SECRET
from core.model.inbound import InboundMessage

DOC = Path(__file__).resolve().parents[4] / "docs" / "PLUGINS.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


async def test_channel_example_runs_as_printed() -> None:
    namespace: dict[str, Any] = {}
    for source in [b for b in blocks("python") if "ChannelSpec" in b or "ChannelAdapter" in b]:
        exec(compile(source, str(DOC), "exec"), namespace)
    spec: ChannelSpec = namespace["SPEC"]
    [section] = [b for b in blocks("yaml") if b.startswith("channels:")]
    config = spec.config_model.model_validate(yaml.safe_load(section)["channels"]["loopback"])
    assert spec.adapter == "crosstalk_example.loopback:LoopbackAdapter"  # the next block
    adapter: ChannelAdapter = namespace["LoopbackAdapter"](config, "default", ChannelEnv())
    mounted = adapter
    assert isinstance(mounted, HttpMounted)
    inbox: list[InboundMessage] = []

    async def sink(msg: InboundMessage) -> None:
        inbox.append(msg)

    await adapter.start(sink)
    app = web.Application()
    app[SECRET] = "s3cret"
    mounted.mount(app)
    async with TestClient(TestServer(app)) as client:
        refused = await client.post("/loopback/in", json={"from": "ann", "text": "hi"})
        assert refused.status == 401
        accepted = await client.post(
            "/loopback/in",
            json={"from": "ann", "text": "hi"},
            headers={"Authorization": "Bearer s3cret"},
        )
        assert accepted.status == 202
    [msg] = inbox
    assert (msg.channel, msg.sender_id, msg.text) == ("loopback", "ann", "hi")
    receipt = await adapter.send_text(msg.reply_to, "hello ann")
    assert receipt.message_id == "1"
    assert msg.reply_to == DeliveryContext(channel="loopback", to="ann")
