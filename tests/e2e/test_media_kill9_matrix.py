"""A tool's image on Matrix across a kill -9 (D78, D158, D16): a real gateway process, the
session's real Synapse behind the recording proxy, and the owner's end-to-end encrypted DM. The
proxy forwards the image's event to Synapse and holds the answer; the process is SIGKILLed
before the receipt. After the restart the item is uploaded again but sent with the chunk's
transaction id, so Synapse answers with the event it already has: the owner's client shows the
image once, and the delivery is `delivered`."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import DeliveryRecord, Store
from tests.adapters.conformance.driver_matrix import MatrixDriver
from tests.e2e.chart_gateway import REPLY, chart_config
from tests.fakes.matrix_people import media_of
from tests.fakes.matrix_proxy import MatrixProxy
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.gateway_process import GatewayProcess
from tests.polling import eventually


@pytest.mark.timeout(300)
async def test_a_tools_image_on_matrix_is_shown_once_across_a_kill_minus_nine(
    fake_matrix: MatrixProxy, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    driver = MatrixDriver(fake_matrix, tmp_path / "people")
    matrix = driver.config()["channels"]["matrix"]
    channel = (
        "channels:\n  matrix:\n    streaming: 'off'\n"
        f"    homeserver: {matrix['homeserver']}\n    userId: '{matrix['userId']}'\n"
        f"    password: '{matrix['password']}'\n    owners: ['{driver.owner_id}']\n"
    )
    cfg = chart_config(tmp_path, fake_model, channel)
    fake_model.script(tool_call("calc__chart", {}), text(REPLY))
    store = Store(f"sqlite+aiosqlite:///{tmp_path / 'state'}/crosstalk.db", tmp_path)
    try:
        fake_matrix.hold_next("sendMedia")
        async with GatewayProcess(cfg) as gw:
            await driver.dm("the chart, please")
            await fake_matrix.wait_until(lambda: "sendMedia" in fake_matrix.held, 120)
            await gw.kill()
        async with GatewayProcess(cfg):

            async def settled() -> DeliveryRecord | None:
                rows = await store.list_deliveries()
                done = [d for d in rows if d.outcome != "pending"]
                return done[0] if rows and len(done) == len(rows) else None

            row = await eventually(settled, 90, "matrix: the in-doubt image settled")
            assert row.outcome == "delivered", row.reason

            async def shown() -> list[bytes] | None:
                found = await media_of(driver.replies_seen(), driver.people)
                return [data for _, data, _ in found] or None

            assert await eventually(shown, 30, "the image in the owner's client") == [TINY_PNG]
            uploads = [c for c in fake_matrix.calls if c.path.startswith("/_matrix/media/v3/up")]
            assert len(uploads) == 2  # uploaded again, but the event is the one Synapse has
            [delivery] = await store.list_deliveries()
            assert delivery.id is not None
            chunks = (await store.chunks_of([delivery.id]))[delivery.id]
            assert [c.state for c in chunks] == ["sent", "sent"]
        assert [r.text for r in driver.replies()].count(REPLY) == 1
        assert len(await media_of(driver.replies_seen(), driver.people)) == 1
    finally:
        await store.close()
        await driver.close()
