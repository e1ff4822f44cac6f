"""Counts of decision D16 where the owner looks: `/healthz`, `crosstalk channels status` and
`crosstalk deliveries --outcome failed` (the real CLI in a child process)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.model.errors import TargetForbidden
from tests.cli import crosstalk
from tests.conftest import RuntimeFactory
from tests.polling import eventually


async def test_duplicates_and_failed_deliveries_are_counted(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    rt = await make_runtime(adapters=[adapter])
    msg = adapter.message("hello", chat_id="c1").model_copy(update={"identities": ("msg:c1:1",)})
    await adapter.inject(msg)
    await adapter.wait_sent(1, timeout=20)
    await adapter.inject(msg)  # redelivered: dropped before any run or reply
    adapter.failures = [TargetForbidden("bot was removed from the chat")]
    await adapter.inject(
        adapter.message("again", chat_id="c1").model_copy(update={"identities": ("msg:c1:2",)})
    )

    async def failed() -> bool:
        return bool(await rt.store.list_deliveries(outcome="failed"))

    await eventually(failed)
    assert adapter.texts() == ["echo: hello"]
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        resp = await c.get("/healthz", headers={"Authorization": "Bearer test-token"})
        [entry] = [e for e in (await resp.json())["channels"] if e["channel"] == "testchat"]
        assert entry["duplicatesDropped"] == 1 and entry["deliveriesFailed"] == 1
        assert "lastReceiveAt" in entry
        resp = await c.get(
            "/api/deliveries?outcome=failed", headers={"Authorization": "Bearer test-token"}
        )
        [failed_row] = (await resp.json())["deliveries"]
        assert failed_row["chunks"] == [
            {
                "index": 0,
                "state": "failed",
                "platformMessageId": None,
                "reason": "TargetForbidden: bot was removed from the chat",
            }
        ]
        url = str(c.make_url("/")).rstrip("/")
        code, out, err = await crosstalk(
            "channels", "status", "--url", url, "--token", "test-token"
        )
        assert code == 0, err
        [line] = [ln for ln in out.splitlines() if ln.startswith("testchat/default:")]
        assert line.startswith("testchat/default: connected")
        assert line.endswith("duplicatesDropped=1 deliveriesFailed=1")
        code, out, err = await crosstalk(
            "deliveries", "--outcome", "failed", "--url", url, "--token", "test-token"
        )
        assert code == 0, err
        [row] = out.splitlines()
        assert " failed " in row and "TargetForbidden: bot was removed from the chat" in row
        assert "testchat:c1" in row
