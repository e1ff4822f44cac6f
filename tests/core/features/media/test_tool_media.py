"""Tools and MCP servers return media with their result; the reply carries them (D78)."""

from __future__ import annotations

from typing import Any

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from core.api.testing import RecordingAdapter
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import REPO_ROOT, STDIO_COMMAND, TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call, tool_results

PDF = MediaItem(data=b"%PDF-1.4 fake", mime="application/pdf", name="report.pdf")


async def _report(env: Any, ctx: Any, args: Any) -> WithMedia:
    return WithMedia({"status": "ok"}, [PDF])


async def test_a_tools_file_goes_with_the_reply_once(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter()
    rt = await make_runtime(adapters=[adapter])
    rt.tools.register(ToolSpec("make_report", "Make the report.", ToolArgs, _report))
    fake_model.script(tool_call("make_report", {}), text("Your report is attached."))
    await adapter.say("report please", chat_id="u1", sender="u1")
    [item] = await adapter.wait_media(1, timeout=60)
    assert (item.name, item.mime, item.data) == ("report.pdf", "application/pdf", PDF.data)
    assert adapter.texts() == ["Your report is attached."]
    seen = tool_results(fake_model.requests[1])[-1]["content"]
    assert '"attached":true' in seen and "report.pdf" in seen
    [row] = await rt.store.list_deliveries()
    assert row.outcome == "delivered" and row.session_key is not None
    entry = await rt.store.get_session(row.session_key)
    assert entry is not None
    [reply] = [m for m in await rt.store.history(entry.session_id) if m.role == "assistant"][-1:]
    [part] = [p for p in reply.content if p["type"] == "attachment"]
    assert part["mediaId"] == item.id
    assert reply.to_wire()["content"][-1] == {
        "type": "attachment",
        "kind": "file",
        "name": "report.pdf",
        "mime": "application/pdf",
        "size": len(PDF.data),
    }
    assert len(adapter.media) == 1


async def test_an_mcp_image_goes_with_the_reply(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    server = {
        "command": STDIO_COMMAND[0],
        "args": STDIO_COMMAND[1:],
        "env": {"PYTHONPATH": REPO_ROOT},
        "timeoutSeconds": 15,
    }
    adapter = RecordingAdapter()
    # the sender is no owner, and D63's defaults keep MCP tools from non-owners: lifted here
    config = {"mcp": {"servers": {"calc": server}}, "tools": {"bySender": []}}
    await make_runtime(config, adapters=[adapter])
    fake_model.script(tool_call("calc__chart", {}), text("Chart above."))
    await adapter.say("chart", chat_id="u1", sender="u1")
    [item] = await adapter.wait_media(1, timeout=60)
    assert (item.mime, item.data, item.kind) == ("image/png", TINY_PNG, "image")
    seen = tool_results(fake_model.requests[1])[-1]["content"]
    assert "here is the chart" in seen and "attached to the reply" in seen
