"""A flood of strangers and groups cannot lock pairing or grow the store (D81, D62), through the
router on SQLite and PostgreSQL: hundreds of unapproved groups mentioning the bot and strangers
writing to it create no session, the pending requests of the account stay at the cap, and the
next newcomer after the flood still gets a code."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from sqlalchemy import func, select

from core.api.testing import RecordingAdapter
from core.model.errors import ChannelUnavailable
from core.model.records import SessionQuery
from core.runtime import Runtime
from core.store.pairing_tables import PairingRequestRow
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text

TG = {"botToken": "1:x", "owners": ["10"], "streaming": "off"}  # dmPolicy, groupPolicy: pairing
GROUPS, STRANGERS = 120, 60
CODE = re.compile(r"[A-HJ-NP-Z2-9]{8}")


async def _requests(rt: Runtime) -> int:
    """Every pairing row kept, pending or not: what the flood could grow."""
    table = PairingRequestRow.__table__  # type: ignore[attr-defined]
    q = select(func.count()).select_from(table)
    return int(await rt.store.read(lambda c: c.execute(q).scalar_one()))


async def test_a_flood_of_groups_and_strangers_creates_no_session_and_stays_bounded(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    tg = RecordingAdapter("telegram")
    rt = await make_runtime({**db, "channels": {"telegram": TG}}, adapters=[tg])
    for n in range(GROUPS):
        await tg.inject(
            tg.message(
                f"@bot hi from group {n}",
                chat_id=f"-100{n}",
                sender_id=f"3{n}",
                chat_type="group",
                mentioned=True,
            )
        )
    for n in range(STRANGERS):
        await tg.say(f"hello {n}", chat_id=f"5{n}", sender=f"5{n}")
    # each group and each stranger got its own code, none was kept from one by the flood
    assert len(tg.sent) == GROUPS + STRANGERS
    assert all(CODE.search(text) for _, text in tg.sent)
    assert await rt.store.list_sessions(SessionQuery(include_reserved=True)) == []
    assert len(await rt.access.pairing.pending()) == 50
    assert await _requests(rt) == 50
    # the newcomer after the flood: a code, and an owner can approve them from it
    await tg.say("let me in", chat_id="999", sender="999")
    [(where, text)] = tg.sent[-1:]
    match = CODE.search(text)
    assert where.to == "999" and match is not None, text
    pending = await rt.access.pairing.pending()
    assert len(pending) == 50 and pending[-1].user_id == "999"
    assert pending[0].user_id == f"5{STRANGERS - 49}"  # the oldest ones went
    await tg.say(f"/pair approve {match.group(0)}", chat_id="10", sender="10")
    await tg.wait_for("⚙️ Approved 999 on telegram.")
    before = len(tg.sent)
    await tg.say("thanks", chat_id="999", sender="999")
    await tg.wait_for("", before + 1, timeout=15)  # answered by the agent
    assert await rt.store.get_session("agent:main:telegram:dm:999") is not None


async def test_a_pairing_code_that_meets_a_fault_does_not_hold_the_next_sender(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D104: the gate retries a stranger's code after a 5xx in the background; the adapter's
    next inbound message (the owner's) is not held behind those retries, and the code still
    arrives once the platform recovers."""
    tg = RecordingAdapter("telegram")
    rt = await make_runtime({"channels": {"telegram": TG}}, adapters=[tg])
    rt.pairing.inline_wait = 0.05
    recovered = asyncio.Event()

    async def backoff(_seconds: float) -> None:  # the retry's wait lasts until the test says
        await recovered.wait()

    rt.gate.retry.sleep = backoff
    tg.failures = [ChannelUnavailable("HTTP 502")]
    fake_model.script(text("hello owner"))
    await asyncio.wait_for(tg.say("let me in", chat_id="55", sender="55"), 5)
    assert tg.sent == []  # the code is waiting out its backoff
    await asyncio.wait_for(tg.say("are you there?", chat_id="10", sender="10"), 5)
    await tg.wait_for("hello owner", timeout=30)  # the owner was answered meanwhile
    recovered.set()
    [(where, code_text)] = await tg.wait_for("🔐", timeout=30)
    assert where.to == "55" and CODE.search(code_text)
