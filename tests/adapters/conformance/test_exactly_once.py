"""Exactly once, per platform (decision D16): a redelivered message is one stored user message,
one run and one reply — delivered again at once, after the reply, or after a gateway restart —
and an edited message starts no turn.

The redelivery is what each platform really does: Telegram returns an update whose offset was
never confirmed, Slack retries an envelope (same ``event_id``, ``retry_attempt`` 1), Discord
replays a MESSAGE_CREATE after a RESUME, the web-chat page resends a frame with its
``clientId``.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.runtime import Runtime
from core.store.tables import RunRow
from tests.adapters.conformance.checks import require, user_messages
from tests.adapters.conformance.drivers import Driver
from tests.conftest import RuntimeFactory
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def run_count(rt: Runtime) -> int:
    q = select(func.count()).select_from(RunRow.__table__)  # type: ignore[attr-defined]
    return int(await rt.store.read(lambda c: c.execute(q).scalar_one()))


async def dropped(rt: Runtime, driver: Driver, count: int) -> None:
    async def check() -> bool:
        return rt.router.duplicates.count(driver.channel, "default") == count

    await eventually(check)


@pytest.mark.parametrize("when", ["immediately", "after_reply", "after_restart"])
async def test_redelivered_message_is_one_turn(
    driver: Driver, make_runtime: RuntimeFactory, when: str
) -> None:
    rt = await driver.start(make_runtime)
    await driver.dm("only once")
    if when == "immediately":
        await driver.redeliver_last()
    [first] = await driver.wait_replies(1)
    assert first.text == "echo: only once"
    if when == "after_reply":
        await driver.redeliver_last()
    if when == "after_restart":
        rt = await driver.restart(make_runtime)
        await driver.redeliver_last()
    await dropped(rt, driver, 1)
    await driver.dm("and the next")  # a barrier: it is answered after the redelivery
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["echo: only once", "echo: and the next"]
    assert [m.plain_text() for _, m in await user_messages(rt)] == ["only once", "and the next"]
    assert await run_count(rt) == 2
    assert rt.router.duplicates.count(driver.channel, "default") == 1


async def test_edited_message_starts_no_turn(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "edit")
    rt = await driver.start(make_runtime)
    await driver.dm("first words")
    await driver.wait_replies(1)
    await driver.edit_last("second thoughts")
    await driver.dm("after the edit")  # a barrier: handled after the edit event
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["echo: first words", "echo: after the edit"]
    assert [m.plain_text() for _, m in await user_messages(rt)] == ["first words", "after the edit"]
    assert await run_count(rt) == 2


async def test_edit_is_a_turn_when_configured(driver: Driver, make_runtime: RuntimeFactory) -> None:
    require(driver, "edit")
    rt = await driver.start(make_runtime, {"channels": {driver.channel: {"editsStartTurn": True}}})
    await driver.dm("first words")
    await driver.wait_replies(1)
    await driver.edit_last("second thoughts")
    replies = await driver.wait_replies(2)
    assert [r.text for r in replies] == ["echo: first words", "echo: second thoughts"]
    assert [m.plain_text() for _, m in await user_messages(rt)] == [
        "first words",
        "second thoughts",
    ]
