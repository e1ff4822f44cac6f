"""A chat muted by `/send off` stays muted however a delivery names it (D179): the Telegram
adapter sends to `tg:-100123`, `group:-100123` or ` -100123 ` as to `-100123`, so the policy of
the chat the delivery lands in (D140) is found by the id its updates carry. On SQLite and
PostgreSQL: the muted chat is looked up in the store."""

from __future__ import annotations

from typing import Any

import pytest

from core.engine.outbound.delivery import Outbound
from core.model.delivery_context import DeliveryContext
from tests.adapters.telegram.runtime import TelegramRuntime
from tests.fakes.telegram import FakeTelegram

GROUP = "agent:main:telegram:group:-100123"


@pytest.mark.parametrize(
    "to",
    ["-100123", " -100123 ", "group:-100123", "tg:-100123", "telegram:group:-100123"],
)
async def test_a_muted_group_stays_silent_whatever_form_names_it(
    db: dict[str, Any], telegram_rt: TelegramRuntime, fake_telegram: FakeTelegram, to: str
) -> None:
    rt = await telegram_rt(db)
    await rt.services.ensure_session(GROUP, chat_type="group")
    await rt.store.update_session(
        GROUP, last_channel="telegram", last_to="-100123", send_policy="deny"
    )
    await rt.services.ensure_session("agent:main:cron:job1")
    target = DeliveryContext(channel="telegram", to=to)
    result = await rt.gate.deliver(Outbound("spam", "cron", "agent:main:cron:job1", target))
    assert result.outcome == "suppressed_by_policy", result
    assert result.reason == f"target {GROUP}: session override"
    assert fake_telegram.visible() == []
