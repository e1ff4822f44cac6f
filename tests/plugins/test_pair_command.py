"""`/pair` through the real router and gate: the web chat's owner acts on every channel."""

from __future__ import annotations

from core.api.testing import RecordingAdapter
from core.features.access.pairing import APPROVED_TEXT
from plugins.chat_commands.pair import PAIR_USAGE
from tests.conftest import RuntimeFactory


async def test_web_chat_owner_pairs_a_telegram_stranger(make_runtime: RuntimeFactory) -> None:
    web, tg = RecordingAdapter("webchat"), RecordingAdapter("telegram")
    rt = await make_runtime({"session": {"dmScope": "per-channel-peer"}}, adapters=[web, tg])

    async def owner(line: str) -> str:
        before = len(web.sent)
        await web.say(line, chat_id="owner", sender="owner")
        assert len(web.sent) == before + 1
        return web.sent[-1][1]

    await tg.say("hello there", chat_id="7", sender="7")
    code = tg.texts()[-1].rsplit(" ", 1)[1]
    listing = await owner("/pair list")
    assert listing.startswith("⚙️ Pending pairing requests: 1\n")
    assert f"{code} · telegram/default · 7 · 'hello there'" in listing
    assert await owner("/pair approve") == PAIR_USAGE
    assert await owner("/pair frobnicate X") == PAIR_USAGE
    assert await owner(f"/pair approve {code}") == "⚙️ Approved 7 on telegram."
    assert tg.texts()[-1] == APPROVED_TEXT
    assert "Approved: 7 on telegram" in await owner("/pair")
    assert await owner("/pair revoke 7") == "⚙️ Revoked 7 on telegram."
    assert await owner("/pair revoke 7") == "⚙️ 7 is not approved on any channel."
    assert await rt.access.pairing.approved() == []
    # the web chat itself is never refused
    assert rt.access.refused("webchat", "default") == 0
