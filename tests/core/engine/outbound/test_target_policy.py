"""The send policy of the chat a delivery lands in (D140): a muted target stays silent whoever
speaks into it (cron and hook turns, announces, tool sends, approval requests, notices, media),
by `/send off` or by a configured deny rule, and an allowed or unrelated chat is untouched. On
SQLite and PostgreSQL: the chat's sessions are looked up in the store."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.engine.outbound.delivery import DeliveryKind, Outbound
from core.model.delivery_context import DeliveryContext
from core.model.media import MediaItem
from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge

GROUP = "agent:main:testchat:group:g1"
TOPIC = "agent:main:testchat:group:g2:topic:7"
GROUP_CHAT = DeliveryContext(channel="testchat", to="g1", account_id="default")
KINDS: tuple[DeliveryKind, ...] = (
    "reply",
    "announce",
    "tool_send",
    "command_reply",
    "notice",
    "cron",
    "hook",
    "approval",
)
PNG = MediaItem(b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png", "chart.png")


async def _runtime(
    make_runtime: RuntimeFactory, db: dict[str, Any], extra: dict[str, Any] | None = None
) -> tuple[Runtime, RecordingAdapter]:
    adapter = RecordingAdapter()
    rt = await make_runtime(deep_merge(db, extra or {}), adapters=[adapter])
    routes = {
        GROUP: ("group", "g1", None),
        TOPIC: ("group", "g2", "7"),
        "agent:main:testchat:dm:owner": ("direct", "owner", None),
        "agent:main:cron:job1": (None, "g1", None),  # a cron job's route points at the group
    }
    for key, (chat_type, to, thread) in routes.items():
        await rt.services.ensure_session(key, chat_type=chat_type)
        await rt.store.update_session(
            key,
            last_channel="testchat",
            last_to=to,
            last_account_id="default",
            last_thread_id=thread,
        )
    return rt, adapter


@pytest.mark.parametrize("kind", KINDS)
async def test_a_muted_group_stays_silent_for_every_kind_from_another_session(
    db: dict[str, Any], make_runtime: RuntimeFactory, kind: DeliveryKind
) -> None:
    rt, adapter = await _runtime(make_runtime, db)
    await rt.store.update_session(GROUP, send_policy="deny")  # the owner's `/send off`
    for source in ("agent:main:cron:job1", "agent:main:testchat:dm:owner", None):
        result = await rt.gate.deliver(Outbound("hello", kind, source, target=GROUP_CHAT))
        assert result.outcome == "suppressed_by_policy", (source, result)
        assert result.reason == f"target {GROUP}: session override"
    assert adapter.sent == []
    rows = await rt.store.list_deliveries(outcome="suppressed_by_policy")
    assert len(rows) == 3 and all(r.to == "g1" for r in rows)


async def test_a_config_deny_rule_on_groups_holds_against_a_cron_session(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    rule = {"action": "deny", "match": {"channel": "testchat", "chatType": "group"}}
    rt, adapter = await _runtime(make_runtime, db, {"session": {"sendPolicy": {"rules": [rule]}}})
    result = await rt.gate.deliver(
        Outbound("spam", "cron", "agent:main:cron:job1", target=GROUP_CHAT)
    )
    assert result.outcome == "suppressed_by_policy"
    assert result.reason == f"target {GROUP}: rule 1: channel=testchat, chatType=group"
    dm = DeliveryContext(channel="testchat", to="owner", account_id="default")
    assert (
        await rt.gate.deliver(Outbound("hi", "cron", "agent:main:cron:job1", target=dm))
    ).delivered
    assert [(t.to, text) for t, text in adapter.sent] == [("owner", "hi")]


async def test_a_chat_nobody_talked_in_obeys_the_configured_rules(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    rule = {"action": "deny", "match": {"channel": "testchat"}}
    rt, adapter = await _runtime(
        make_runtime, db, {"session": {"sendPolicy": {"default": "allow", "rules": [rule]}}}
    )
    await rt.store.update_session("agent:main:cron:job1", send_policy="allow")
    unknown = DeliveryContext(channel="testchat", to="never-seen")
    result = await rt.gate.deliver(Outbound("hi", "cron", "agent:main:cron:job1", target=unknown))
    assert result.outcome == "suppressed_by_policy"
    assert result.reason == "target testchat:never-seen: rule 1: channel=testchat"
    assert adapter.sent == []


async def test_allowed_targets_and_other_topics_still_get_their_deliveries(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    rt, adapter = await _runtime(make_runtime, db)
    await rt.store.update_session(TOPIC, send_policy="deny")
    other_topic = DeliveryContext(channel="testchat", to="g2", account_id="default", thread_id=8)
    muted_topic = DeliveryContext(channel="testchat", to="g2", account_id="default", thread_id=7)
    sent = await rt.gate.deliver(Outbound("a", "cron", "agent:main:cron:job1", target=other_topic))
    held = await rt.gate.deliver(Outbound("b", "cron", "agent:main:cron:job1", target=muted_topic))
    plain = await rt.gate.deliver(Outbound("c", "announce", None, target=GROUP_CHAT))
    assert sent.delivered and plain.delivered
    assert (
        held.outcome == "suppressed_by_policy"
        and held.reason == f"target {TOPIC}: session override"
    )
    assert [text for _, text in adapter.sent] == ["a", "c"]


async def test_a_muted_cron_session_is_not_the_chat_it_points_at(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    """A cron session's route merely points at the group: muting the cron session mutes its
    own deliveries (as before) but never the group's replies."""
    rt, adapter = await _runtime(make_runtime, db)
    await rt.store.update_session("agent:main:cron:job1", send_policy="deny")
    assert (await rt.gate.deliver(Outbound("r", "reply", GROUP, target=GROUP_CHAT))).delivered
    held = await rt.gate.deliver(Outbound("x", "cron", "agent:main:cron:job1", target=GROUP_CHAT))
    assert held.outcome == "suppressed_by_policy" and held.reason == "session override"
    assert [text for _, text in adapter.sent] == ["r"]


async def test_media_into_a_muted_chat_is_neither_sent_nor_stored(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    """A tool's chart or a voice note rides in its delivery (D78): the target's deny holds it
    before any item is stored or sent."""
    rt, adapter = await _runtime(make_runtime, db)
    await rt.store.update_session(GROUP, send_policy="deny")
    held = await rt.gate.deliver(
        Outbound("here", "cron", "agent:main:cron:job1", GROUP_CHAT, run_id="r1", media=[PNG])
    )
    assert held.outcome == "suppressed_by_policy"
    assert held.reason == f"target {GROUP}: session override"
    assert adapter.sent == [] and adapter.media == []
    assert await rt.store.media_of_run("r1") == []
    [row] = await rt.store.list_deliveries(outcome="suppressed_by_policy")
    assert row.text == "here\n[image: chart.png, 72 B]"
    dm = DeliveryContext(channel="testchat", to="owner", account_id="default")
    sent = await rt.gate.deliver(
        Outbound("here", "cron", "agent:main:cron:job1", dm, run_id="r2", media=[PNG])
    )
    assert sent.delivered and [m.name for _, m in adapter.media] == ["chart.png"]
    assert [m.name for m in await rt.store.media_of_run("r2")] == ["chart.png"]


async def test_a_muted_group_stays_silent_after_many_hook_turns_pointed_at_it(
    db: dict[str, Any], make_runtime: RuntimeFactory
) -> None:
    """Every webhook call without a `sessionKey` runs in a new `hook:<uuid>` session whose route
    is the mapping's `deliver` chat; 100 of them (keys sorting before the group's) must not
    hide the group's own `/send off` from the lookup of the chat's sessions."""
    rt, adapter = await _runtime(make_runtime, db)
    await rt.store.update_session(GROUP, send_policy="deny")
    for i in range(100):
        key = f"agent:main:hook:{i:04d}"
        await rt.services.ensure_session(key)
        await rt.store.update_session(
            key, last_channel="testchat", last_to="g1", last_account_id="default"
        )
    result = await rt.gate.deliver(Outbound("hi", "hook", "agent:main:hook:0099", GROUP_CHAT))
    assert result.outcome == "suppressed_by_policy", result
    assert adapter.sent == []
