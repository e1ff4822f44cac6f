"""Media out on Matrix (D78, D158) against the session's real Synapse: a tool's image leaves
with the reply in the encrypted DM as an encrypted upload and an `m.image` naming it with its
caption, once; a person's client downloads and decrypts the very bytes. And the offline voice
round trip: an Element voice message (`m.audio` marked `org.matrix.msc3245.voice`, encrypted)
is heard by pocketsphinx, and the spoken reply comes back as a voice message."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nio import UploadResponse

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from tests.adapters.conformance.driver_matrix import MatrixDriver
from tests.adapters.conformance.drivers import OWNER
from tests.adapters.matrix.wire import sent_to
from tests.conftest import RuntimeFactory
from tests.fakes.matrix_people import media_of
from tests.fakes.matrix_proxy import MatrixProxy
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.polling import eventually
from tests.speech import KEY_WORDS, spoken_ogg

PNG = MediaItem(data=TINY_PNG, mime="image/png", name="chart.png", caption="Q3 sales")
VOICE = {"voice": {"stt": {"provider": "local"}, "tts": {"provider": "local"}}}


@pytest.fixture
async def driver(fake_matrix: MatrixProxy, tmp_path: Path) -> AsyncIterator[MatrixDriver]:
    drv = MatrixDriver(fake_matrix, tmp_path / "people")
    yield drv
    await drv.close()


async def _chart(env: object, ctx: object, args: object) -> WithMedia:
    return WithMedia({"status": "drawn"}, [PNG])


async def _files(driver: MatrixDriver, count: int) -> list[tuple[str, bytes, dict[str, object]]]:
    async def enough() -> list[tuple[str, bytes, dict[str, object]]] | None:
        found = await media_of(driver.replies_seen(), driver.people)
        return found if len(found) >= count else None

    return await eventually(enough, 90, f"{count} files from the bot")


async def test_a_tools_image_arrives_once_encrypted_in_the_dm(
    driver: MatrixDriver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await driver.start(make_runtime, {"channels": {"matrix": {"streaming": "off"}}})
    rt.tools.register(ToolSpec("draw_chart", "Draw the chart.", ToolArgs, _chart))
    fake_model.script(tool_call("draw_chart", {}), text("Here is your chart."))
    await driver.dm("chart please")
    [(kind, data, content)] = await _files(driver, 1)
    assert (kind, data) == ("image", TINY_PNG)
    assert (content["body"], content["filename"]) == ("Q3 sales", "chart.png")
    assert content["info"] == {"mimetype": "image/png", "size": len(TINY_PNG)}
    assert "url" not in content and isinstance(content["file"], dict)  # the key rides inside
    room = driver.dms[OWNER]
    wire = sent_to(driver.proxy, room)
    assert all("ciphertext" in w and "body" not in w for w in wire)  # text and file event
    uploads = [c for c in driver.proxy.calls if c.path.startswith("/_matrix/media/v3/upload")]
    assert len(uploads) == 1
    texts = [r.text for r in await driver.wait_replies(2)]
    assert texts == ["Here is your chart.", "Q3 sales"]


async def test_matrix_voice_round_trip(
    driver: MatrixDriver, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    await driver.start(make_runtime, VOICE)
    await driver.dm("hello")
    await driver.wait_replies(1)
    owner = await driver.person(OWNER)
    clip = spoken_ogg()
    up, keys = await owner.client.upload(
        io.BytesIO(clip),
        content_type="application/octet-stream",
        filename="Voice message.ogg",
        encrypt=True,
        filesize=len(clip),
    )
    assert isinstance(up, UploadResponse) and keys is not None
    await owner.say(
        driver.dms[OWNER],
        "Voice message.ogg",
        msgtype="m.audio",
        content={
            "file": {**keys, "url": up.content_uri},
            "info": {"mimetype": "audio/ogg", "size": len(clip)},
            "org.matrix.msc3245.voice": {},
        },
    )
    [(kind, data, content)] = await _files(driver, 1)
    messages = fake_model.requests[-1]["messages"]
    asked = str([m for m in messages if m["role"] == "user"][-1]["content"])
    assert all(word in asked for word in KEY_WORDS), asked
    assert kind == "audio" and "org.matrix.msc3245.voice" in content
    assert data.startswith(b"OggS") and len(data) > 2000
    texts = [r.text for r in driver.replies()]
    assert any(all(word in t for word in KEY_WORDS) for t in texts), texts
