"""The Matrix channel beyond the conformance suite, against the session's real Synapse (D173):
encryption on the wire, the device kept private and reused, login by token, a refused
password, and an encrypted attachment in."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from nio import UploadResponse

from adapters.matrix.adapter import MatrixAdapter
from core.api.channels import ChannelEnv, ChannelUnavailable
from core.model.records import SessionQuery
from tests.adapters.conformance.driver_matrix import MatrixDriver
from tests.adapters.conformance.drivers import OWNER
from tests.adapters.matrix.wire import sent_to
from tests.conftest import RuntimeFactory
from tests.fakes.matrix_proxy import MatrixProxy
from tests.polling import eventually


@pytest.fixture
async def driver(fake_matrix: MatrixProxy, tmp_path: Path) -> AsyncIterator[MatrixDriver]:
    drv = MatrixDriver(fake_matrix, tmp_path / "people")
    yield drv
    await drv.close()


async def test_a_dm_is_encrypted_on_the_wire_and_a_group_is_not(
    driver: MatrixDriver, make_runtime: RuntimeFactory
) -> None:
    await driver.start(make_runtime, {"channels": {"matrix": {"streaming": "off"}}})
    await driver.dm("secret hello")
    await driver.group("open hello", mentioned=True)
    replies = await driver.wait_replies(2)
    assert sorted(r.text for r in replies) == sorted(
        ["echo: secret hello", f"echo: {driver.bot.localpart}: open hello"]
    )
    [dm] = sent_to(driver.proxy, driver.dms[OWNER])
    [group] = sent_to(driver.proxy, driver.group_id)
    assert dm.get("algorithm") == "m.megolm.v1.aes-sha2" and "ciphertext" in dm
    assert "body" not in dm  # nothing of the reply in the clear
    assert str(group.get("body", "")).startswith("echo: ")
    assert group.get("format") == "org.matrix.custom.html"


async def test_the_device_is_private_and_reused_after_a_restart(
    driver: MatrixDriver, make_runtime: RuntimeFactory
) -> None:
    rt = await driver.start(make_runtime)
    device = driver.adapters[0].status().extra["deviceId"]
    folder = rt.state_dir / "matrix" / "default"
    session = json.loads((folder / "session.json").read_text())
    assert (session["user_id"], session["device_id"]) == (driver.bot.user_id, device)
    await driver.dm("before")
    await driver.wait_replies(1)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.iterdir() if p.is_file()]
    assert any(p.suffix == ".db" for p in files)  # nio's store: the Olm account, Megolm sessions
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), [
        (p.name, oct(p.stat().st_mode)) for p in files
    ]
    rt = await driver.restart(make_runtime)
    assert driver.adapters[0].status().extra["deviceId"] == device  # no new login
    logins = [c for c in driver.proxy.calls if c.method == "login"]
    assert len(logins) == 1
    await driver.dm("after")  # the encrypted DM still works both ways
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["echo: before", "echo: after"]


async def test_login_by_access_token(driver: MatrixDriver, make_runtime: RuntimeFactory) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{driver.server.base_url}/_matrix/client/v3/login",
            json={
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": driver.bot.localpart},
                "password": driver.bot.password,
            },
        ) as resp:
            login = await resp.json()
    token = {"matrix": {"password": None, "accessToken": login["access_token"]}}
    await driver.start(make_runtime, {"channels": token})
    assert driver.adapters[0].status().extra["deviceId"] == login["device_id"]  # by whoami
    await driver.dm("token?")
    [reply] = await driver.wait_replies(1)
    assert reply.text == "echo: token?"


async def test_a_refused_password_fails_the_channel(
    driver: MatrixDriver, make_runtime: RuntimeFactory
) -> None:
    rt = await make_runtime(
        {"channels": {"matrix": {**driver.config()["channels"]["matrix"], "password": "wrong"}}}
    )
    adapter = MatrixAdapter(rt.config.channels.matrix, "default", ChannelEnv(rt.state_dir))
    with pytest.raises(ChannelUnavailable, match="rejected"):
        await rt.add_adapter(adapter)
    status = adapter.status()
    assert status.state == "failed" and "M_FORBIDDEN" in (status.detail or "")
    await adapter.stop()


async def test_an_encrypted_image_arrives_and_is_fetched_decrypted(
    driver: MatrixDriver, make_runtime: RuntimeFactory
) -> None:
    rt = await driver.start(make_runtime)
    await driver.dm("first")
    await driver.wait_replies(1)
    owner = await driver.person(OWNER)
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    up, keys = await owner.client.upload(
        io.BytesIO(image),
        content_type="image/png",
        filename="cat.png",
        encrypt=True,
        filesize=len(image),
    )
    assert isinstance(up, UploadResponse) and keys is not None
    await owner.say(
        driver.dms[OWNER],
        "cat.png",
        msgtype="m.image",
        content={
            "file": {**keys, "url": up.content_uri},
            "info": {"mimetype": "image/png", "size": len(image)},
        },
    )

    async def stored() -> dict[str, object] | None:
        for entry in await rt.store.list_sessions(SessionQuery()):
            for m in await rt.store.history(entry.session_id):
                parts = [p for p in m.content if p.get("type") == "attachment"]
                if parts:
                    return parts[0]
        return None

    part = await eventually(stored)
    assert (part["kind"], part["name"], part["mime"], part["size"]) == (
        "image",
        "cat.png",
        "image/png",
        len(image),
    )
    from core.model.attachments import Attachment

    fetched = await driver.adapters[0].fetch_attachment(Attachment.from_part(part))
    assert fetched == image


def test_an_announce_target_names_the_room_by_the_keys_kind() -> None:
    """A group session's announce target is ``group:<room>`` (R3.6): the room is what is left."""
    from adapters.matrix.send import room_id

    assert room_id("group:!abc:example.org") == "!abc:example.org"
    assert room_id("channel:!abc:example.org") == "!abc:example.org"
    assert room_id("!abc:example.org") == "!abc:example.org"
